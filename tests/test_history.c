/* test_history.c - `fragbench history`: the runs ordered (commit date, else date, else as
 * given), one point per workload x strategy x run, and the largest step's rule (history.h):
 * a series with a known step, ties (the earliest run, then the first strategy), a decrease
 * as large as an increase, rows that died (skipped over, and named when they died after
 * completing), no change and too few runs; then the command: the markdown, the picture,
 * and bad inputs refused naming the file. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test.h"
#include "history.h"
#include "event.h"

#define G 1073741824ull
#define HDR "workload,trace,allocator,params,device,cap_bytes,cap_x,status,completed,peak_reserved,mincap_bytes\n"

static char base[600];

/* a bench folder NAME under the scratch folder: env.txt (fields "" left out), runs.csv, mincap.csv */
static const char *mkrun(const char *name, const char *commit, const char *cdate, const char *date, const char *runs,
                         const char *mincap) {
  static char dir[8][700];
  static int k;
  char *d = dir[k++ % 8];
  snprintf(base, sizeof base, "%s/history", test_tmpdir());
  mkdir(base, 0777);
  snprintf(d, 700, "%s/%s", base, name);
  mkdir(d, 0777);
  char p[800];
  snprintf(p, sizeof p, "%s/env.txt", d);
  FILE *f = fopen(p, "w");
  if (commit) fprintf(f, "commit: %s\n", commit);
  if (cdate) fprintf(f, "commit_date: %s\n", cdate);
  if (date) fprintf(f, "date: %s\n", date);
  fclose(f);
  snprintf(p, sizeof p, "%s/runs.csv", d);
  f = fopen(p, "w");
  fprintf(f, HDR "%s", runs);
  fclose(f);
  snprintf(p, sizeof p, "%s/mincap.csv", d);
  if (mincap) { f = fopen(p, "w"); fprintf(f, HDR "%s", mincap); fclose(f); }
  else remove(p);
  return d;
}

/* a row: workload,,allocator,,sim,,,status,completed,peak (GiB x 4 for quarters) */
static char *row(char *buf, const char *w, const char *a, int completed, double gib) {
  sprintf(buf, "%s,,%s,,sim,,,%s,%d,%llu,\n", w, a, completed ? "ok" : "oom", completed, (unsigned long long)(gib * G));
  return buf;
}

static void load(struct history *h, int n, const char *const *dirs) {
  memset(h, 0, sizeof *h);
  char err[FB_ERRLEN];
  for (int i = 0; i < n; i++) if (history_add(h, dirs[i], err, sizeof err)) { test_fail(__FILE__, __LINE__, "%s", err); return; }
  history_finish(h);
}

TEST(history_known_step_is_found_and_said_with_its_commit) {
  char a[200], b[200], rows[3][400];
  const char *d1 = mkrun("s1", "aaa1111", "2026-01-01T00:00:00Z", NULL, strcat(strcpy(rows[0], row(a, "gpt", "caching", 1, 10)), row(b, "gpt", "expandable", 1, 9)), NULL);
  const char *d2 = mkrun("s2", "bbb2222", "2026-01-02T00:00:00Z", NULL, strcat(strcpy(rows[1], row(a, "gpt", "caching", 1, 10.25)), row(b, "gpt", "expandable", 1, 9)), NULL);
  const char *d3 = mkrun("s3", "ccc3333 (modified)", "2026-01-03T00:00:00Z", NULL, strcat(strcpy(rows[2], row(a, "gpt", "caching", 1, 12.25)), row(b, "gpt", "expandable", 1, 9.5)), NULL);
  struct history h;
  load(&h, 3, (const char *[]){d3, d1, d2});   /* given out of order: commit dates order them */
  CHECK_STR(h.order_by, "commit_date");
  CHECK_STR(h.run[0].label, "aaa1111");
  CHECK_STR(h.run[2].label, "ccc3333 (modified)");
  struct history_step st;
  history_step(&h, 0, &st);
  CHECK(st.found);
  CHECK_STR(h.strategy[st.s], "caching");
  CHECK_EQ(st.from, 1);
  CHECK_EQ(st.to, 2);
  char s[1000];
  history_sentence(&h, 0, s, sizeof s);
  CHECK_STR(s, "gpt: the largest step is caching +2.00 GiB (+19.5%, 10.25 GiB -> 12.25 GiB) at ccc3333 (modified) (run 3 of 3; "
               "the run before: run 2, bbb2222).");
  history_free(&h);
}

TEST(history_ties_go_to_the_earliest_run_then_the_first_strategy_and_a_drop_counts) {
  char a[200], b[200], r1[400], r2[400], r3[400];
  /* run 2: caching +1 GiB, expandable +1 GiB (a tie at the same run: caching, named first);
   * run 3: expandable -1 GiB (as large, later: not it) */
  const char *d1 = mkrun("t1", "a1", NULL, "2026-02-01T00:00:00Z", strcat(strcpy(r1, row(a, "w", "caching", 1, 4)), row(b, "w", "expandable", 1, 4)), NULL);
  const char *d2 = mkrun("t2", "a2", NULL, "2026-02-02T00:00:00Z", strcat(strcpy(r2, row(a, "w", "caching", 1, 5)), row(b, "w", "expandable", 1, 5)), NULL);
  const char *d3 = mkrun("t3", "a3", NULL, "2026-02-03T00:00:00Z", strcat(strcpy(r3, row(a, "w", "caching", 1, 5)), row(b, "w", "expandable", 1, 4)), NULL);
  struct history h;
  load(&h, 3, (const char *[]){d1, d2, d3});
  CHECK_STR(h.order_by, "date");   /* no commit_date: the dates */
  struct history_step st;
  history_step(&h, 0, &st);
  CHECK(st.found);
  CHECK_STR(h.strategy[st.s], "caching");
  CHECK_EQ(st.to, 1);
  history_free(&h);
  /* the same with expandable's drop earlier than caching's rise: the drop, the earlier run */
  const char *e1 = mkrun("u1", "b1", NULL, NULL, strcat(strcpy(r1, row(a, "w", "caching", 1, 4)), row(b, "w", "expandable", 1, 6)), NULL);
  const char *e2 = mkrun("u2", "b2", NULL, NULL, strcat(strcpy(r2, row(a, "w", "caching", 1, 4)), row(b, "w", "expandable", 1, 5)), NULL);
  const char *e3 = mkrun("u3", "b3", NULL, NULL, strcat(strcpy(r3, row(a, "w", "caching", 1, 5)), row(b, "w", "expandable", 1, 5)), NULL);
  load(&h, 3, (const char *[]){e1, e2, e3});
  CHECK_STR(h.order_by, "given");
  history_step(&h, 0, &st);
  CHECK_STR(h.strategy[st.s], "expandable");
  CHECK_EQ(st.to, 1);
  char s[1000];
  history_sentence(&h, 0, s, sizeof s);
  CHECK_CONTAINS(s, "the largest step is expandable -1.00 GiB (-16.7%, 6.00 GiB -> 5.00 GiB) at b2 (run 2 of 3");
  history_free(&h);
}

TEST(history_rows_that_died_are_skipped_over_and_named) {
  char a[200], b[200], r1[400], r2[400], r3[400];
  /* caching: 10, died, 13 -> the step +3 from run 1 to run 3; expandable: died in run 1
   * (never completed before: not named), 9, 9.5 */
  const char *d1 = mkrun("v1", "c1", NULL, NULL, strcat(strcpy(r1, row(a, "w", "caching", 1, 10)), row(b, "w", "expandable", 0, 20)), NULL);
  const char *d2 = mkrun("v2", "c2", NULL, NULL, strcat(strcpy(r2, row(a, "w", "caching", 0, 30)), row(b, "w", "expandable", 1, 9)), NULL);
  const char *d3 = mkrun("v3", "c3", NULL, NULL, strcat(strcpy(r3, row(a, "w", "caching", 1, 13)), row(b, "w", "expandable", 1, 9.5)), NULL);
  struct history h;
  load(&h, 3, (const char *[]){d1, d2, d3});
  struct history_step st;
  history_step(&h, 0, &st);
  CHECK_STR(h.strategy[st.s], "caching");
  CHECK_EQ(st.from, 0);
  CHECK_EQ(st.to, 2);
  CHECK_EQ(st.before, 10 * G);   /* not the dead row's 30 GiB */
  CHECK_EQ(st.ndied, 1);
  char s[1000];
  history_sentence(&h, 0, s, sizeof s);
  CHECK_STR(s, "w: the largest step is caching +3.00 GiB (+30.0%, 10.00 GiB -> 13.00 GiB) at c3 (run 3 of 3; the run before: "
               "run 1, c1). caching died at c2 (run 2: oom) after completing in the run before.");
  history_free(&h);
}

TEST(history_no_change_and_too_few_runs_say_so) {
  char a[200], r1[400], r2[400];
  const char *d1 = mkrun("n1", "d1", NULL, NULL, strcpy(r1, row(a, "w", "caching", 1, 4)), NULL);
  const char *d2 = mkrun("n2", "d2", NULL, NULL, strcpy(r2, row(a, "w", "caching", 1, 4)), NULL);
  struct history h;
  load(&h, 2, (const char *[]){d1, d2});
  char s[1000];
  history_sentence(&h, 0, s, sizeof s);
  CHECK_STR(s, "w: peak reserved did not change over the 2 runs, for any strategy.");
  history_free(&h);
  load(&h, 1, (const char *[]){d1});
  history_sentence(&h, 0, s, sizeof s);
  CHECK_STR(s, "w: no strategy completed in two runs: no step to show.");
  history_free(&h);
}

TEST(history_command_writes_the_table_the_picture_and_the_mincap) {
  char a[200], b[200], r1[400], r2[400], m2[400];
  const char *d1 = mkrun("c1", "e1", "2026-03-01T00:00:00Z", NULL, strcat(strcpy(r1, row(a, "gpt", "caching", 1, 10)), row(b, "gpt", "expandable", 1, 9)), NULL);
  const char *d2 = mkrun("c2", "e2", "2026-03-02T00:00:00Z", NULL, strcat(strcpy(r2, row(a, "gpt", "caching", 1, 11)), row(b, "gpt", "expandable", 0, 9)),
                         strcpy(m2, "gpt,,caching,,sim,,,ok,1,11811160064,11274289152\n"));
  char md[700], pd[700], outp[700], errp[700];
  snprintf(md, sizeof md, "%s/h.md", base);
  snprintf(pd, sizeof pd, "%s/pics", base);
  snprintf(outp, sizeof outp, "%s/h.out", base);
  snprintf(errp, sizeof errp, "%s/h.err", base);
  CHECK_EQ(test_cli(outp, errp, "history", d2, d1, "--out", md, "--plot", pd, NULL), 0);
  char *m = test_read_file(md), *e = test_read_file(errp);
  CHECK(m);
  CHECK_CONTAINS(m, "2 runs, ordered by the commit date in their env.txt");
  CHECK_CONTAINS(m, "| # | run | committed | benched | caching | expandable |");
  CHECK_CONTAINS(m, "| 1 | e1 | 2026-03-01T00:00:00Z | - | 10.00 GiB | 9.00 GiB |");
  CHECK_CONTAINS(m, "| 2 | e2 | 2026-03-02T00:00:00Z | - | **11.00 GiB (+1.00 GiB)**, mincap 10.50 GiB | died: oom |");
  CHECK_CONTAINS(m, "gpt: the largest step is caching +1.00 GiB (+10.0%, 10.00 GiB -> 11.00 GiB) at e2");
  CHECK_CONTAINS(m, "expandable died at e2 (run 2: oom)");
  if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
    CHECK_CONTAINS(m, "](pics/history-gpt.png)");   /* relative to the markdown */
    char png[800];
    snprintf(png, sizeof png, "%s/history-gpt.png", pd);
    struct stat sb;
    CHECK_MSG(!stat(png, &sb) && sb.st_size > 1000, "no picture %s: %s", png, e);
  }
  free(m); free(e);
}

TEST(history_bad_inputs_exit_2_naming_the_file) {
  char outp[700], errp[700], p[800];
  snprintf(outp, sizeof outp, "%s/b.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/b.err", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "history", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "history", test_tmpdir(), NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "no runs.csv: expected a bench folder");
  free(e);
  const char *d = mkrun("bad", "x", NULL, NULL, "gpt,,caching,,sim,,,ok,1,12x,\n", NULL);
  CHECK_EQ(test_cli(outp, errp, "history", d, NULL), 2);
  e = test_read_file(errp);
  snprintf(p, sizeof p, "%s/runs.csv: line 2: peak_reserved '12x': expected bytes", d);
  CHECK_CONTAINS(e, p);
  free(e);
  snprintf(p, sizeof p, "%s/nothere.csv", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "history", p, NULL), 2);
  const char *csv = test_write_tmp("hist_cols.csv", "workload,allocator\nw,caching\n");
  CHECK_EQ(test_cli(outp, errp, "history", csv, NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "hist_cols.csv");
  CHECK_CONTAINS(e, "peak_reserved");
  free(e);
}

TEST(history_make_bench_adds_it_to_the_report_when_earlier_runs_are_there) {
  if (access("scripts/bench.sh", R_OK)) SKIP("scripts/bench.sh not found (run from the repository root)");
  if (access("build/fragbench", X_OK)) SKIP("no build/fragbench");
  char res[600], cmd[2000], log[700], p[800];
  snprintf(res, sizeof res, "%s/results", test_tmpdir());
  snprintf(log, sizeof log, "%s/hbench.log", test_tmpdir());
  mkdir(res, 0777);
  for (int i = 1; i <= 2; i++) {
    snprintf(cmd, sizeof cmd, "DEVICE=sim BENCH_DIR='%s/bench-%d' WORKLOADS='leaky_losses:iters=20' ALLOCATORS='caching' "
             "JOBS=2 sh scripts/bench.sh build/fragbench > '%s' 2>&1", res, i, log);
    int st = system(cmd);
    char *out = test_read_file(log);
    CHECK_MSG(st == 0, "bench.sh failed:\n%s", out ? out : "");
    free(out);
  }
  snprintf(p, sizeof p, "%s/bench-1/report.md", res);
  char *r1 = test_read_file(p);
  snprintf(p, sizeof p, "%s/bench-2/report.md", res);
  char *r2 = test_read_file(p);
  CHECK(r1 && r2);
  CHECK(!strstr(r1, "Peak reserved across runs"));   /* the first run: nothing earlier */
  CHECK_CONTAINS(r2, "## Peak reserved across runs");
  CHECK_CONTAINS(r2, "2 runs, ordered by the ");   /* commit date in a git checkout, else the date */
  CHECK_CONTAINS(r2, "leaky_losses:iters=20: peak reserved did not change over the 2 runs, for any strategy.");
  free(r1); free(r2);
}
