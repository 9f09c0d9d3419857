/* test_results_read.c - reading results CSVs back: both header forms, quoting, short
 * rows, and each bad input with its file and line. */
#include <stdlib.h>
#include "test.h"
#include "results_read.h"

TEST(results_read_accepts_the_old_comment_line_and_quotes) {
  const char *p = test_write_tmp("old.csv", "# fragbench results v1\nrun_id,workload,params,peak_reserved\n"
                                       "1,train_loop,\"a=1,b=\"\"x\"\"\",100\n2,random,,\n");
  struct results t; char err[256];
  CHECK_EQ(results_load(p, &t, err, sizeof err), 0);
  CHECK_EQ(t.nrows, 2);
  CHECK_STR(results_get(&t, 0, "params"), "a=1,b=\"x\"");
  CHECK_EQ(results_u64(&t, 0, "peak_reserved", NULL), 100);
  int ok = 1;
  results_u64(&t, 1, "peak_reserved", &ok);
  CHECK(!ok);
  CHECK_STR(results_get(&t, 1, "no_such_column"), "");
  results_free(&t);
}

TEST(results_read_takes_a_header_first_file_and_short_rows) {
  const char *p = test_write_tmp("new.csv", "run_id,workload,overhead\r\n1,w,1.5\r\n2,v\r\n");
  struct results t; char err[256];
  CHECK_EQ(results_load(p, &t, err, sizeof err), 0);
  CHECK_EQ(t.nrows, 2);
  CHECK(results_num(&t, 0, "overhead", NULL) == 1.5);
  CHECK_STR(results_get(&t, 1, "overhead"), "");
  results_free(&t);
}

TEST(results_read_names_the_file_and_line_of_bad_input) {
  struct results t; char err[256];
  const char *p = test_write_tmp("long.csv", "run_id,workload\n1,w\n2,w,extra\n");
  CHECK_EQ(results_load(p, &t, err, sizeof err), 2);
  CHECK_CONTAINS(err, "long.csv:3: 3 fields, the header has 2");
  p = test_write_tmp("quote.csv", "run_id,workload\n1,\"w\n");
  CHECK_EQ(results_load(p, &t, err, sizeof err), 2);
  CHECK_CONTAINS(err, "unclosed quote");
  p = test_write_tmp("nohdr.csv", "a,b\n1,2\n");
  CHECK_EQ(results_load(p, &t, err, sizeof err), 2);
  CHECK_CONTAINS(err, "expected a fragbench results header");
  CHECK_EQ(results_load("/nonexistent/x.csv", &t, err, sizeof err), 2);
  CHECK_CONTAINS(err, "/nonexistent/x.csv: cannot read");
}
