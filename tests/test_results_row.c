/* test_results_row.c - a results CSV row read back (results_row_run) is written again as
 * the same line: rows that completed, ran out, were skipped or failed, with figures that
 * do not apply (empty cells), quantiles or none, quoted fields and a trace's settings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "replay.h"
#include "results_read.h"
#include "results_row.h"
#include "test.h"

static void replayed(const char *trace, const char *workload, const char *alloc, uint64_t cap, struct run_result *r) {
  struct run_spec s = {.trace = trace, .workload = workload, .trace_device = -1, .world = 1, .quiet = 1, .seed = 1,
                       .allocator = alloc, .cap_bytes = cap};
  s.device.kind = "sim";
  run_result_init(r);
  replay_run(&s, r);
}

TEST(results_rows_read_back_write_the_same_lines) {
  enum { N = 7 };
  struct run_result *r = calloc(N, sizeof *r);
  CHECK(r);
  replayed(test_data("gpt_train_short_frames.pickle"), NULL, "caching", 0, &r[0]);   /* completed, quantiles */
  replayed(NULL, "varlen", "caching", 64ull << 20, &r[1]);                            /* ran out: first_oom_event */
  replayed(NULL, "varlen", "async", 0, &r[2]);                                        /* a model's error */
  replayed(NULL, "varlen", "nosuch", 0, &r[3]);                                       /* failed before replaying */
  run_result_init(&r[4]);
  snprintf(r[4].workload, sizeof r[4].workload, "a \"quoted\", name");
  snprintf(r[4].status, sizeof r[4].status, "skipped: needs a GPU");
  r[4].mincap_bytes = 12345;
  r[4].cap_lo = 7;
  r[4].cap_hi = 9;
  snprintf(r[4].cap_source, sizeof r[4].cap_source, "inferred");
  replayed(test_data("gpt_train_short_frames.pickle"), NULL, "recorded", 0, &r[5]);  /* alloc_conf from the trace */
  r[5].mincap_bytes = 1ull << 30;
  r[5].mincap_x = 1.25;
  r[5].cap_x = 1.05;
  r[5].imbalance = 0.5;
  r[6] = r[0];
  r[6].timed_samples = 0;   /* no quantiles */
  r[6].ns_per_op = NAN;
  char *path = (char *)test_write_tmp("rows_once.csv", "");
  char p1[600], p2[600];
  snprintf(p1, sizeof p1, "%s", path);
  snprintf(p2, sizeof p2, "%s/rows_twice.csv", test_tmpdir());
  FILE *f = fopen(p1, "w");
  CHECK(f);
  csv_write_header(f);
  for (int i = 0; i < N; i++) csv_write_row(f, "1", &r[i]);
  fclose(f);
  struct results t;
  char err[600];
  CHECK_EQ(results_load(p1, &t, err, sizeof err), 0);
  CHECK_EQ(t.nrows, N);
  f = fopen(p2, "w");
  CHECK(f);
  csv_write_header(f);
  for (int i = 0; i < N; i++) {
    struct run_result back;
    results_row_run(&t, i, &back);
    csv_write_row(f, "1", &back);
    if (i == 1) CHECK(back.first_oom_event >= 0 && !back.completed);
    if (i == 6) CHECK(!back.timed_samples);
  }
  fclose(f);
  results_free(&t);
  char *a = test_read_file(p1), *b = test_read_file(p2);
  CHECK(a && b);
  CHECK_STR(a, b);
  CHECK_CONTAINS(a, "\"a \"\"quoted\"\", name\"");
  free(a);
  free(b);
  free(r);
}
