/* test_explain.c - `fragbench explain`: the memory at PyTorch's OOM under the snapshot's
 * own strategy (segments, largest free block, why the request did not fit), the picture,
 * and every bad input answered with a clear message and exit 2. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "test.h"
#include "explain.h"

#define MIB (1ULL << 20)

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/err.txt", test_tmpdir());
}

TEST(explain_at_oom_shows_the_state_before_pytorchs_failed_request) {
  struct explain_opts o = {.trace = "tests/variants/oom_fragmented.pickle", .trace_device = -1, .at = "oom"};
  struct explain_state st;
  char err[FB_ERRLEN];
  CHECK_EQ(explain_run(&o, &st, err), 0);
  CHECK(st.at_oom);
  CHECK_EQ(st.event, 140);
  CHECK_STR(st.cap_source, "inferred");
  CHECK_STR(st.allocator, "caching");
  CHECK(st.has_segments);
  CHECK_EQ(st.nsegments, 20);
  CHECK_EQ(st.reserved, 40 * MIB);
  CHECK_EQ(st.allocated, 10 * MIB);
  CHECK_EQ(st.free_inside, 30 * MIB);
  CHECK_EQ(st.free_pieces, 20);
  CHECK_EQ(st.largest_free, 3 * MIB / 2);
  CHECK_EQ(st.releasable, 0);                 /* every free piece is inside a split segment */
  CHECK(st.has_request);
  CHECK(!st.fits);
  CHECK_EQ(st.request, 25 * MIB);
  CHECK_EQ(st.segment, 26 * MIB);
  explain_free(&st);
  /* raw needs no segments: the request fits there under the same cap */
  o.allocator = "raw";
  CHECK_EQ(explain_run(&o, &st, err), 0);
  CHECK(!st.has_segments);
  CHECK(st.fits);
  explain_free(&st);
}

TEST(explain_cli_prints_largest_free_block_and_writes_a_picture) {
  paths();
  char png[600];
  snprintf(png, sizeof png, "%s/explain.png", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", "tests/variants/oom_fraction.pickle", "--at", "oom", "--plot", png, NULL), 0);
  char *o = test_read_file(outp), *e = test_read_file(errp);
  CHECK_CONTAINS(o, "before event 6 of 8 (PyTorch's OOM)");
  CHECK_CONTAINS(o, "largest free block 300.00 MiB");
  CHECK_CONTAINS(o, "[300.00 MiB free]");
  CHECK_CONTAINS(o, "why nothing fit");
  CHECK_CONTAINS(o, "release-and-retry could give back 300.00 MiB");
  CHECK_CONTAINS(o, "PyTorch recorded 480.00 MiB on stream 0");
  char dat[600];
  snprintf(dat, sizeof dat, "%s/explain.dat", test_tmpdir());
  struct stat sb;
  CHECK(stat(dat, &sb) == 0 && sb.st_size > 0);
  if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
    CHECK_CONTAINS(e, "wrote");
    CHECK(stat(png, &sb) == 0 && sb.st_size > 1000);
  } else {
    CHECK_CONTAINS(e, "gnuplot is not installed");
  }
  free(o);
  free(e);
}

static void bad(const char *at, const char *trace, const char *want) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", trace, "--at", at, NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, want);
  free(e);
}

TEST(explain_at_past_the_end_exits_2) {
  bad("99999", "tests/variants/proto2.pickle", "--at 99999: past the end: tests/variants/proto2.pickle has 84 events (0..83)");
}

TEST(explain_at_an_event_that_is_not_an_alloc_exits_2) {
  bad("40", "tests/variants/proto2.pickle", "event 40 is an empty_cache, not an alloc");
  bad("7", "tests/variants/oom_fraction.pickle", "event 7 is a free, not an alloc");
}

TEST(explain_at_oom_on_a_trace_without_oom_exits_2) {
  bad("oom", "tests/variants/proto2.pickle", "has no OOM");
}

TEST(explain_bad_at_and_plot_exit_2) {
  bad("-3", "tests/variants/proto2.pickle", "expected oom, peak or an event index");
  paths();
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", "tests/variants/proto2.pickle", "--plot", "x.jpg", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "explain", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", "tests/variants/none.pickle", NULL), 2);
}

static char *explain_out(const char *trace, const char *at, const char *plot) {
  paths();
  if (test_cli(outp, errp, "explain", "--trace", trace, "--at", at, plot ? "--plot" : NULL, plot, NULL) != 0) return NULL;
  return test_read_file(outp);
}

TEST(explain_at_oom_gives_where_the_largest_live_blocks_were_allocated) {
  /* oom_frames: the 200 MiB block was freed, the 300 MiB one (fn_3 < fn_1 < fn_2) lives at the OOM */
  char *o = explain_out("tests/variants/oom_frames.pickle", "oom", NULL);
  CHECK(o);
  CHECK_CONTAINS(o, "the one block live at the OOM, where it was allocated:\n"
                    "  300.00 MiB  fn_3 (/very/long/path/to/the/module/number/3/mod.py:3); fn_1 (");
  CHECK(!strstr(o, "200.00 MiB  fn_0"));   /* freed before the OOM */
  free(o);
  struct explain_opts eo = {.trace = "tests/variants/oom_frames.pickle", .trace_device = -1, .at = "oom"};
  struct explain_state st;
  char err[FB_ERRLEN];
  CHECK_EQ(explain_run(&eo, &st, err), 0);
  CHECK(st.frames_known);
  CHECK_EQ(st.live_at_oom, 1);
  CHECK_EQ(st.ntop, 1);
  CHECK_EQ(st.top[0].size, 300 * MIB);
  explain_free(&st);
}

TEST(explain_without_frames_says_which_record_memory_history_arguments_record_them) {
  char *o = explain_out("tests/variants/oom_device.pickle", "oom", NULL);
  CHECK(o);
  CHECK_CONTAINS(o, "torch.cuda.memory._record_memory_history(enabled='all', context='all', stacks='python'");
  free(o);
  o = explain_out("tests/variants/oom_frames.pickle", "oom", NULL);   /* frames recorded: no advice */
  CHECK(o && !strstr(o, "_record_memory_history"));
  free(o);
}

TEST(explain_plot_title_says_the_cap_was_inferred_and_no_request_row_stands_empty) {
  char png[600], gp[600];
  snprintf(png, sizeof png, "%s/inferred.png", test_tmpdir());
  snprintf(gp, sizeof gp, "%s/inferred.gp", test_tmpdir());
  char *o = explain_out("tests/variants/oom_fraction.pickle", "oom", png);
  CHECK(o);
  free(o);
  char *g = test_read_file(gp);
  CHECK(g);
  CHECK_CONTAINS(g, "inferred from the OOM (limit ");
  CHECK_CONTAINS(g, "set ytics (\"request\" 0");
  CHECK_CONTAINS(g, "set label 1 \"480.00 MiB");   /* the request's size beside its bar */
  CHECK(!strstr(g, "shown\" at graph"));            /* no label over the title */
  free(g);
  /* at a peak there is no request: no request row */
  snprintf(png, sizeof png, "%s/peak.png", test_tmpdir());
  snprintf(gp, sizeof gp, "%s/peak.gp", test_tmpdir());
  o = explain_out("tests/variants/proto2.pickle", "peak", png);
  CHECK(o);
  free(o);
  g = test_read_file(gp);
  CHECK(g);
  CHECK(!strstr(g, "\"request\""));
  CHECK_CONTAINS(g, "set ytics (\"#1\" 1");
  free(g);
}

/* A real capture (tests/data/recorded/capture: PyTorch 2.11, stacks='python'): a live
 * block's alloc event names the frames list of the segments list by a memo GET, and explain
 * still gives every live block its stack (it said "record stack frames" before), and the
 * side file beside it gives the limit with no flag. */
TEST(explain_real_capture_gives_live_blocks_their_stacks) {
  char outp[512], errp[512], csv[512];
  snprintf(outp, sizeof outp, "%s/cap.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/cap.err", test_tmpdir());
  snprintf(csv, sizeof csv, "%s/cap_blocks.csv", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", "tests/data/recorded/capture/snapshot.pickle.gz", "--blocks-csv", csv, NULL), 0);
  char *o = test_read_file(outp), *e = test_read_file(errp), *c = test_read_file(csv);
  CHECK_CONTAINS(e, "from snapshot.meta.json beside the snapshot");
  CHECK_CONTAINS(o, "the largest of the 15 blocks live at the OOM, where they were allocated:");
  CHECK(o && !strstr(o, "record stack frames before the run"));
  CHECK(o && !strstr(o, "(no stack recorded)"));
  int with = 0, allocated = 0;
  for (char *l = c ? strchr(c, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n')) {
    char *end = strchr(l + 1, '\n');
    if (end) *end = 0;
    if (strstr(l + 1, ",allocated,")) { allocated++; with += strstr(l + 1, "grow (build/cc/job.py:9)") != NULL; }
    if (end) *end = '\n';
  }
  CHECK_EQ(allocated, 15);
  CHECK_EQ(with, 15);
  free(o); free(e); free(c);
}
