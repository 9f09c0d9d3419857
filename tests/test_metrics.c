/* test_metrics.c - every figure of a row computed from hand-made event sequences (the
 * `script` workload through the real replay engine, and the metrics module directly). */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "replay.h"
#include "metrics.h"

static int run(const char *workload, const char *allocator, uint64_t cap, enum on_oom oom, struct run_result *r) {
  struct run_spec s = {.workload = workload, .allocator = allocator, .trace_device = -1, .world = 1, .seed = 1,
                       .device = {.kind = "sim"}, .cap_bytes = cap, .on_oom = oom, .validate = 1, .quiet = 1};
  run_result_init(r);
  return replay_run(&s, r);
}

#define SEQ "script:events=a1=1MiB/a2=512/i/f1/a3=3MiB/i/f2/f3/i"

TEST(metrics_counts_and_peaks_raw) {
  struct run_result r;
  CHECK_EQ(run(SEQ, "raw", 0, ON_OOM_STOP, &r), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.completed, 1);
  CHECK_EQ(r.events, 9);
  CHECK_EQ(r.allocs, 3);
  CHECK_EQ(r.frees, 3);
  CHECK_EQ(r.skipped_events, 0);
  CHECK_EQ(r.peak_requested, (3 << 20) + 512);      /* a3 + a2 live together */
  CHECK_EQ(r.peak_allocated, (3 << 20) + 512);      /* raw does not round */
  CHECK_EQ(r.peak_reserved, (3 << 20) + 512);
  CHECK(fabs(r.overhead - 1.0) < 1e-12);
  CHECK(fabs(r.frag) < 1e-12);
  CHECK_EQ(r.internal_frag, 0);
  CHECK_EQ(r.device_allocs, 3);
  CHECK_EQ(r.device_frees, 3);
  CHECK_EQ(r.oom_count, 0);
  CHECK(r.first_oom_event == -1);
  CHECK_STR(r.allocator, "raw");
  CHECK_STR(r.device, "sim");
  CHECK_EQ(r.modeled_driver_ns, 2 * 29300 + 2 * 2550 + 2 * 29300);
}

TEST(metrics_oom_stop_records_first_event) {
  struct run_result r;
  /* cap 3 MiB: a1 (1 MiB) + a2 (512) fit; a3 = 3 MiB does not (event index 4) */
  CHECK_EQ(run(SEQ, "raw", 3 << 20, ON_OOM_STOP, &r), 0);
  CHECK_STR(r.status, "oom");
  CHECK_EQ(r.completed, 0);
  CHECK_EQ(r.oom_count, 1);
  CHECK_EQ(r.first_oom_event, 4);
  CHECK_EQ(r.cap_bytes, 3 << 20);
}

TEST(metrics_oom_skip_goes_on) {
  struct run_result r;
  CHECK_EQ(run(SEQ, "raw", 3 << 20, ON_OOM_SKIP, &r), 0);
  CHECK_STR(r.status, "oom");
  CHECK_EQ(r.completed, 1);
  CHECK_EQ(r.events, 9);
  CHECK_EQ(r.oom_count, 1);
  CHECK_EQ(r.skipped_events, 0);    /* the free of the dropped a3 is not a bad event */
  CHECK_EQ(r.peak_requested, (1 << 20) + 512);
}

TEST(metrics_skipped_events_counted) {
  struct run_result r;
  /* zero size, free of unknown id, double free, alloc of a live id */
  CHECK_EQ(run("script:events=a1=0/f9/a2=1K/a2=1K/f2/f2", "raw", 0, ON_OOM_STOP, &r), 0);
  CHECK_EQ(r.skipped_events, 4);
  CHECK_EQ(r.allocs, 1);
  CHECK_EQ(r.frees, 1);
}

TEST(metrics_strict_makes_skips_fatal) {
  struct run_spec s = {.workload = "script:events=a1=1K/f1/f1", .allocator = "raw", .trace_device = -1, .world = 1,
                       .device = {.kind = "sim"}, .strict = 1, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 2);
  CHECK_CONTAINS(r.status, "free of an unknown id");
}

TEST(metrics_internal_and_ext_frag) {
  struct metrics m;
  metrics_init(&m);
  metrics_alloc(&m, 1000, 1024);
  metrics_alloc(&m, 3000, 3072);
  CHECK_EQ(m.peak_allocated, 4096);
  CHECK_EQ(m.internal_at_peak, 96);
  metrics_free(&m, 1000, 1024);
  metrics_alloc(&m, 500, 512);     /* allocated 3584 < peak: internal stays from the peak */
  CHECK_EQ(m.internal_at_peak, 96);
  metrics_reserved_peak(&m, 8192, 1024, 4096);
  CHECK(fabs(m.ext_frag - 0.75) < 1e-12);
  metrics_reserved_peak(&m, 9000, 0, 0);
  CHECK(m.ext_frag == 0.0);
}

TEST(metrics_leak_slope_skips_two_warmup_iters) {
  struct metrics m;
  metrics_init(&m);
  CHECK(isnan(metrics_leak_slope(&m)));
  metrics_alloc(&m, 1 << 20, 1 << 20);   /* warm-up: not part of the slope */
  metrics_iter(&m);
  metrics_alloc(&m, 5 << 20, 5 << 20);   /* optimizer state at the first step */
  metrics_iter(&m);
  for (int k = 0; k < 10; k++) {
    metrics_alloc(&m, 4096, 4096);        /* 4 KiB leaked per iteration */
    metrics_iter(&m);
  }
  CHECK(fabs(metrics_leak_slope(&m) - 4096.0) < 1e-6);
  struct metrics flat;
  metrics_init(&flat);
  metrics_alloc(&flat, 1ull << 34, 1ull << 34);
  for (int k = 0; k < 100; k++) metrics_iter(&flat);
  CHECK(fabs(metrics_leak_slope(&flat)) < 1e-9);
}

TEST(metrics_leak_from_replay) {
  struct run_result r;
  /* live after each ITER: 1K, 2K, 3K, 4K, 5K -> slope over iters 2..4 is 1 KiB */
  CHECK_EQ(run("script:events=a1=1Ki/i/a2=1Ki/i/a3=1Ki/i/a4=1Ki/i/a5=1Ki/i", "raw", 0, ON_OOM_STOP, &r), 0);
  CHECK(fabs(r.leak_bytes_per_iter - 1024.0) < 1e-9);
  CHECK(run("script:events=a1=1K/f1", "raw", 0, ON_OOM_STOP, &r) == 0);
  CHECK(isnan(r.leak_bytes_per_iter));   /* no ITER events: not applicable */
}

TEST(metrics_timeline_samples_levels_and_window_highs) {
  char path[512];
  snprintf(path, sizeof path, "%s/tl.csv", test_tmpdir());
  FILE *f = fopen(path, "w");
  struct run_spec s = {.workload = SEQ, .allocator = "raw", .trace_device = -1, .world = 1,
                       .device = {.kind = "sim"}, .timeline = f, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  fclose(f);
  char *t = test_read_file(path);
  /* a short run: a sample per event. Levels now, then the highest requested / reserved
   * since the previous sample, then params */
  CHECK_CONTAINS(t, "raw,2,0,1049088,1049088,1049088,1049088,1049088,\n");   /* after a1, a2 */
  CHECK_CONTAINS(t, "raw,4,1,512,512,512,1049088,1049088,\n");   /* f1: the level before it is the window's high */
  CHECK_CONTAINS(t, "raw,5,1,3146240,3146240,3146240,3146240,3146240,\n");   /* after f1, a3 */
  CHECK_CONTAINS(t, "raw,9,3,0,0,0,0,0,\n");   /* the last event */
  free(t);
}

TEST(metrics_unknown_allocator_is_bad_input) {
  struct run_result r;
  CHECK_EQ(run(SEQ, "nosuch", 0, ON_OOM_STOP, &r), 2);
  CHECK_CONTAINS(r.status, "unknown allocator 'nosuch'");
  CHECK_CONTAINS(r.status, "raw");
  CHECK_EQ(run("nosuch:x=1", "raw", 0, ON_OOM_STOP, &r), 2);
  CHECK_CONTAINS(r.status, "unknown workload 'nosuch'");
}
