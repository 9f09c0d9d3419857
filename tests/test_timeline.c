/* test_timeline.c - the --timeline samples: one per iteration on a long training loop,
 * spread over a run without iterations (bounded in number, the peaks kept), and rows
 * named as the results CSV names the strategy. */
#include <stdlib.h>
#include "test.h"
#include "replay.h"
#include "timeline.h"

/* replay spec into a timeline file; returns the file's text (malloc'd) */
static char *timeline_of(const char *workload, const char *trace, const char *allocator, struct run_result *r) {
  static char path[512];
  snprintf(path, sizeof path, "%s/timeline.csv", test_tmpdir());
  FILE *f = fopen(path, "w");
  struct run_spec s = {.workload = workload, .trace = trace, .allocator = allocator, .trace_device = -1, .world = 1,
                       .device = {.kind = "sim"}, .timeline = f, .quiet = 1};
  run_result_init(r);
  int rc = replay_run(&s, r);
  fclose(f);
  return rc ? NULL : test_read_file(path);
}

static int lines(const char *t) {
  int n = 0;
  for (; t && *t; t++) n += *t == '\n';
  return n;
}

TEST(timeline_samples_once_per_iteration_of_a_long_loop) {
  char spec[128];
  snprintf(spec, sizeof spec, "script:events=a1=1Ki/i/f1,repeat=%d", TIMELINE_ITER_RUN + 6);
  struct run_result r;
  char *t = timeline_of(spec, NULL, "raw", &r);
  CHECK(t);
  CHECK_EQ(lines(t), TIMELINE_ITER_RUN + 6);   /* one per ITER, no spread samples */
  CHECK_CONTAINS(t, "raw,1,0,1024,1024,1024,1024,1024,\n");   /* at the first ITER: one block live */
  CHECK_CONTAINS(t, "raw,4,1,1024,1024,1024,1024,1024,\n");   /* the second */
  free(t);
}

TEST(timeline_spreads_samples_over_a_run_without_iterations) {
  /* 3000 events at the timeline's own interface, one 1 GiB high at event 1555 only */
  char path[512];
  snprintf(path, sizeof path, "%s/spread.csv", test_tmpdir());
  FILE *f = fopen(path, "w");
  struct timeline tl;
  timeline_init(&tl, f, NULL);
  timeline_name(&tl, "caching", "max_split_size_mb=64");
  for (uint64_t e = 1; e <= 3000; e++) {
    uint64_t req = e == 1555 ? (1ull << 30) : 1024 * (e % 7);
    timeline_track(&tl, req, 4 * req);
    timeline_event(&tl, e, 0, e == 1555 ? 0 : req, req, 4 * req);   /* at 1555 the level has dropped again */
  }
  timeline_finish(&tl, 3000, 0, 0, 0, 0);
  timeline_release(&tl);
  fclose(f);
  char *t = test_read_file(path);
  int n = lines(t);
  CHECK_MSG(n >= TIMELINE_MAX_SAMPLES / 2 && n <= TIMELINE_MAX_SAMPLES + 1, "%d samples", n);
  CHECK_CONTAINS(t, "caching,3000,0,");   /* the last event is sampled */
  CHECK_CONTAINS(t, ",1073741824,4294967296,max_split_size_mb=64\n");   /* the peak survives the thinning */
  free(t);
}

TEST(timeline_a_short_loop_is_spread_not_one_sample_per_iteration) {
  struct run_result r;
  char *t = timeline_of("script:events=a1=1Ki/i/f1,repeat=5", NULL, "raw", &r);
  CHECK(t);
  CHECK_EQ(lines(t), 15);   /* 5 iterations of 3 events: every event */
  free(t);
}

TEST(timeline_names_the_recorded_allocator_as_the_results_row) {
  struct run_result r;
  char *t = timeline_of(NULL, test_data("leaky_losses.pickle.gz"), "recorded", &r);
  CHECK(t);
  CHECK(r.allocator[0] && strcmp(r.allocator, "recorded"));
  char want[80];
  snprintf(want, sizeof want, "\n%s,", r.allocator);
  CHECK(!strncmp(t, want + 1, strlen(want + 1)));   /* the first row */
  CHECK(!strstr(t, "recorded"));
  CHECK_MSG(lines(t) >= TIMELINE_MAX_SAMPLES / 2, "%d samples", lines(t));
  free(t);
  /* and through the command line, which names the rows */
  char tl[512], out[512], err[512];
  snprintf(tl, sizeof tl, "%s/cli-timeline.csv", test_tmpdir());
  snprintf(out, sizeof out, "%s/cli.out", test_tmpdir());
  snprintf(err, sizeof err, "%s/cli.err", test_tmpdir());
  CHECK_EQ(test_cli(out, err, "run", "--trace", test_data("leaky_losses.pickle.gz"), "--allocator", "recorded",
                    "--device", "sim", "--quiet", "--timeline", tl, NULL), 0);
  t = test_read_file(tl);
  CHECK(t);
  CHECK(!strstr(t, "recorded"));
  CHECK_CONTAINS(t, want);
  free(t);
}
