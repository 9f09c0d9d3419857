/* trace_bench.c - reading speed of the snapshot reader: MB/s of uncompressed pickle for
 * the whole job a replay asks of it (open with its pre-scan pass, then every event), on
 * the bundled snapshots and on a large synthetic snapshot with stack frames; and how much
 * the process grows while reading it (the reader streams: it should not grow with the file).
 *
 * `fragbench readspeed` (its options: harness/cli/cli_readspeed.c) calls trace_bench(),
 * trace_bench.h. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "pickle.h"
#include "trace_bench.h"

extern const struct workload_ops pytorch_snapshot_workload;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long max_rss_kb(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

static uint64_t uncompressed_bytes(const char *path) {
  gzFile f = gzopen(path, "rb");
  if (!f) return 0;
  char buf[1 << 16];
  uint64_t n = 0;
  int got;
  while ((got = gzread(f, buf, sizeof buf)) > 0) n += (uint64_t)got;
  gzclose(f);
  return n;
}

/* open + every event, best of reps; returns seconds, or -1 */
static double time_read(const char *path, int reps, uint64_t *events) {
  double best = -1;
  for (int r = 0; r < reps; r++) {
    char err[FB_ERRLEN];
    struct workload_ctx ctx = {.world = 1, .path = path, .trace_device = -1};
    void *st;
    double t0 = now_s();
    if (pytorch_snapshot_workload.open(&st, NULL, &ctx, err)) {
      fprintf(stderr, "trace_bench: %s\n", err);
      return -1;
    }
    struct event ev;
    int rc;
    uint64_t n = 0;
    while ((rc = pytorch_snapshot_workload.next(st, &ev, err)) > 0) n++;
    pytorch_snapshot_workload.close(st);
    if (rc < 0) {
      fprintf(stderr, "trace_bench: %s\n", err);
      return -1;
    }
    double dt = now_s() - t0;
    if (best < 0 || dt < best) best = dt;
    *events = n;
  }
  return best;
}

static int bench_one(const char *path, const char *label, double *slowest) {
  uint64_t bytes = uncompressed_bytes(path), events = 0;
  int reps = bytes < (50u << 20) ? 5 : 2;
  long rss0 = max_rss_kb();
  double dt = time_read(path, reps, &events);
  if (dt < 0) return -1;
  double mbs = (double)bytes / 1e6 / dt;
  long grew = max_rss_kb() - rss0;
  printf("  %-34.34s %9.1f MB %10llu events %8.1f MB/s  (max RSS +%ld KiB)\n", label, (double)bytes / 1e6,
         (unsigned long long)events, mbs, grew < 0 ? 0 : grew);
  if (*slowest < 0 || mbs < *slowest) *slowest = mbs;
  return 0;
}

int trace_bench(const char *const *files, int nfiles, uint64_t nevents, int nframes) {
  int bad = 0;
  double slowest = -1;
  printf("snapshot reading (open with its pre-scan pass + every event; MB of uncompressed pickle):\n");
  for (int i = 0; i < nfiles; i++) bad |= bench_one(files[i], files[i], &slowest) != 0;
  if (!nfiles) {
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("tests/data/*.pickle.gz", 0, NULL, &g);
    glob("tests/data/*.pickle", GLOB_APPEND, NULL, &g);
    for (size_t i = 0; i < g.gl_pathc; i++) bad |= bench_one(g.gl_pathv[i], g.gl_pathv[i], &slowest) != 0;
    globfree(&g);
    char tmp[] = "/tmp/fragbench-synth-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f || pickle_synth_snapshot(f, nevents, nframes, 1) || fclose(f)) {
      fprintf(stderr, "trace_bench: cannot write a synthetic snapshot to %s\n", tmp);
      bad = 1;
    } else {
      char label[64];
      snprintf(label, sizeof label, "synthetic %llu ev x %d frames", (unsigned long long)nevents, nframes);
      bad |= bench_one(tmp, label, &slowest) != 0;
    }
    unlink(tmp);
  }
  printf("pickle reading: %.1f MB/s (slowest input; target >= 50)\n", slowest < 0 ? 0 : slowest);
  return bad;
}
