/* test_compare_input.c - what `compare` accepts as a results file: rows that repeat
 * (numbered "#2", "#3" without reading a freed key), no short rows, no nan or inf in a
 * judged column, a metric column missing from NEW refused as from OLD, and a bound on the
 * line length of any results file (/dev/zero ends at it). */
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "compare.h"

static const char *HDR = "run_id,version,workload,trace,allocator,params,device,cap_bytes,cap_x,status,completed,events,peak_reserved\n";

TEST(compare_numbers_repeated_rows_and_matches_a_file_with_itself) {
  /* what `run --workload W --workload W --allocator A --allocator B` writes: each row twice */
  char text[2048];
  snprintf(text, sizeof text, "%s"
           "1,0.1.0,train_loop,,raw,,sim,,,ok,1,10,100\n2,0.1.0,train_loop,,caching,,sim,,,ok,1,10,200\n"
           "3,0.1.0,train_loop,,raw,,sim,,,ok,1,10,100\n4,0.1.0,train_loop,,caching,,sim,,,ok,1,10,200\n"
           "5,0.1.0,train_loop,,raw,,sim,,,ok,1,10,100\n", HDR);
  const char *p = test_write_tmp("repeat.csv", text);
  struct results a, b;
  char err[512];
  CHECK_EQ(results_load(p, &a, err, sizeof err), 0);
  CHECK_EQ(results_load(p, &b, err, sizeof err), 0);
  struct cmp_opts o;
  cmp_opts_init(&o);
  CHECK_EQ(cmp_check_columns(&a, &o, err, sizeof err), 0);
  struct cmp_report r;
  cmp_run(&a, &b, &o, &r);
  CHECK_EQ(r.compared, 5);
  CHECK_EQ(r.fail, 0);
  CHECK_EQ(r.newrows + r.missing, 0);
  int n2 = 0, n3 = 0;
  for (int i = 0; i < r.nrows; i++) {
    n2 += strstr(r.rows[i].label, "#2") != NULL;
    n3 += strstr(r.rows[i].label, "#3") != NULL;
  }
  CHECK_EQ(n2, 2);   /* raw #2, caching #2 */
  CHECK_EQ(n3, 1);   /* raw #3 */
  cmp_report_free(&r);
  results_free(&a);
  results_free(&b);
  cmp_opts_free(&o);
}

static int check_file(const char *name, const char *text, struct cmp_opts *o, char *err, size_t len) {
  struct results t;
  const char *p = test_write_tmp(name, text);
  if (results_load(p, &t, err, len)) return -1;
  int rc = cmp_check_columns(&t, o, err, len);
  results_free(&t);
  return rc;
}

TEST(compare_refuses_a_short_row_with_its_file_and_line) {
  char text[1024], err[512];
  snprintf(text, sizeof text, "%s1,0.1.0,train_loop,,raw,,sim,,,ok,1,10,100\n2,0.1.0,train_loop,,raw,,sim,,,ok\n", HDR);
  struct cmp_opts o;
  cmp_opts_init(&o);
  CHECK_EQ(check_file("short.csv", text, &o, err, sizeof err), 2);
  CHECK_CONTAINS(err, "short.csv:3: 10 fields, the header has 13");
}

TEST(compare_refuses_nan_or_inf_in_a_judged_column) {
  char text[1024], err[512];
  struct cmp_opts o;
  cmp_opts_init(&o);
  snprintf(text, sizeof text, "%s1,0.1.0,train_loop,,raw,,sim,,,ok,1,10,nan\n", HDR);
  CHECK_EQ(check_file("nan.csv", text, &o, err, sizeof err), 2);
  CHECK_CONTAINS(err, "nan.csv:2: peak_reserved is 'nan'");
  snprintf(text, sizeof text, "%s1,0.1.0,train_loop,,raw,,sim,,,ok,1,10,-inf\n", HDR);
  CHECK_EQ(check_file("inf.csv", text, &o, err, sizeof err), 2);
  snprintf(text, sizeof text, "%s1,0.1.0,train_loop,,raw,,sim,,,ok,1,10,\n", HDR);   /* empty: not measured */
  CHECK_EQ(check_file("empty.csv", text, &o, err, sizeof err), 0);
  snprintf(text, sizeof text, "%s1,0.1.0,nan,,raw,,sim,,,ok,1,10,5\n", HDR);          /* not judged */
  CHECK_EQ(check_file("nanname.csv", text, &o, err, sizeof err), 0);
}

TEST(compare_refuses_a_missing_metric_column_in_old_and_in_new_alike) {
  char err[512];
  struct cmp_opts o;
  cmp_opts_init(&o);
  o.metrics[0] = "peak_allocated";
  o.nmetrics = 1;
  char text[1024];
  snprintf(text, sizeof text, "%s1,0.1.0,train_loop,,raw,,sim,,,ok,1,10,100\n", HDR);
  CHECK_EQ(check_file("nometric.csv", text, &o, err, sizeof err), 2);   /* the same call on OLD and NEW */
  CHECK_CONTAINS(err, "--metric peak_allocated: no such column");
}

TEST(results_read_bounds_the_line_length) {
  struct results t;
  char err[512];
  CHECK_EQ(results_load("/dev/zero", &t, err, sizeof err), 2);
  CHECK_CONTAINS(err, "/dev/zero:1: a line longer than 1048576 bytes");
  size_t n = RESULTS_LINE_MAX + 10;
  char *big = malloc(n + 64);
  CHECK(big);
  strcpy(big, "run_id,workload\n1,");
  size_t at = strlen(big);
  memset(big + at, 'x', n);
  big[at + n] = 0;
  CHECK_EQ(results_load(test_write_tmp("long_line.csv", big), &t, err, sizeof err), 2);
  CHECK_CONTAINS(err, "long_line.csv:2: a line longer than");
  free(big);
}

/* the tolerance file: a line is never cut (over 510 characters, or at a NUL byte): refused,
 * naming the file and line */
TEST(compare_tolerance_file_lines_are_never_cut) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/tol.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/tol.err", test_tmpdir());
  char longline[700];
  memset(longline, 'x', 600);
  snprintf(longline + 600, sizeof longline - 600, ",exact\n");
  char text[800];
  snprintf(text, sizeof text, "peak_reserved,exact\n%s", longline);
  const char *tol = test_write_tmp("tol_long.csv", text);
  const char *csv = test_data("../../results/baseline-sim.csv");
  CHECK_EQ(test_cli(outp, errp, "compare", csv, csv, "--tolerance", tol, NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "tol_long.csv:2: a line over 510 characters");
  free(e);
  char nul[64];
  snprintf(nul, sizeof nul, "%s/tol_nul.csv", test_tmpdir());
  FILE *f = fopen(nul, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fwrite("peak_reserved,ex\0act\npeak_allocated,exact\n", 1, 42, f);
  fclose(f);
  CHECK_EQ(test_cli(outp, errp, "compare", csv, csv, "--tolerance", nul, NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "tol_nul.csv:1: a NUL byte in the line");
  free(e);
}
