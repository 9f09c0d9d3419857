/* test_cli.c - the command line as scripts use it: exit codes 0/1/2, messages that name
 * the bad argument and list what is known, --out, --device auto/cuda, list. */
#include <stdlib.h>
#include "test.h"
#include "device.h"
#include "workload.h"

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/err.txt", test_tmpdir());
}

TEST(cli_unknown_workload_exits_2_and_lists) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "trian_loop", "--device", "sim", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown workload 'trian_loop'");
  CHECK_CONTAINS(e, "script");
  free(e);
}

TEST(cli_unknown_allocator_exits_2_and_lists) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--allocator", "cachng", "--device", "sim", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown allocator 'cachng'");
  CHECK_CONTAINS(e, "raw");
  free(e);
}

TEST(cli_unknown_parameter_exits_2) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:evnts=a1=1K", "--device", "sim", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown parameter 'evnts'");
  CHECK_CONTAINS(e, "events repeat");
  free(e);
}

TEST(cli_malformed_byte_size_exits_2) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K", "--cap-bytes", "12Q", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "--cap-bytes '12Q'");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K", "--sim-total", "lots", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K", "--cap", "1.5", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "run", "--bogus", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "frobnicate", NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown command 'frobnicate'");
  free(e);
}

TEST(cli_device_cuda_without_gpu_exits_1) {
  if (test_gpu_visible(NULL)) SKIP("a GPU is visible");
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--device", "cuda", NULL), 1);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "--device cuda");
  free(e);
}

TEST(cli_device_auto_says_sim) {
  if (test_gpu_visible(NULL)) SKIP("a GPU is visible");
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", NULL), 0);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "using the simulated device");
  free(e);
  char *o = test_read_file(outp);
  CHECK(!strncmp(o, "run_id,version,workload,", 24));
  CHECK_CONTAINS(o, ",sim,");
  free(o);
}

TEST(cli_out_file_holds_the_rows) {
  paths();
  char csv[512];
  snprintf(csv, sizeof csv, "%s/x.csv", test_tmpdir());
  const char *wl = workload_find("train_loop") ? "train_loop" : "script:events=a1=3K/a2=1K/f1/f2";
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", wl, "--allocator", "raw", "--device", "sim", "--out", csv, NULL), 0);
  char *t = test_read_file(csv);
  CHECK(t != NULL);
  char *row = strchr(t, '\n') + 1;   /* the header is the first line */
  /* fields 20..23: peak_requested, peak_allocated, peak_reserved, overhead */
  char *f = row;
  for (int i = 0; i < 19; i++) f = strchr(f, ',') + 1;
  unsigned long long req, alloc, res;
  double ov;
  CHECK(sscanf(f, "%llu,%llu,%llu,%lf", &req, &alloc, &res, &ov) == 4);
  CHECK(req > 0 && req <= alloc && alloc <= res);
  CHECK(ov >= 1.0);
  CHECK_CONTAINS(row, ",ok,1,");
  free(t);
}

TEST(cli_list_names_everything) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "list", NULL), 0);
  char *o = test_read_file(outp);
  CHECK_CONTAINS(o, "raw");
  CHECK_CONTAINS(o, "script");
  CHECK_CONTAINS(o, "(default 1)");
  free(o);
}

TEST(cli_help_explains) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "--help", NULL), 0);
  char *o = test_read_file(outp);
  CHECK_CONTAINS(o, "--cap-x");
  CHECK_CONTAINS(o, "exit status");
  free(o);
}

/* readspeed reads a snapshot through and reports its MB/s; a file it cannot read makes
 * it exit 1 naming the file */
TEST(cli_readspeed_reports_and_fails_on_a_bad_file) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "readspeed", "tests/data/gpt_train_short_frames.pickle", NULL), 0);
  char *o = test_read_file(outp);
  CHECK_CONTAINS(o, "2247 events");
  CHECK_CONTAINS(o, "pickle reading:");
  free(o);
  CHECK_EQ(test_cli(outp, errp, "readspeed", "tests/data/no_such.pickle", NULL), 1);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "no_such.pickle");
  free(e);
}
