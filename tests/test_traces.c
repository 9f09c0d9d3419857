/* test_traces.c - the trace readers: PyTorch snapshots (the shared real traces, Python-
 * written variants in tests/variants, a long synthetic one for bounded memory), RMM logs,
 * the native CSV and its writer, rewind, reading from memory, and the bad-input corpus
 * in tests/bad (every file must fail with its expected message, naming the file). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <zlib.h>
#include "test.h"
#include "workload.h"
#include "allocator.h"
#include "replay.h"
#include "../workloads/pickle.h"
#include "../workloads/trace_native.h"

extern const struct workload_ops pytorch_snapshot_workload;
extern const struct workload_ops rmm_log_workload;
extern const struct workload_ops native_trace_workload;

/* ---- helpers ---- */

static int open_trace(struct workload *w, const char *path, int device, char *err) {
  const struct workload_ops *ops = trace_detect(path, err);
  if (!ops) return -1;
  struct workload_ctx ctx = {.world = 1, .path = path, .trace_device = device};
  return workload_open(w, ops, NULL, &ctx, 0, err);
}

struct counts { uint64_t n[5], bytes_alloc; uint64_t hash; };

static void count(struct counts *c, const struct event *ev) {
  c->n[ev->op]++;
  if (ev->op == OP_ALLOC) c->bytes_alloc += ev->size;
  uint64_t x[5] = {ev->op, ev->id, ev->size, ev->stream, (uint64_t)ev->device};
  for (int i = 0; i < 5; i++) c->hash = (c->hash ^ x[i]) * 0x100000001b3ULL;
}

/* every event to the end: rc of the last next() */
static int read_all(struct workload *w, struct counts *c, char *err) {
  memset(c, 0, sizeof *c);
  c->hash = 0xcbf29ce484222325ULL;
  struct event ev;
  int rc;
  while ((rc = workload_next(w, &ev, err)) > 0) count(c, &ev);
  return rc;
}

/* events as "op id size stream device" lines, as the .expect files of tests/variants have them */
static char *render(struct workload *w, int *rc, char *err) {
  size_t cap = 1 << 16, n = 0;
  char *s = malloc(cap);
  struct event ev;
  s[0] = 0;
  while ((*rc = workload_next(w, &ev, err)) > 0) {
    if (cap - n < 128) s = realloc(s, cap *= 2);
    n += (size_t)snprintf(s + n, cap - n, "%s %llu %llu %llu %d\n", op_name(ev.op), (unsigned long long)ev.id,
                          (unsigned long long)ev.size, (unsigned long long)ev.stream, ev.device);
  }
  return s;
}

/* reference.csv: peak_reserved_bytes of trace under torch_backend=caching */
static uint64_t reference_peak(const char *trace) {
  char *csv = test_read_file(test_data("reference.csv"));
  if (!csv) return 0;
  char key[128];
  snprintf(key, sizeof key, "\n%s,caching,", trace);
  char *p = strstr(csv, key);
  uint64_t v = 0;
  if (p) {
    p += strlen(key);
    p = strchr(p, ',');                       /* skip peak_allocated_bytes */
    if (p) v = strtoull(p + 1, NULL, 10);
  }
  free(csv);
  return v;
}

struct shared_trace { const char *file, *name; uint64_t allocs, frees; };
static const struct shared_trace shared[] = {
  /* counts as Python's pickle module reads them: alloc and free_completed actions */
  {"gpt_train.pickle.gz", "gpt_train", 8049, 8046},
  {"leaky_losses.pickle.gz", "leaky_losses", 7209, 7206},
  {"resnet_varsize.pickle.gz", "resnet_varsize", 24995, 24992},
  {"gpt_train_short_frames.pickle", "gpt_train_short_frames", 1125, 1122},
};

/* ---- the shared real snapshots ---- */

TEST(trace_snapshot_counts_and_peak) {
  for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) {
    char err[FB_ERRLEN];
    struct workload w;
    CHECK_MSG(!open_trace(&w, test_data(shared[i].file), -1, err), "%s", err);
    CHECK_STR(w.ops->name, "pytorch_snapshot");
    struct workload_info info;
    w.ops->info(w.st, &info);
    struct counts c;
    int rc = read_all(&w, &c, err);
    workload_close(&w);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK_EQ(c.n[OP_ALLOC], shared[i].allocs);
    CHECK_EQ(c.n[OP_FREE], shared[i].frees);
    CHECK_EQ(c.n[OP_EMPTY_CACHE], 0);        /* no segment_free in these runs */
    uint64_t ref = reference_peak(shared[i].name);
    CHECK(ref > 0);
    CHECK_EQ(info.trace_peak_reserved, ref);
    CHECK_STR(info.recorded_allocator, "caching");
    CHECK_STR(info.allocator_settings, "");   /* recorded with the defaults */
    CHECK_EQ(info.device_mask, 1);
    CHECK_EQ(info.usable_bytes, 0);
    CHECK_EQ(info.ignored, 1);                /* the top-level external_annotations key */
    CHECK_EQ(info.holds_whole_trace, 0);
  }
}

TEST(trace_snapshot_exact_peaks) {
  /* the figures of reference.csv, spelled out so that a changed reference file shows */
  const uint64_t want[] = {10659823616ULL, 396361728ULL, 3644850176ULL, 3479175168ULL};
  for (size_t i = 0; i < 4; i++) {
    char err[FB_ERRLEN];
    struct workload w;
    CHECK_MSG(!open_trace(&w, test_data(shared[i].file), -1, err), "%s", err);
    struct workload_info info;
    w.ops->info(w.st, &info);
    workload_close(&w);
    CHECK_EQ(info.trace_peak_reserved, want[i]);
  }
}

/* the snapshot recorded with stack frames reads as the same kind of events as the ones
 * without, and its frames cost the reader no memory */
TEST(trace_snapshot_frames) {
  char err[FB_ERRLEN];
  struct trace_src src;
  CHECK_MSG(!src_open_path(&src, test_data("gpt_train_short_frames.pickle"), err), "%s", err);
  struct pk_reader pk;
  pk_open(&pk, &src, err);
  struct pk_rec r;
  int rc;
  uint64_t n = 0, with_fields = 0;
  while ((rc = pk_next(&pk, &r, err)) > 0) {
    n++;
    if (r.action == TK_ALLOC && (r.has & (F_ADDR | F_SIZE | F_STREAM)) == (F_ADDR | F_SIZE | F_STREAM) && !r.bad)
      with_fields++;
    CHECK_EQ(r.ignored_keys, 0);              /* 'frames' is a known key, not an unknown one */
  }
  CHECK_MSG(rc == 0, "%s", err);
  CHECK_EQ(n, 3422);                          /* all actions, as Python counts them */
  CHECK_EQ(with_fields, 1125);
  CHECK(pk.stats.max_stack < 2100);           /* a batch of 1000 frames plus a little nesting */
  CHECK(pk.stats.memo_kept < 64);             /* keys and action names only, no frame strings */
  pk_close(&pk);
  src_close(&src);
}

/* after an error the reader's state is broken: every later call repeats the error */
TEST(trace_snapshot_error_is_sticky) {
  char err[FB_ERRLEN], again[FB_ERRLEN];
  struct trace_src src;
  CHECK_MSG(!src_open_path(&src, "tests/bad/unknown_opcode.pickle", err), "%s", err);
  struct pk_reader pk;
  pk_open(&pk, &src, err);
  struct pk_rec r;
  int rc;
  while ((rc = pk_next(&pk, &r, err)) > 0) {}
  CHECK(rc < 0);
  CHECK_CONTAINS(err, "unknown pickle opcode 0xff");
  CHECK(pk_next(&pk, &r, again) < 0);
  CHECK_STR(again, err);
  CHECK(pk_rewind(&pk, err) == 0);           /* a rewind starts over, and meets it again */
  while ((rc = pk_next(&pk, &r, again)) > 0) {}
  CHECK(rc < 0);
  CHECK_STR(again, err);
  pk_close(&pk);
  src_close(&src);
}

/* ---- Python-written variants (tests/variants/make_variants.py) ---- */

TEST(trace_variants) {
  DIR *d = opendir("tests/variants");
  CHECK(d);
  struct dirent *e;
  int checked = 0;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 8 || strcmp(e->d_name + len - 7, ".expect")) continue;
    char name[256], path[512], expect_path[512];
    snprintf(name, sizeof name, "%.*s", (int)(len - 7), e->d_name);       /* "proto2.d0" */
    char *dot = strrchr(name, '.');
    CHECK(dot && dot[1] == 'd');
    int device = atoi(dot + 2);
    *dot = 0;
    snprintf(path, sizeof path, "tests/variants/%s.pickle", name);
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    else snprintf(path, sizeof path, "tests/variants/%s.pickle.gz", name);
    snprintf(expect_path, sizeof expect_path, "tests/variants/%s", e->d_name);
    char *want = test_read_file(expect_path);
    CHECK(want);
    char err[FB_ERRLEN];
    struct workload w;
    CHECK_MSG(!open_trace(&w, path, device, err), "%s: %s", path, err);
    struct workload_info info;
    w.ops->info(w.st, &info);
    char head[1024];
    snprintf(head, sizeof head, "peak=%llu\nusable=%llu\nsettings=%s\nrecorded=%s\nmask=%llu\nignored=%llu\nevents:\n",
             (unsigned long long)info.trace_peak_reserved, (unsigned long long)info.usable_bytes,
             info.allocator_settings, info.recorded_allocator, (unsigned long long)info.device_mask,
             (unsigned long long)info.ignored);
    int rc;
    char *got = render(&w, &rc, err);
    workload_close(&w);
    CHECK_MSG(rc == 0, "%s: %s", path, err);
    size_t hl = strlen(head);
    int same = !strncmp(want, head, hl) && !strcmp(want + hl, got);
    if (!same) test_fail(__FILE__, __LINE__, "%s (device %d): reader disagrees with %s:\n%s---\n%.600s", path, device,
                         expect_path, head, got);
    free(want);
    free(got);
    if (!same) break;
    checked++;
  }
  closedir(d);
  CHECK(checked >= 12);
}

TEST(trace_variant_device_without_events) {
  char err[FB_ERRLEN];
  struct workload w;
  CHECK(open_trace(&w, "tests/variants/multi_device.pickle", 1, err) < 0);
  CHECK_CONTAINS(err, "multi_device.pickle: device 1 has no events");
  CHECK_CONTAINS(err, "devices with events: 0,2");
  struct workload_info info;
  struct event ev;
  for (int want = -1; want <= 2; want += 3) {  /* -1: the lowest device with events, 0 */
    CHECK(open_trace(&w, "tests/variants/multi_device.pickle", want, err) == 0);
    w.ops->info(w.st, &info);
    CHECK_EQ(info.device_mask, 5);
    struct counts c;
    CHECK(workload_next(&w, &ev, err) == 1 && ev.op == OP_ALLOC);
    CHECK_EQ(ev.device, want < 0 ? 0 : want);
    CHECK(read_all(&w, &c, err) == 0);
    CHECK_EQ(c.n[OP_ALLOC] + 1, want < 0 ? 18 : 30);   /* as multi_device.d0/.d2.expect list them */
    workload_close(&w);
  }
}

/* allocator_settings become parameters that caching itself accepts */
TEST(trace_settings_translation) {
  char err[FB_ERRLEN];
  struct workload w;
  CHECK_MSG(!open_trace(&w, "tests/variants/expandable.pickle", -1, err), "%s", err);
  struct workload_info info;
  w.ops->info(w.st, &info);
  workload_close(&w);
  CHECK_STR(info.recorded_allocator, "expandable");
  CHECK_STR(info.allocator_settings, "max_split_size_mb=200,garbage_collection_threshold=0.6,roundup_power2_divisions="
            "[1:4,2:4,4:4,8:4,16:8,32:8,64:8,128:8,256:8,512:8,1024:0,2048:0,4096:0,8192:0,16384:0,32768:0]");
  const struct allocator_ops *caching = allocator_find("caching");
  if (!caching) SKIP("no caching strategy registered");
  char spec[600], name[64];
  snprintf(spec, sizeof spec, "caching:%s", info.allocator_settings);
  struct params p;
  CHECK_MSG(!params_parse_spec(spec, name, sizeof name, &p, err), "%s", err);
  CHECK_MSG(!params_check(&p, caching->params, "caching", err), "%s", err);
  struct device dev;
  CHECK_MSG(!device_open(&dev, &(struct device_config){.kind = "sim"}, err), "%s", err);
  void *a;
  CHECK_MSG(!caching->create(&a, &dev, &p, err), "caching rejects %s: %s", spec, err);
  caching->destroy(a);
  device_close(&dev);
}

/* ---- bounded memory on a long trace with frames ---- */

static int synth_stats(uint64_t nevents, struct pk_stats *st, uint64_t *records, char *err) {
  char path[512];
  snprintf(path, sizeof path, "%s/synth_%llu.pickle", test_tmpdir(), (unsigned long long)nevents);
  FILE *f = fopen(path, "wb");
  if (!f || pickle_synth_snapshot(f, nevents, 25, 3) || fclose(f)) return -1;
  struct trace_src src;
  if (src_open_path(&src, path, err)) return -1;
  struct pk_reader pk;
  pk_open(&pk, &src, err);
  struct pk_rec r;
  int rc;
  *records = 0;
  while ((rc = pk_next(&pk, &r, err)) > 0) (*records)++;
  *st = pk.stats;
  pk_close(&pk);
  src_close(&src);
  remove(path);
  return rc;
}

TEST(trace_snapshot_memory_bounded) {
  char err[FB_ERRLEN];
  struct pk_stats small, big;
  uint64_t n1, n2;
  CHECK_MSG(synth_stats(20000, &small, &n1, err) == 0, "%s", err);
  CHECK_MSG(synth_stats(200000, &big, &n2, err) == 0, "%s", err);
  CHECK_EQ(n1, 20000);
  CHECK_EQ(n2, 200000);
  CHECK(big.bytes > 9 * small.bytes);
  /* ten times the trace, the same stack, memo and queue */
  CHECK_EQ(big.max_stack, small.max_stack);
  CHECK_EQ(big.memo_kept, small.memo_kept);
  CHECK_EQ(big.max_queue, small.max_queue);
  CHECK(big.max_stack <= 1100);            /* a batch of 1000 events, one open event with its frames */
  CHECK(big.memo_kept <= 16);
  CHECK(big.max_queue <= 1000);
}

/* ---- RMM logs ---- */

TEST(trace_rmm_matches_snapshot) {
  char err[FB_ERRLEN];
  struct workload a, b;
  CHECK_MSG(!open_trace(&a, test_data("leaky_losses.rmm.csv"), -1, err), "%s", err);
  CHECK_STR(a.ops->name, "rmm_log");
  CHECK_MSG(!open_trace(&b, test_data("leaky_losses.pickle.gz"), -1, err), "%s", err);
  struct event x, y;
  int ra, rb;
  uint64_t n = 0;
  for (;;) {
    ra = workload_next(&a, &x, err);
    rb = workload_next(&b, &y, err);
    if (ra != 1 || rb != 1) break;
    if (x.op != y.op || x.id != y.id || x.size != y.size || x.stream != y.stream || x.device != y.device) {
      test_fail(__FILE__, __LINE__, "event %llu differs: rmm %s %llu %llu, snapshot %s %llu %llu", (unsigned long long)n,
                op_name(x.op), (unsigned long long)x.id, (unsigned long long)x.size, op_name(y.op),
                (unsigned long long)y.id, (unsigned long long)y.size);
      break;
    }
    n++;
  }
  workload_close(&a);
  workload_close(&b);
  CHECK_EQ(ra, 0);
  CHECK_EQ(rb, 0);
  CHECK_EQ(n, 7209 + 7206);
}

/* the RMM log of leaky_losses replays to the same figures as its snapshot, strategy by strategy */
TEST(trace_rmm_same_replay_figures) {
  const char *strategies[] = {"caching", "raw", "bfc", "pool"};
  for (int i = 0; i < 4; i++) {
    if (!allocator_find(strategies[i])) continue;
    struct run_result r[2];
    const char *files[2] = {test_data("leaky_losses.rmm.csv"), test_data("leaky_losses.pickle.gz")};
    for (int k = 0; k < 2; k++) {
      struct run_spec s = {.trace = files[k], .allocator = strategies[i], .trace_device = -1, .world = 1, .seed = 1,
                           .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .validate = 1, .quiet = 1};
      run_result_init(&r[k]);
      CHECK_MSG(replay_run(&s, &r[k]) == 0, "%s with %s: %s", files[k], strategies[i], r[k].status);
      CHECK_STR(r[k].status, "ok");
    }
    CHECK_EQ(r[0].events, r[1].events);
    CHECK_EQ(r[0].allocs, r[1].allocs);
    CHECK_EQ(r[0].frees, r[1].frees);
    CHECK_EQ(r[0].skipped_events, 0);
    CHECK_EQ(r[0].peak_requested, r[1].peak_requested);
    CHECK_EQ(r[0].peak_allocated, r[1].peak_allocated);
    CHECK_EQ(r[0].peak_reserved, r[1].peak_reserved);
    CHECK_EQ(r[0].device_allocs, r[1].device_allocs);
    CHECK_EQ(r[0].cache_flushes, r[1].cache_flushes);
    CHECK_EQ(r[0].internal_frag, r[1].internal_frag);
  }
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  fputs(text, f);
  fclose(f);
}

TEST(trace_rmm_rules) {
  char err[FB_ERRLEN], path[512];
  snprintf(path, sizeof path, "%s/rules.rmm.csv", test_tmpdir());
  write_file(path,
             "Thread,Time,Action,Pointer,Size,Stream\r\n"
             "1,23:59:59.900000,allocate,0x7f0000000000,1024,0x7f00aa000010\r\n"   /* crosses midnight: fine */
             "1,00:00:00.100000,allocate failure,(nil),99999999,0\r\n"
             "2,00:00:00.050000,free,0x7f0000000000,1024,0x7f00aa000010\r\n"        /* earlier: a warning */
             "\r\n");
  struct workload w;
  CHECK_MSG(!open_trace(&w, path, -1, err), "%s", err);
  struct event ev[8];
  int n = 0, rc;
  char warn_path[512];
  snprintf(warn_path, sizeof warn_path, "%s/rules.stderr", test_tmpdir());
  fflush(stderr);
  int saved = dup(2), fd = open(warn_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 2);
  while (n < 8 && (rc = workload_next(&w, &ev[n], err)) > 0) n++;
  fflush(stderr);
  dup2(saved, 2);
  close(fd);
  close(saved);
  CHECK_MSG(rc == 0, "%s", err);
  char *warning = test_read_file(warn_path);
  CHECK_CONTAINS(warning, "rules.rmm.csv:4: time 00:00:00.050000 is earlier than the row before");
  CHECK(!strstr(warning, ":3:"));             /* midnight is not out of order */
  free(warning);
  CHECK_EQ(n, 4);
  CHECK(ev[0].op == OP_ALLOC && ev[0].id == 0x7f0000000000ULL && ev[0].size == 1024 && ev[0].stream == 0x7f00aa000010ULL);
  /* the failed request is replayed (so a run that died OOMs again) and then dropped */
  CHECK(ev[1].op == OP_ALLOC && ev[1].size == 99999999 && ev[1].id >= (1ULL << 63));
  CHECK(ev[2].op == OP_FREE && ev[2].id == ev[1].id);
  CHECK(ev[3].op == OP_FREE && ev[3].id == 0x7f0000000000ULL);
  char where[600];
  snprintf(where, sizeof where, "%s:4", path);
  CHECK_STR(w.ops->where(w.st), where);
  CHECK(workload_rewind(&w, err) == 0);
  struct event again;
  CHECK(workload_next(&w, &again, err) == 1 && again.id == ev[0].id);
  workload_close(&w);
  struct workload_ctx ctx = {.world = 1, .path = path, .trace_device = 1};
  CHECK(workload_open(&w, &rmm_log_workload, NULL, &ctx, 0, err) < 0);
  CHECK_CONTAINS(err, "device 0");
}

/* ---- native traces ---- */

TEST(trace_native_round_trip) {
  char err[FB_ERRLEN], path[512];
  snprintf(path, sizeof path, "%s/gpt.native.csv", test_tmpdir());
  struct workload w;
  CHECK_MSG(!open_trace(&w, test_data("gpt_train.pickle.gz"), -1, err), "%s", err);
  FILE *f = fopen(path, "w");
  CHECK(f && native_trace_write_header(f) == 0);
  struct counts want;
  memset(&want, 0, sizeof want);
  want.hash = 0xcbf29ce484222325ULL;
  struct event ev;
  int rc;
  while ((rc = workload_next(&w, &ev, err)) > 0) {
    count(&want, &ev);
    CHECK(native_trace_write_event(f, &ev) == 0);
  }
  workload_close(&w);
  /* the other ops, another device, and a big id and stream */
  struct event extra[] = {{.op = OP_EMPTY_CACHE}, {.op = OP_ITER},
                          {.op = OP_ALLOC, .id = UINT64_MAX, .size = 1ULL << 40, .stream = UINT64_MAX, .device = 3},
                          {.op = OP_FREE, .id = UINT64_MAX, .device = 3},
                          {.op = OP_ALLOC, .id = 7, .size = 512, .device = 3},
                          {.op = OP_FREE, .id = 7, .stream = EV_FREE_RECORDED, .device = 3}};
  for (int i = 0; i < 6; i++) {
    CHECK(native_trace_write_event(f, &extra[i]) == 0);
    if (extra[i].device == 0) count(&want, &extra[i]);
  }
  fclose(f);
  CHECK_MSG(!open_trace(&w, path, -1, err), "%s", err);
  CHECK_STR(w.ops->name, "native");
  struct workload_info info;
  w.ops->info(w.st, &info);
  CHECK_EQ(info.device_mask, 1 | 8);
  struct counts got;
  CHECK_MSG(read_all(&w, &got, err) == 0, "%s", err);
  workload_close(&w);
  CHECK_EQ(got.n[OP_ALLOC], 8049);
  CHECK_EQ(got.n[OP_EMPTY_CACHE], 1);
  CHECK_EQ(got.n[OP_ITER], 1);
  CHECK_EQ(got.hash, want.hash);
  /* device 3 alone */
  CHECK_MSG(!open_trace(&w, path, 3, err), "%s", err);
  CHECK(workload_next(&w, &ev, err) == 1);
  CHECK(ev.op == OP_ALLOC && ev.id == UINT64_MAX && ev.size == 1ULL << 40 && ev.stream == UINT64_MAX && ev.device == 3);
  CHECK(workload_next(&w, &ev, err) == 1 && ev.op == OP_FREE && ev.stream == 0);
  CHECK(workload_next(&w, &ev, err) == 1 && ev.op == OP_ALLOC && ev.id == 7);
  CHECK(workload_next(&w, &ev, err) == 1 && ev.op == OP_FREE && ev.stream == EV_FREE_RECORDED);   /* the mark kept */
  CHECK(workload_next(&w, &ev, err) == 0);
  workload_close(&w);
  CHECK(open_trace(&w, path, 2, err) < 0);
  CHECK_CONTAINS(err, "device 2 has no events");
}

/* ---- every reader: rewind, gzip, memory ---- */

TEST(trace_rewind_same_stream) {
  char gz[512];
  snprintf(gz, sizeof gz, "%s/leaky.rmm.csv.gz", test_tmpdir());
  char *csv = test_read_file(test_data("leaky_losses.rmm.csv"));
  CHECK(csv);
  gzFile g = gzopen(gz, "wb");
  gzputs(g, csv);
  gzclose(g);
  free(csv);
  const char *files[] = {test_data("gpt_train.pickle.gz"), test_data("gpt_train_short_frames.pickle"),
                         test_data("leaky_losses.rmm.csv"), gz, "tests/variants/multi_device.pickle"};
  for (int i = 0; i < 5; i++) {
    char err[FB_ERRLEN];
    struct workload w;
    CHECK_MSG(!open_trace(&w, files[i], -1, err), "%s", err);
    struct counts first, second;
    CHECK_MSG(read_all(&w, &first, err) == 0, "%s", err);
    CHECK_MSG(workload_rewind(&w, err) == 0, "%s", err);
    CHECK_MSG(read_all(&w, &second, err) == 0, "%s", err);
    CHECK(first.n[OP_ALLOC] > 0);
    CHECK_EQ(second.hash, first.hash);
    CHECK_EQ(second.n[OP_ALLOC], first.n[OP_ALLOC]);
    /* rewinding half way through gives the same stream too */
    struct event ev;
    for (int k = 0; k < 100; k++) workload_next(&w, &ev, err);
    CHECK(workload_rewind(&w, err) == 0);
    CHECK(read_all(&w, &second, err) == 0);
    CHECK_EQ(second.hash, first.hash);
    workload_close(&w);
  }
}

/* the readers over a memory buffer (what the fuzz targets use) read what they read from files */
TEST(trace_readers_from_memory) {
  const char *files[] = {"tests/variants/proto2.pickle", test_data("leaky_losses.rmm.csv"), NULL};
  char native_path[512];
  snprintf(native_path, sizeof native_path, "%s/m.native.csv", test_tmpdir());
  write_file(native_path, "# fragbench-trace v1\nalloc,1,512,0,0\niter,,,,0\nfree,1,,,0\n");
  files[2] = native_path;
  int (*openers[])(void **, struct trace_src *, const struct workload_ctx *, char *) = {
    pytorch_snapshot_open_src, rmm_log_open_src, native_trace_open_src};
  const struct workload_ops *ops[] = {&pytorch_snapshot_workload, &rmm_log_workload, &native_trace_workload};
  for (int i = 0; i < 3; i++) {
    char err[FB_ERRLEN];
    struct workload w;
    CHECK_MSG(!open_trace(&w, files[i], -1, err), "%s", err);
    struct counts from_file, from_mem;
    CHECK(read_all(&w, &from_file, err) == 0);
    workload_close(&w);
    char *buf = test_read_file(files[i]);
    FILE *f = fopen(files[i], "rb");
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fclose(f);
    struct trace_src src;
    src_open_mem(&src, buf, n, "mem");
    struct workload_ctx ctx = {.world = 1, .trace_device = -1};
    void *st;
    CHECK_MSG(!openers[i](&st, &src, &ctx, err), "%s", err);
    struct workload m = {.ops = ops[i], .st = st};
    CHECK(read_all(&m, &from_mem, err) == 0);
    CHECK(workload_rewind(&m, err) == 0);
    struct counts again;
    CHECK(read_all(&m, &again, err) == 0);
    ops[i]->close(st);
    free(buf);
    CHECK_EQ(from_mem.hash, from_file.hash);
    CHECK_EQ(again.hash, from_file.hash);
  }
}

/* ---- the bad-input corpus ---- */

TEST(trace_bad_corpus) {
  DIR *d = opendir("tests/bad");
  CHECK(d);
  struct dirent *e;
  int checked = 0;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 8 || strcmp(e->d_name + len - 7, ".expect")) continue;
    char base[256], expect_path[512], input[512] = "";
    snprintf(base, sizeof base, "%.*s.", (int)(len - 7), e->d_name);
    snprintf(expect_path, sizeof expect_path, "tests/bad/%s", e->d_name);
    /* the input: base + any extension other than .expect */
    DIR *d2 = opendir("tests/bad");
    struct dirent *e2;
    while ((e2 = readdir(d2)))
      if (!strncmp(e2->d_name, base, strlen(base)) && strcmp(e2->d_name + strlen(base), "expect"))
        snprintf(input, sizeof input, "tests/bad/%s", e2->d_name);
    closedir(d2);
    CHECK_MSG(input[0], "%s has no input file", expect_path);
    char *want = test_read_file(expect_path);
    CHECK(want);
    want[strcspn(want, "\n")] = 0;
    char err[FB_ERRLEN] = "";
    struct workload w;
    int rc = open_trace(&w, input, -1, err);
    if (rc == 0) {
      struct counts c;
      rc = read_all(&w, &c, err);
      workload_close(&w);
    }
    if (rc >= 0) test_fail(__FILE__, __LINE__, "%s: read to the end without an error (expected: %s)", input, want);
    else if (!strstr(err, want)) test_fail(__FILE__, __LINE__, "%s: message \"%s\" lacks \"%s\"", input, err, want);
    else if (!strstr(err, input)) test_fail(__FILE__, __LINE__, "%s: message \"%s\" does not name the file", input, err);
    free(want);
    if (test_failed_now()) break;
    checked++;
  }
  closedir(d);
  CHECK(checked >= 80);
}
