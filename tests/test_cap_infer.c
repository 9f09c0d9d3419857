/* test_cap_infer.c - the limit a snapshot that ended in an OOM ran under: the interval
 * from its own evidence (oom_evidence.c) and the cap chosen in it (cap_infer.c), on the
 * hand-made snapshots of tests/variants/make_variants.py (oom_scripts: limits known by
 * construction), and `fragbench run` replaying under it with no cap option. */
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "cap_infer.h"
#include "limit.h"
#include "oom_message.h"

#define MIB (1ULL << 20)

static int infer(const char *name, struct cap_inference *ci) {
  char path[256], err[FB_ERRLEN] = "";
  snprintf(path, sizeof path, "tests/variants/%s.pickle", name);
  int rc = cap_infer_trace(path, -1, ci, err);
  if (rc) fprintf(stderr, "%s\n", err);
  return rc;
}

TEST(cap_infer_fraction_oom_bounds_by_peak_and_failed_segment) {
  struct cap_inference ci;
  CHECK_EQ(infer("oom_fraction", &ci), 0);
  CHECK(ci.has_oom);
  CHECK(!ci.device_limit);
  CHECK_EQ(ci.lo, 950 * MIB);                  /* the most reserved ever held */
  CHECK_EQ(ci.hi, 650 * MIB + 480 * MIB);      /* reserved after the release + the segment that did not fit */
  CHECK(ci.cap >= ci.lo && ci.cap < ci.hi);
  CHECK_EQ(ci.oom_event, 6);
  CHECK(ci.matched);
  CHECK_EQ(ci.replay_event, 6);
  CHECK_EQ(ci.request, 480 * MIB);
  CHECK_EQ(ci.stream, 0);
  CHECK_EQ(ci.released, 300 * MIB);
}

TEST(cap_infer_device_limit_oom_is_reserved_plus_device_free) {
  struct cap_inference ci;
  CHECK_EQ(infer("oom_device", &ci), 0);
  CHECK(ci.has_oom);
  CHECK(ci.device_limit);
  CHECK_EQ(ci.lo, 300 * MIB + 500 * MIB);
  CHECK_EQ(ci.hi, ci.lo + 1);
  CHECK_EQ(ci.cap, 800 * MIB);
  CHECK(ci.matched);
  CHECK_EQ(ci.oom_event, 3);
}

TEST(cap_infer_earlier_retries_bound_from_above) {
  struct cap_inference ci;
  CHECK_EQ(infer("oom_retries", &ci), 0);
  CHECK_EQ(ci.lo, 970 * MIB);
  CHECK_EQ(ci.hi, 800 * MIB + 250 * MIB);      /* the first retry, tighter than the OOM's 1070 MiB */
  CHECK_EQ(ci.retries, 2);
  CHECK(ci.cap >= ci.lo && ci.cap < ci.hi);
  CHECK(ci.matched);
  CHECK_EQ(ci.oom_event, 8);
}

TEST(cap_infer_trace_without_oom_infers_nothing) {
  struct cap_inference ci;
  CHECK_EQ(infer("proto2", &ci), 0);
  CHECK(!ci.has_oom);
}

TEST(cap_infer_recorded_allocator_fails_at_pytorchs_event_under_the_cap) {
  struct cap_inference ci;
  CHECK_EQ(infer("oom_fraction", &ci), 0);
  struct run_spec s = {.trace = "tests/variants/oom_fraction.pickle", .trace_device = -1, .world = 1, .seed = 1,
                       .allocator = "recorded", .device = {.kind = "sim"}, .cap_bytes = ci.cap, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK_STR(r.status, "oom");
  CHECK_EQ(r.first_oom_event, ci.oom_event);
  /* one byte under the low end: it fails earlier (the evidence says the job got further) */
  s.cap_bytes = ci.lo - 1;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK(r.first_oom_event >= 0 && r.first_oom_event < ci.oom_event);
}

TEST(cli_run_snapshot_with_oom_replays_under_the_inferred_cap) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/out.csv", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/err.txt", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", "tests/variants/oom_fraction.pickle", "--device", "sim",
                    "--allocator", "recorded", "--out", outp, NULL), 0);
  char *e = test_read_file(errp), *o = test_read_file(outp);
  CHECK_CONTAINS(e, "ends in an OOM at event 6");
  CHECK_CONTAINS(e, "the limit was between 950.00 MiB and 1.10 GiB");
  CHECK_CONTAINS(e, "--no-infer-cap turns this off");
  CHECK_CONTAINS(o, ",cap_source,cap_lo,cap_hi,");
  CHECK_CONTAINS(o, ",oom,");
  CHECK_CONTAINS(o, ",inferred,996147200,1184890880,");
  free(e);
  free(o);
  /* --no-infer-cap: uncapped, completes; a given cap says so */
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", "tests/variants/oom_fraction.pickle", "--device", "sim",
                    "--allocator", "recorded", "--no-infer-cap", "--out", outp, NULL), 0);
  o = test_read_file(outp);
  CHECK_CONTAINS(o, ",ok,");
  CHECK(!strstr(o, "inferred"));
  free(o);
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", "tests/variants/oom_fraction.pickle", "--device", "sim",
                    "--allocator", "recorded", "--cap-bytes", "2Gi", "--out", outp, NULL), 0);
  o = test_read_file(outp);
  CHECK_CONTAINS(o, ",given,,,");
  free(o);
}

TEST(cap_infer_fragmented_oom_leaves_room_for_a_strategy_that_needs_less) {
  struct cap_inference ci;
  CHECK_EQ(infer("oom_fragmented", &ci), 0);
  CHECK_EQ(ci.lo, 40 * MIB);                   /* 20 small segments */
  CHECK_EQ(ci.hi, 40 * MIB + 26 * MIB);        /* + the 26 MiB segment of the 25 MiB request */
  CHECK(ci.matched);
  struct run_spec s = {.trace = "tests/variants/oom_fragmented.pickle", .trace_device = -1, .world = 1, .seed = 1,
                       .allocator = "raw", .device = {.kind = "sim"}, .cap_bytes = ci.cap, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK_STR(r.status, "ok");                   /* raw needs the 10 MiB in use + 25 MiB */
  s.allocator = "recorded";
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK_STR(r.status, "oom");
  CHECK_EQ(r.first_oom_event, ci.oom_event);
}

TEST(cli_advise_takes_the_inferred_limit_as_its_budget) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/err.txt", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", "tests/variants/oom_fragmented.pickle", NULL), 1);   /* none fits */
  char *e = test_read_file(errp), *o = test_read_file(outp);
  CHECK_CONTAINS(e, "limit 52.00 MiB (54525952 bytes): inferred from the snapshot");
  CHECK_CONTAINS(e, "No setting completes under the budget");
  CHECK(!strstr(o, "PYTORCH_CUDA_ALLOC_CONF="));   /* nothing to recommend */
  free(e);
  free(o);
  /* the job needs more than its limit whatever the setting: said, advised without one, and
   * exit 1: no setting completes even the recorded run under the limit */
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", "tests/variants/oom_fraction.pickle", NULL), 1);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "is below the trace's peak requested");
  CHECK_CONTAINS(e, "advising without a budget");
  free(e);
}

TEST(cli_mincap_says_where_each_need_falls_against_the_limit) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/out.csv", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/err.txt", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "mincap", "--trace", "tests/variants/oom_fragmented.pickle", "--device", "sim",
                    "--allocator", "recorded", "--allocator", "raw", "--out", outp, NULL), 0);
  char *e = test_read_file(errp), *o = test_read_file(outp);
  CHECK_CONTAINS(e, "the limit was between 40.00 MiB and 66.00 MiB");
  CHECK_CONTAINS(e, "x caching: needs 66.00 MiB: above the limit the job ran under (fails under it)");
  CHECK_CONTAINS(e, "x raw: needs 40.00 MiB: inside the interval of the limit the job ran under");
  CHECK_CONTAINS(o, ",41943040,69206016,");
  free(e);
  free(o);
}

TEST(cap_infer_keeps_the_failing_requests_stack_frames) {
  struct cap_inference ci;
  CHECK_EQ(infer("oom_frames", &ci), 0);          /* frame dicts shared with earlier events through the memo */
  CHECK_STR(ci.frames, "fn_3 (/very/long/path/to/the/module/number/3/mod.py:3); "
                       "fn_1 (/very/long/path/to/the/module/number/1/mod.py:1); "
                       "fn_2 (/very/long/path/to/the/module/number/2/mod.py:2)");
  CHECK_EQ(ci.stream, 7);
  char line[2048];
  cap_infer_sentence(&ci, line, sizeof line);
  CHECK_CONTAINS(line, "on stream 7, 500.00 MiB free on the device, at fn_3 (");
  CHECK_EQ(infer("oom_fraction", &ci), 0);        /* frames written inline */
  CHECK_STR(ci.frames, "forward (model.py:42); train_step (train.py:7)");
  CHECK_EQ(infer("oom_device", &ci), 0);          /* none recorded */
  CHECK_STR(ci.frames, "");
}

/* limit_message_fits: the message's failed request and limit against the snapshot's OOM */
TEST(oom_message_belongs_to_the_snapshot_only_when_request_and_limit_agree) {
  struct cap_inference ci;
  memset(&ci, 0, sizeof ci);
  ci.has_oom = 1;
  ci.request = 3674112000ull;                           /* 3.42 GiB */
  ci.segment = 3674112000ull;
  ci.lo = 14035000000ull;
  ci.hi = 17363000000ull;
  struct oom_message m;
  memset(&m, 0, sizeof m);
  m.request_bytes = (uint64_t)(3.415 * 1073741824.0);   /* "3.42 GiB" as printed: [3.415, 3.425) GiB */
  m.request_hi = (uint64_t)(3.425 * 1073741824.0);
  m.limit = (uint64_t)(15.65 * 1073741824.0);
  m.limit_hi = (uint64_t)(15.655 * 1073741824.0);
  char why[400];
  CHECK(limit_message_fits(&m, &ci, why, sizeof why));
  m.request_bytes = (uint64_t)(2.105 * 1073741824.0);   /* another run's request, "2.11 GiB" */
  m.request_hi = (uint64_t)(2.115 * 1073741824.0);
  CHECK(!limit_message_fits(&m, &ci, why, sizeof why));
  CHECK_CONTAINS(why, "Tried to allocate 2.11 GiB");
  m.request_bytes = (uint64_t)(3.415 * 1073741824.0);
  m.request_hi = (uint64_t)(3.425 * 1073741824.0);
  m.limit = (uint64_t)(27.26 * 1073741824.0);           /* a limit the snapshot rules out */
  m.limit_hi = m.limit + 10000000;
  CHECK(!limit_message_fits(&m, &ci, why, sizeof why));
  CHECK_CONTAINS(why, "outside what the snapshot proves");
  ci.has_oom = 0;                                       /* no OOM in the snapshot: nothing to hold it against */
  CHECK(limit_message_fits(&m, &ci, why, sizeof why));
}
