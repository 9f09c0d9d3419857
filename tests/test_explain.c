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
