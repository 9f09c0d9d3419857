/* cli_perf.c - `fragbench perf` (make perf): how fast the suite itself is, on sim.
 *  - the replay engine's events/s with raw on a no-op device (no cost model, no checks)
 *  - per strategy: ns per alloc/free call (mean, p50, p99) replaying each bundled trace,
 *    a train_loop and a 10 M-event synthetic stream
 *  - per-event cost at 1 M and 10 M events (does cost grow with length?)
 *  - pickle reading speed (MB/s of uncompressed pickle)
 *  - host memory per live block, and the peak RSS
 * Every timed input runs PERF_REPS times (default 3) and the fastest run counts (the
 * machine is shared: noise only ever adds time); its row is the one written. A table on
 * stdout ending in one PASS/MISS line per speed target (docs/performance.md); the rows in the run CSV
 * format to --out (make perf: results/perf-<stamp>.csv). */
#include "cli.h"
#include "options.h"
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include "advise.h"
#include "livemap.h"
#include "timing.h"

static uint64_t events_env(const char *name, uint64_t def) {
  const char *v = getenv(name);
  uint64_t x;
  return v && !parse_u64(v, &x) && x ? x : def;
}

static int run_one(const char *workload, const char *trace, const char *alloc, int noop, struct run_result *r) {
  struct run_spec s = {.workload = workload, .trace = trace, .trace_device = -1, .world = 1, .seed = 1,
                       .allocator = alloc, .device = {.kind = "sim", .noop = noop}, .quiet = 1};
  run_result_init(r);
  return replay_run(&s, r);
}

static int run_ok(const struct run_result *r) { return !strncmp(r->status, "ok", 2) && !isnan(r->ns_per_op); }

/* The fastest of `reps` runs of one input into *best (a failed run is kept only if no
 * run succeeds). Every run makes the same decisions; only host time differs. */
static void best_of(int reps, const char *workload, const char *trace, const char *alloc, int noop, struct run_result *best) {
  struct run_result r;
  run_one(workload, trace, alloc, noop, best);
  for (int i = 1; i < reps && run_ok(best); i++) {
    run_one(workload, trace, alloc, noop, &r);
    if (run_ok(&r) && r.ns_per_op < best->ns_per_op) *best = r;
  }
}

static double engine_rate(const struct run_result *r) {
  double ns = r->ns_per_op * (double)(r->allocs + r->frees);
  return ns > 0 ? (double)r->events / ns * 1e9 : NAN;
}

/* Peak RSS of a child that replays `live` allocations and holds them all (KiB): with
 * live=2N the random stream only allocates until N are live, so events=N ends with
 * exactly N live blocks (their frees come at teardown). */
static long rss_with_live(const char *alloc, uint64_t live) {
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    char wl[128];
    snprintf(wl, sizeof wl, "random:events=%llu,live=%llu,min=512,max=4096", (unsigned long long)live,
             (unsigned long long)(live * 2));
    struct run_result r;
    run_one(wl, NULL, alloc, 1, &r);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long kb = ru.ru_maxrss;
    if (write(fd[1], &kb, sizeof kb) != sizeof kb) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  long kb = -1;
  if (read(fd[0], &kb, sizeof kb) != sizeof kb) kb = -1;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  return kb;
}

/* Uncompressed pickle parsing speed: decompress a bundled snapshot to a temp file, then
 * time reading every event of it. */
static double pickle_mb_per_s(const char *gz, uint64_t *bytes_out) {
  char tmp[] = "/tmp/fragbench-perf-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) return NAN;
  gzFile in = gzopen(gz, "rb");
  FILE *out = fdopen(fd, "wb");
  char buf[1 << 16];
  int n;
  uint64_t bytes = 0;
  while (in && (n = gzread(in, buf, sizeof buf)) > 0) { fwrite(buf, 1, (size_t)n, out); bytes += (uint64_t)n; }
  if (in) gzclose(in);
  fclose(out);
  double best = NAN;
  for (int rep = 0; rep < 3; rep++) {
    char err[FB_ERRLEN];
    const struct workload_ops *ops = trace_detect(tmp, err);
    struct workload w;
    struct workload_ctx ctx = {.world = 1, .path = tmp, .trace_device = -1};
    uint64_t t0 = now_ns();
    if (!ops || workload_open(&w, ops, NULL, &ctx, SIM_TOTAL_DEFAULT, err)) break;
    struct event ev;
    while (workload_next(&w, &ev, err) == 1) {}
    workload_close(&w);
    double mbs = (double)bytes / 1e6 / ((double)(now_ns() - t0) / 1e9);
    if (isnan(best) || mbs > best) best = mbs;
  }
  unlink(tmp);
  *bytes_out = bytes;
  return best;
}

static void row(struct output *out, struct run_result *r, const char *label) {
  if (label) snprintf(r->workload, sizeof r->workload, "%s", label);
  output_row(out, r);
  if (strncmp(r->status, "ok", 2)) {
    printf("  %-34.34s %-11s %s\n", r->workload, r->allocator, r->status);
    return;
  }
  printf("  %-34.34s %-11s %12llu %9.1f %7llu %7llu\n", r->workload, r->allocator, (unsigned long long)r->events,
         r->ns_per_op, (unsigned long long)r->p50_ns, (unsigned long long)r->p99_ns);
}

static void header(int reps) {
  char best[32];
  snprintf(best, sizeof best, "(best of %d)", reps);
  printf("  %-34s %-11s %12s %9s %7s %7s  %s\n", "input", "allocator", "events", "ns/op", "p50", "p99", reps > 1 ? best : "");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* the verdicts, printed together at the end */
struct verdicts { int pass, miss; };

static void verdict(struct verdicts *v, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void verdict(struct verdicts *v, int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("  %-4s  ", ok ? "PASS" : "MISS");
  vprintf(fmt, ap);
  putchar('\n');
  va_end(ap);
  if (ok) v->pass++;
  else v->miss++;
}

#define MAX_INPUTS 64

struct strategy_perf {
  const char *name;
  double med, worst;   /* ns/op across inputs: median (upper), slowest; NaN if none ran */
};

/* the flags it takes (flags.def) */
static const char *const perf_opts[] = {
  "--out",
  NULL,
};

const struct cmd_def cmd_perf_def = {
  "perf", "[--out FILE.csv]   the suite's own speed on sim (make perf)",
  "A table on stdout, ending in one PASS/MISS line per speed target (docs/performance.md);\n"
  "--out FILE.csv: the rows in the run CSV format too (make perf: results/perf-<stamp>.csv).\n", perf_opts, cmd_perf, NULL, NULL,
};

int cmd_perf(struct cli_opts *o) {
  uint64_t big = events_env("PERF_EVENTS", 10000000);
  int reps = (int)events_env("PERF_REPS", 3);
  struct output out;
  if (output_open(&out, o->out ? o->out : "/dev/null")) return 2;
  out.quiet = 1;
  char wl[160];
  struct run_result r;

  printf("replay engine (raw on a no-op sim device):\n");
  header(reps);
  snprintf(wl, sizeof wl, "random:events=%llu,live=1000", (unsigned long long)big);
  best_of(reps, wl, NULL, "raw", 1, &r);
  double rate = engine_rate(&r);
  row(&out, &r, "engine:random-noop");
  printf("  engine: %.1f M events/s (target >= 20)\n\n", rate / 1e6);

  printf("strategies (sim, modeled driver time excluded):\n");
  header(reps);
  glob_t g;
  memset(&g, 0, sizeof g);
  glob("tests/data/*.pickle.gz", 0, NULL, &g);
  glob("tests/data/*.pickle", GLOB_APPEND, NULL, &g);
  const char *allocs[CLI_MAX];
  int na = 0;
  if (o->nallocators) for (int i = 0; i < o->nallocators; i++) allocs[na++] = o->allocators[i];
  else for (int i = 0; allocator_table[i] && na < CLI_MAX; i++)   /* the online strategies sim offers */
    if (!(allocator_table[i]->flags & (ALLOC_NEEDS_POOL | ALLOC_OFFLINE))) allocs[na++] = allocator_table[i]->name;
  struct strategy_perf sp[CLI_MAX];
  for (int a = 0; a < na; a++) {
    double ns[MAX_INPUTS];
    int n = 0;
    for (size_t t = 0; t <= g.gl_pathc + 1; t++) {   /* each trace, then train_loop, then the long stream */
      if (t < g.gl_pathc) best_of(reps, NULL, g.gl_pathv[t], allocs[a], 0, &r);
      else best_of(reps, t == g.gl_pathc ? "train_loop:iters=50" : wl, NULL, allocs[a], 0, &r);
      row(&out, &r, NULL);
      if (run_ok(&r) && n < MAX_INPUTS) ns[n++] = r.ns_per_op;
    }
    qsort(ns, (size_t)n, sizeof ns[0], cmp_double);
    sp[a].name = allocs[a];
    sp[a].med = n ? ns[n / 2] : NAN;
    sp[a].worst = n ? ns[n - 1] : NAN;
    if (n) printf("  %-34s %-11s median ns/op across inputs: %.1f (slowest %.1f)\n", "", allocs[a], sp[a].med, sp[a].worst);
  }
  globfree(&g);

  printf("\nper-event cost growth (caching, random stream):\n");
  header(reps);
  double per[2];
  uint64_t sizes[2] = {big / 10, big};
  for (int i = 0; i < 2; i++) {
    snprintf(wl, sizeof wl, "random:events=%llu,live=1000", (unsigned long long)sizes[i]);
    best_of(reps, wl, NULL, "caching", 0, &r);
    per[i] = r.ns_per_op;
    row(&out, &r, NULL);
  }
  double growth = (per[1] / per[0] - 1) * 100;
  printf("  %llu events: %.1f ns/op, %llu events: %.1f ns/op: %+.1f%% (target within 10%%)\n\n",
         (unsigned long long)sizes[0], per[0], (unsigned long long)sizes[1], per[1], growth);

  uint64_t bytes = 0;
  double mbs = pickle_mb_per_s("tests/data/gpt_train.pickle.gz", &bytes);
  printf("pickle reading: %.1f MB/s over %.1f MB of uncompressed pickle (target >= 50)\n", mbs, (double)bytes / 1e6);

  /* host memory per live block: caching, and raw (no block struct of its own: the
   * harness's share); the livemap's part follows from its growth rule */
  const uint64_t small = 1000, large = 1000000;
  long base = rss_with_live("caching", small), big_rss = rss_with_live("caching", large);
  long raw_base = rss_with_live("raw", small), raw_big = rss_with_live("raw", large);
  double per_block = base > 0 && big_rss > 0 ? (double)(big_rss - base) * 1024.0 / (double)(large - small) : NAN;
  double raw_per_block = raw_base > 0 && raw_big > 0 ? (double)(raw_big - raw_base) * 1024.0 / (double)(large - small) : NAN;
  uint64_t cap = 8192;   /* replay's livemap_init(4096), grown at 3/4 */
  while (large >= cap / 4 * 3) cap *= 2;
  double map_per_block = (double)(cap * sizeof(struct live_entry)) / (double)large;
  printf("host memory per live block at %llu live (target <= 64 + constant):\n", (unsigned long long)large);
  printf("  caching %.1f bytes; raw %.1f bytes = the harness: livemap %.1f (%zu-byte entries at load %.2f)\n"
         "  + the random workload's live-id array 8 + malloc/page rounding; caching's own blocks: %.1f\n",
         per_block, raw_per_block, map_per_block, sizeof(struct live_entry), (double)large / (double)cap,
         per_block - raw_per_block);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("peak host RSS of this run: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
  output_finish(&out, 1);

  /* advise with its variations (every core) on the bundled 50k-event snapshot */
  struct advise_opts ao = {.trace = "tests/data/resnet_varsize.pickle.gz", .trace_device = -1};
  ao.device.kind = "sim";
  struct advise_result ar;
  char aerr[FB_ERRLEN];
  int arc = advise_run(&ao, &ar, aerr);
  double advise_s = arc ? NAN : ar.elapsed_s;
  if (arc) printf("advise: %s\n", aerr);
  else printf("advise on resnet_varsize.pickle.gz (%llu events): %d settings x %d variations in %.1f s, %d at once (target <= 30)\n",
              (unsigned long long)ar.c[0].r.events, ar.n, ar.nvariations, advise_s, ar.threads);
  advise_free(&ar);

  /* the speed targets; "check" is the bar that still passes on this noisy shared machine */
  struct verdicts v = {0, 0};
  printf("\ntargets (best of %d):\n", reps);
  verdict(&v, rate >= 20e6, "replay engine %.1f M events/s (target >= 20)", rate / 1e6);
  for (int a = 0; a < na; a++) {
    int caching = !strcmp(sp[a].name, "caching");
    int async = !strcmp(sp[a].name, "async");   /* the pool model on sim */
    double target = caching ? 100 : async ? 150 : 250, check = caching ? 150 : async ? 200 : 300;
    verdict(&v, sp[a].med <= target, "%-10s median %.1f ns/op across inputs (target <= %.0f; check <= %.0f: %s)", sp[a].name,
            sp[a].med, target, check, sp[a].med <= check ? "met" : "not met");
  }
  verdict(&v, fabs(growth) <= 10, "per-event cost %llu -> %llu events %+.1f%% (target within 10%%)",
          (unsigned long long)sizes[0], (unsigned long long)sizes[1], growth);
  verdict(&v, mbs >= 50, "pickle reading %.1f MB/s (target >= 50)", mbs);
  verdict(&v, per_block <= 64, "host memory %.1f bytes per live block with caching (raw: %.1f; target <= 64 + constant)",
          per_block, raw_per_block);
  verdict(&v, advise_s <= 30, "advise with variations on a 50k-event snapshot %.1f s (target <= 30)", advise_s);
  printf("perf: %d targets met, %d missed\n", v.pass, v.miss);
  return 0;
}
