/* test_cli_outputs.c - nothing a user gave is lost: an output that is an input is refused
 * before anything is written; a failed run leaves every existing output byte for byte as
 * it was; export never leaves a partial trace; a pipe given as --trace is read once;
 * compare refuses a strategy in neither file and empty metrics. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test.h"

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/o_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/o_err.txt", test_tmpdir());
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) { fputs(text, f); fclose(f); }
}

static int copy(const char *from, const char *to) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
  return system(cmd);
}

static int same_bytes(const char *a, const char *b) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
  return system(cmd) == 0;
}

TEST(outputs_an_output_that_is_an_input_is_refused_untouched) {
  paths();
  char snap[512], keep[512];
  snprintf(snap, sizeof snap, "%s/snap.pickle.gz", test_tmpdir());
  snprintf(keep, sizeof keep, "%s/snap.orig", test_tmpdir());
  CHECK_EQ(copy(test_data("leaky_losses.pickle.gz"), snap), 0);
  CHECK_EQ(copy(snap, keep), 0);
  const char *flags[] = {"--out", "--timeline", "--breakdown"};
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, flags[i], snap, "--device", "sim", "--quiet", NULL), 2);
    char *e = test_read_file(errp);
    CHECK_CONTAINS(e, "same file as the input");
    free(e);
    CHECK(same_bytes(snap, keep));
  }
  CHECK_EQ(test_cli(outp, errp, "export", "--trace", snap, "--out", snap, NULL), 2);
  CHECK(same_bytes(snap, keep));
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", snap, "--out", snap, "--quiet", NULL), 2);
  CHECK(same_bytes(snap, keep));
  /* a hard link is the same file under another name */
  char link_path[512];
  snprintf(link_path, sizeof link_path, "%s/snap.link", test_tmpdir());
  unlink(link_path);
  CHECK_EQ(link(snap, link_path), 0);
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--out", link_path, "--device", "sim", "--quiet", NULL), 2);
  CHECK(same_bytes(snap, keep));
}

TEST(outputs_a_failed_run_leaves_existing_files_as_they_were) {
  paths();
  char out[512], tl[512], bd[512];
  snprintf(out, sizeof out, "%s/exist.csv", test_tmpdir());
  snprintf(tl, sizeof tl, "%s/exist_tl.csv", test_tmpdir());
  snprintf(bd, sizeof bd, "%s/exist_bd.csv", test_tmpdir());
  put(out, "old results\n");
  put(tl, "old timeline\n");
  put(bd, "old breakdown\n");
  /* the first row runs, the second strategy is refused at its row: exit 2 */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--allocator", "raw", "--allocator",
                    "caching:max_split_size_mb=5", "--out", out, "--timeline", tl, "--breakdown", bd, "--device", "sim", "--quiet", NULL), 2);
  char *t = test_read_file(out);
  CHECK_STR(t, "old results\n");
  free(t);
  t = test_read_file(tl);
  CHECK_STR(t, "old timeline\n");
  free(t);
  t = test_read_file(bd);
  CHECK_STR(t, "old breakdown\n");
  free(t);
  /* and a successful one replaces them whole */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--out", out, "--device", "sim", "--quiet", NULL), 0);
  t = test_read_file(out);
  CHECK(!strncmp(t, "run_id,", 7));
  free(t);
}

TEST(outputs_export_never_leaves_a_partial_trace) {
  paths();
  char bad[512], out[512];
  snprintf(bad, sizeof bad, "%s/bad_native.csv", test_tmpdir());
  snprintf(out, sizeof out, "%s/export.csv", test_tmpdir());
  put(bad, "# fragbench-trace v1\nop,id,size,stream,device\na,1,1024,0,0\na,2,2048,0,0\nf,1,,0,0\nzz,3,1,0,0\n");
  unlink(out);
  CHECK_EQ(test_cli(outp, errp, "export", "--trace", bad, "--out", out, NULL), 2);
  struct stat st;
  CHECK(stat(out, &st) != 0);   /* nothing under the target name */
  put(out, "previous\n");
  CHECK_EQ(test_cli(outp, errp, "export", "--trace", bad, "--out", out, NULL), 2);
  char *t = test_read_file(out);
  CHECK_STR(t, "previous\n");
  free(t);
}

TEST(outputs_a_pipe_as_trace_is_read_once) {
  paths();
  char cmd[1600], out[512];
  snprintf(out, sizeof out, "%s/pipe.csv", test_tmpdir());
  snprintf(cmd, sizeof cmd, "cat '%s' | build/fragbench run --trace /dev/stdin --allocator caching --device sim --quiet --out '%s' 2>'%s'",
           test_data("leaky_losses.pickle.gz"), out, errp);
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  CHECK_EQ(system(cmd), 0);
  char *t = test_read_file(out);
  CHECK_CONTAINS(t, ",caching,");
  CHECK_CONTAINS(t, ",ok,1,");
  free(t);
}

TEST(outputs_compare_refuses_an_unknown_strategy_and_empty_metrics) {
  paths();
  const char *base = "results/baseline-sim.csv";
  if (access(base, R_OK)) SKIP("no baseline");
  CHECK_EQ(test_cli(outp, errp, "compare", base, base, "--allocator", "nosuch", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown allocator 'nosuch'; known:");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "compare", base, base, "--metric", "", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "compare", base, base, "--metric", "peak_reserved,,ns_per_op", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "compare", base, base, "--bogus", NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown option '--bogus'");
  free(e);
}

/* an interrupted run (SIGTERM mid-row) leaves the old file and no temporary beside it */
TEST(outputs_an_interrupted_run_leaves_the_old_file_and_no_litter) {
  paths();
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  char dir[512], out[600], cmd[1600];
  snprintf(dir, sizeof dir, "%s/intr", test_tmpdir());
  mkdir(dir, 0777);
  snprintf(out, sizeof out, "%s/results.csv", dir);
  put(out, "old\n");
  snprintf(cmd, sizeof cmd, "timeout -s TERM 1 build/fragbench run --workload train_loop:iters=400000 --device sim --quiet "
           "--out '%s' 2>/dev/null", out);
  CHECK(system(cmd) != 0);   /* killed before the end */
  char *t = test_read_file(out);
  CHECK_STR(t, "old\n");
  free(t);
  snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
  CHECK_EQ(system(cmd), 0);
}
