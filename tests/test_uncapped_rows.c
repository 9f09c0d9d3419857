/* test_uncapped_rows.c - an uncapped row standing for capped runs that never met their cap
 * (uncapped_rows.h), in `run --uncapped` and in a search given the row whole: the same rows
 * as replaying them (on sim, where a replay repeats exactly), taken only for a strategy
 * blind to caps it never reached and only at caps at or above what the row reserved. */
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "mincap.h"
#include "mincap_spec.h"
#include "replay.h"
#include "results_read.h"
#include "uncapped_rows.h"
#include "test.h"

static const char *const SWEEP = "1.0,1.05,1.1,1.2,1.3,1.5,2.0";

/* rows of a results file whose wall_ns is the marker: the rows taken from a marked file */
static int marked_rows(const char *path, const char *marker, const char *allocator) {
  struct results t;
  char err[600];
  if (results_load(path, &t, err, sizeof err)) return -1;
  int n = 0;
  for (int i = 0; i < t.nrows; i++)
    if (!strcmp(results_get(&t, i, "wall_ns"), marker) && (!allocator || !strcmp(results_get(&t, i, "allocator"), allocator))) n++;
  results_free(&t);
  return n;
}

/* the uncapped rows' file with every wall_ns set to a marker no replay gives */
static void mark_wall(const char *in, const char *out, const char *marker) {
  struct results t;
  char err[600];
  CHECK_EQ(results_load(in, &t, err, sizeof err), 0);
  int c = results_col(&t, "wall_ns");
  FILE *f = fopen(out, "w");
  CHECK(f && c >= 0);
  char *text = test_read_file(in);
  CHECK(text);
  char *nl = strchr(text, '\n');
  fwrite(text, 1, (size_t)(nl - text + 1), f);   /* the header */
  for (int i = 0; i < t.nrows; i++)
    for (int k = 0; k < t.ncols; k++) {
      csv_field(f, k == c ? marker : t.rows[i][k]);
      fputc(k + 1 < t.ncols ? ',' : '\n', f);
    }
  fclose(f);
  free(text);
  results_free(&t);
}

TEST(run_capped_rows_are_their_uncapped_row_where_it_never_met_the_cap) {
  char u[600], m[600], a[600], b[600], err[600];
  snprintf(u, sizeof u, "%s/ur_uncapped.csv", test_tmpdir());
  snprintf(m, sizeof m, "%s/ur_marked.csv", test_tmpdir());
  snprintf(a, sizeof a, "%s/ur_a.csv", test_tmpdir());
  snprintf(b, sizeof b, "%s/ur_b.csv", test_tmpdir());
  snprintf(err, sizeof err, "%s/ur.err", test_tmpdir());
  const char *tr = test_data("gpt_train_short_frames.pickle");
#define SEL "--trace", tr, "--workload", "varlen", "--allocator", "async", "--allocator", "raw", "--allocator", "expandable", \
            "--allocator", "caching:garbage_collection_threshold=0.8", "--allocator", "stitch", "--device", "sim"
  CHECK_EQ(test_cli(NULL, err, "run", SEL, "--quiet", "--out", u, NULL), 0);
  CHECK_EQ(test_cli(NULL, err, "run", SEL, "--cap-x", SWEEP, "--quiet", "--out", a, NULL), 0);
  CHECK_EQ(test_cli(NULL, err, "run", SEL, "--cap-x", SWEEP, "--uncapped", u, "--out", b, NULL), 0);
  char *e = test_read_file(err);
  CHECK_CONTAINS(e, "capped rows taken from");
  free(e);
  char *x = test_read_untimed(a), *y = test_read_untimed(b);
  CHECK(x && y);
  CHECK_STR(x, y);   /* the same rows as replaying every one */
  free(x);
  free(y);
  /* which rows were taken: a marked uncapped file shows them */
  mark_wall(u, m, "424242424242");
  if (test_failed_now()) return;
  CHECK_EQ(test_cli(NULL, err, "run", SEL, "--cap-x", SWEEP, "--uncapped", m, "--quiet", "--out", b, NULL), 0);
  CHECK(marked_rows(b, "424242424242", "async") >= 4);   /* its caps at or above what it reserved, on both inputs */
  CHECK(marked_rows(b, "424242424242", "raw") >= 4);
  CHECK_EQ(marked_rows(b, "424242424242", "expandable"), 0);   /* reads the cap itself, before any refusal */
  CHECK_EQ(marked_rows(b, "424242424242", "caching"), 0);      /* its threshold is a fraction of the cap */
  struct results t, tu;
  char msg[600];
  CHECK_EQ(results_load(b, &t, msg, sizeof msg), 0);
  CHECK_EQ(results_load(u, &tu, msg, sizeof msg), 0);
  for (int i = 0; i < t.nrows; i++) {   /* taken exactly where the uncapped row reserved at most the cap */
    int k = uncapped_row_find(&tu, results_get(&t, i, "workload"), results_get(&t, i, "allocator"), results_get(&t, i, "params"), 1, "sim", 0);
    CHECK(k >= 0);
    int blind = !strcmp(results_get(&t, i, "allocator"), "async") || !strcmp(results_get(&t, i, "allocator"), "raw") ||
                !strcmp(results_get(&t, i, "allocator"), "stitch");
    int within = results_u64(&tu, k, "peak_reserved", NULL) <= results_u64(&t, i, "cap_bytes", NULL);
    CHECK_MSG(!strcmp(results_get(&t, i, "wall_ns"), "424242424242") == (blind && within), "row %d: %s x %s at %s", i,
              results_get(&t, i, "workload"), results_get(&t, i, "allocator"), results_get(&t, i, "cap_bytes"));
  }
  results_free(&t);
  results_free(&tu);
  /* a row of another device kind stands for nothing; a timeline cannot come from a row */
  CHECK_EQ(test_cli(NULL, err, "run", SEL, "--cap-x", SWEEP, "--uncapped", m, "--quiet", "--out", b, "--timeline", a, NULL), 2);
  e = test_read_file(err);
  CHECK_CONTAINS(e, "--uncapped with --timeline");
  free(e);
#undef SEL
}

/* a search given the uncapped row whole answers the probes at caps at or above what it
 * reserved by it (async's search: R, and the three steps above the cap found): the same row,
 * fewer replays; one of a strategy that reads the cap is answered as before */
TEST(mincap_search_takes_the_uncapped_row_for_caps_it_never_reached) {
  struct run_spec s;
  base_spec(&s, "varlen", "async");
  s.validate = 0;
  struct run_result u, r0, r;
  run_result_init(&u);
  CHECK_EQ(replay_run(&s, &u), 0);
  u.model_err = allocator_find("async")->model_err;   /* as uncapped_row_read gives it */
  struct mincap_report rep0, rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r0, &rep0), 0);
  struct mincap_known k = {.uncapped = 1, .peak_requested = u.peak_requested, .peak_reserved = u.peak_reserved, .row = &u, .blind = 1};
  CHECK_EQ(mincap_find_known(&s, 0.005, 0, &k, &r, &rep), 0);
  CHECK_EQ(r.mincap_bytes, r0.mincap_bytes);
  CHECK_EQ(r.peak_reserved, r0.peak_reserved);
  CHECK_STR(r.status, r0.status);
  CHECK(r.model_err == r0.model_err);
  CHECK(rep.runs + 4 <= rep0.runs);   /* the uncapped probe, R, +1%, +2%, +5% at least */
  k.blind = 0;   /* not blind: only its peaks are read */
  CHECK_EQ(mincap_find_known(&s, 0.005, 0, &k, &r, &rep), 0);
  CHECK_EQ(r.mincap_bytes, r0.mincap_bytes);
  CHECK_EQ(rep.runs + 1, rep0.runs);
}

TEST(uncapped_row_stands_only_uncapped_completed_and_within) {
  struct run_result u;
  run_result_init(&u);
  u.completed = 1;
  u.peak_reserved = 100;
  CHECK(uncapped_stands_at(&u, 1, 100));
  CHECK(uncapped_stands_at(&u, 1, 1000));
  CHECK(!uncapped_stands_at(&u, 1, 99));
  CHECK(!uncapped_stands_at(&u, 0, 1000));
  CHECK(!uncapped_stands_at(&u, 1, 0));   /* no cap: nothing to stand for */
  CHECK(!uncapped_stands_at(NULL, 1, 1000));
  u.cap_bytes = 500;
  CHECK(!uncapped_stands_at(&u, 1, 1000));
  u.cap_bytes = 0;
  snprintf(u.status, sizeof u.status, "oom");
  CHECK(!uncapped_stands_at(&u, 1, 1000));
  snprintf(u.status, sizeof u.status, "ok; not modelled: private memory pools");
  CHECK(uncapped_stands_at(&u, 1, 1000));
  u.completed = 0;
  CHECK(!uncapped_stands_at(&u, 1, 1000));
}
