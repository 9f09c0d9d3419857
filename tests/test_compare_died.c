/* test_compare_died.c - `fragbench compare` on rows that ran out of memory on either
 * side (never explained or judged by their figures: how far a run got is not what it
 * needs), on rows whose cap or settings changed between OLD and NEW (matched, with the
 * change said, or left missing/new with what the other side has), and the numbers it
 * reads ("123abc", "-5", "0x10" refused as malformed; a header far wider than a results
 * file refused at the header). */
#include <stdlib.h>
#include <time.h>
#include "test.h"
#include "compare.h"

#define H "run_id,version,workload,trace,allocator,params,device,cap_bytes,cap_x,status,completed,events,first_oom_event,peak_requested,peak_reserved,overhead\n"
/* caps of 19.79 GiB and 17.42 GiB (25% of two devices) */
#define CAP1 "21249064960"
#define CAP2 "18704277504"

static char outp[512], errp[512];
static int cmp(const char *old, const char *new, char **out, char **err, const char *extra) {
  snprintf(outp, sizeof outp, "%s/cd_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/cd_err.txt", test_tmpdir());
  const char *po = test_write_tmp("cd_old.csv", old), *pn = test_write_tmp("cd_new.csv", new);
  int rc = extra ? test_cli(outp, errp, "compare", po, pn, "--tolerance", extra, NULL) : test_cli(outp, errp, "compare", po, pn, NULL);
  *out = test_read_file(outp);
  *err = test_read_file(errp);
  return rc;
}

TEST(compare_a_row_that_died_on_both_sides_is_not_explained_by_its_figures) {
  char *out, *err;
  /* the CI case: both capped, both out of memory; NEW got less far and asked for less on the way */
  int rc = cmp(H "1,0.1.0,w,,caching,,sim," CAP1 ",,oom,0,1000,400,16589783040,17550000000,1.058\n",
               H "1,0.1.0,w,,caching,,sim," CAP1 ",,oom,0,1000,300,15709000000,20421700000,1.300\n", &out, &err, NULL);
  CHECK_EQ(rc, 0);   /* it died before: no regression to fail on */
  CHECK_CONTAINS(out, "oom      w caching cap 19.79 GiB  status  oom  oom  ran out of memory at the cap on both sides (cap 19.79 GiB, at event "
                      "400; cap 19.79 GiB, at event 300): its figures are how far it got, not compared");
  CHECK(!strstr(out, "asks for less"));
  CHECK(!strstr(out, "fragmentation"));
  CHECK_CONTAINS(out, "1 out of memory on both sides (not compared)");
  free(out);
  free(err);
}

TEST(compare_a_row_that_completed_and_dies_now_fails_saying_so_never_less_fragmentation) {
  char *out, *err;
  int rc = cmp(H "1,0.1.0,v,,caching,,sim," CAP1 ",,ok,1,1000,,1000000000,1088000000,1.088\n",
               H "1,0.1.0,v,,caching,,sim," CAP1 ",,oom,0,1000,500,1000000000,1008000000,1.008\n", &out, &err, NULL);
  CHECK_EQ(rc, 1);
  CHECK_CONTAINS(out, "worse    v caching cap 19.79 GiB  status");
  CHECK_CONTAINS(out, "ok  oom  completed before, dies now (cap 19.79 GiB, at event 500)\n");
  CHECK(!strstr(out, "less fragmentation"));
  CHECK(!strstr(out, "  peak_reserved  "));   /* no line of its figures */
  free(out);
  free(err);
  /* and back: it died before and completes now */
  rc = cmp(H "1,0.1.0,v,,caching,,sim," CAP1 ",,oom,0,1000,500,1000000000,1008000000,1.008\n",
           H "1,0.1.0,v,,caching,,sim," CAP1 ",,ok,1,1000,,1000000000,1088000000,1.088\n", &out, &err, NULL);
  CHECK_EQ(rc, 0);
  CHECK_CONTAINS(out, "better   v caching cap 19.79 GiB  status");
  CHECK_CONTAINS(out, "oom   ok  died before (cap 19.79 GiB, at event 500), completes now\n");
  CHECK(!strstr(out, "fragmentation"));
  free(out);
  free(err);
}

TEST(compare_with_a_tolerance_file_notes_a_dead_rows_figures_instead_of_explaining_them) {
  char *out, *err;
  const char *tol = test_write_tmp("cd_tol.csv", "column,mode,abs,rel,factor\nrun_id,ignore,,,\n");
  int rc = cmp(H "1,0.1.0,w,,caching,,sim," CAP1 ",,oom,0,1000,400,16589783040,17550000000,1.058\n",
               H "1,0.1.0,w,,caching,,sim," CAP1 ",,oom,0,1000,300,15709000000,20421700000,1.300\n", &out, &err, tol);
  CHECK_EQ(rc, 1);   /* the tolerance file judges every column exactly */
  CHECK_CONTAINS(out, "peak_reserved    16.34 GiB  19.02 GiB  +16.36%  ran out of memory at the cap on both sides (cap 19.79 GiB; cap 19.79 "
                      "GiB): its figures are how far it got, not what it needs");
  CHECK(!strstr(out, "asks for less"));
  CHECK(!strstr(out, "worse fragmentation"));
  free(out);
  free(err);
}

TEST(compare_matches_rows_across_a_cap_change_and_says_the_caps) {
  char *out, *err;
  int rc = cmp(H "1,0.1.0,u,,caching,,sim," CAP1 ",,ok,1,1000,,1000000000,1088000000,1.088\n"
                 "2,0.1.0,u,,expandable,,sim," CAP1 ",,ok,1,1000,,1000000000,1010000000,1.010\n",
               H "1,0.1.0,u,,caching,,sim," CAP2 ",,ok,1,1000,,1000000000,1088000000,1.088\n"
                 "2,0.1.0,u,,expandable,,sim," CAP2 ",,ok,1,1000,,1000000000,1010000000,1.010\n", &out, &err, NULL);
  CHECK_EQ(rc, 0);
  CHECK_CONTAINS(out, "u caching cap 19.79 GiB: matched across a change of cap: cap 19.79 GiB -> 17.42 GiB; its figures are compared as they are");
  CHECK_CONTAINS(out, "compare: ok: 2 rows compared");
  CHECK_CONTAINS(out, "0 new, 0 missing, 2 warnings");
  free(out);
  free(err);
  /* one row of OLD, two caps in NEW: not matched, and the missing row says what NEW has */
  rc = cmp(H "1,0.1.0,u,,caching,,sim," CAP1 ",,ok,1,1000,,1000000000,1088000000,1.088\n",
           H "1,0.1.0,u,,caching,,sim," CAP2 ",,ok,1,1000,,1000000000,1088000000,1.088\n"
             "2,0.1.0,u,,caching,,sim,9352138752,,ok,1,1000,,1000000000,1088000000,1.088\n", &out, &err, NULL);
  CHECK_EQ(rc, 1);
  CHECK_CONTAINS(out, "missing  u caching cap 19.79 GiB");
  CHECK_CONTAINS(out, "NEW has this workload and strategy only as: cap 17.42 GiB; cap 8.71 GiB");
  CHECK_CONTAINS(out, "OLD has this workload and strategy only as: cap 19.79 GiB");
  free(out);
  free(err);
}

TEST(compare_matches_rows_across_a_settings_change_and_says_the_settings) {
  char *out, *err;
  int rc = cmp(H "1,0.1.0,u,,caching,max_split_size_mb=128,sim,,,ok,1,1000,,1000000000,1088000000,1.088\n",
               H "1,0.1.0,u,,caching,max_split_size_mb=256,sim,,,ok,1,1000,,1000000000,1100000000,1.100\n", &out, &err, NULL);
  CHECK_EQ(rc, 1);   /* matched and judged: it reserves more */
  CHECK_CONTAINS(out, "matched across a change of settings: settings 'max_split_size_mb=128' -> 'max_split_size_mb=256'");
  CHECK_CONTAINS(out, "worse    u caching:max_split_size_mb=128 uncapped  peak_reserved");
  free(out);
  free(err);
}

TEST(compare_refuses_a_malformed_negative_or_hex_figure_as_malformed) {
  char *out, *err;
  static const char *bad[][2] = {{"123abc", "peak_reserved is '123abc': expected a number written in decimal"},
                                 {"-5", "peak_reserved is '-5': expected a non-negative number written in decimal"},
                                 {"0x10", "peak_reserved is '0x10': expected a number written in decimal"}};
  for (int i = 0; i < 3; i++) {
    char n[512];
    snprintf(n, sizeof n, H "1,0.1.0,u,,caching,,sim,,,ok,1,1000,,1000000000,%s,1.088\n", bad[i][0]);
    int rc = cmp(H "1,0.1.0,u,,caching,,sim,,,ok,1,1000,,1000000000,1088000000,1.088\n", n, &out, &err, NULL);
    CHECK_EQ(rc, 2);
    CHECK_CONTAINS(err, "cd_new.csv:2: ");
    CHECK_CONTAINS(err, bad[i][1]);
    free(out);
    free(err);
  }
  /* and the report refuses it too: "-5 B" is never bold as the best */
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/neg_report", test_tmpdir());
  CHECK_EQ(system(NULL) != 0, 1);
  snprintf(path, sizeof path, "mkdir -p '%s'", dir);
  CHECK_EQ(system(path), 0);
  snprintf(path, sizeof path, "%s/runs.csv", dir);
  FILE *f = fopen(path, "w");
  fputs(H "1,0.1.0,u,,caching,,sim,,,ok,1,1000,,1000000000,1088000000,1.088\n2,0.1.0,u,,expandable,,sim,,,ok,1,1000,,1000000000,-5,1.088\n", f);
  fclose(f);
  snprintf(errp, sizeof errp, "%s/neg_err.txt", test_tmpdir());
  CHECK_EQ(test_cli(NULL, errp, "report", dir, NULL), 2);
  err = test_read_file(errp);
  CHECK_CONTAINS(err, "runs.csv:3: peak_reserved is '-5': expected a non-negative number");
  free(err);
}

TEST(compare_refuses_a_header_of_200k_columns_at_the_header) {
  /* 200k short names (600 KB, under the line bound): refused by the column bound; 200k
   * longer ones (1.4 MB, the file): by the line bound, counted on every line and
   * not only on the last line of a read */
  for (int big = 0; big < 2; big++) {
    size_t n = 200000;
    char *hdr = malloc(n * 8 + 64);
    size_t k = (size_t)sprintf(hdr, "run_id,workload,allocator");
    for (size_t i = 0; i < n; i++) k += (size_t)sprintf(hdr + k, ",c%zu", i % (big ? 100000 : 10));
    sprintf(hdr + k, "\n1,w,caching\n");
    const char *p = test_write_tmp("wide.csv", hdr);
    free(hdr);
    snprintf(outp, sizeof outp, "%s/wide_out.txt", test_tmpdir());
    snprintf(errp, sizeof errp, "%s/wide_err.txt", test_tmpdir());
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ(test_cli(outp, errp, "compare", p, p, NULL), 2);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 < 5.0);   /* wall time, the child's included */
    char *err = test_read_file(errp);
    CHECK_CONTAINS(err, big ? "wide.csv:1: a line longer than 1048576 bytes" : "wide.csv:1: a header of 200003 columns: expected at most 1024 (a fragbench results file has 48)");
    free(err);
  }
}
