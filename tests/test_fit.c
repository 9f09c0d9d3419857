/* test_fit.c - `fit` (the largest value of a parameter that completes under a limit):
 * the spec rewriting, the answer's defining rule checked by independent replays, the
 * margin, both kinds of non-monotonic point, the issue's figures for train_loop, the
 * CLI's columns and bad input, and bench's FIT= table (scripts/bench_fit.sh). */
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "results_read.h"
#include "test.h"
#include "fit.h"
#include "replay.h"
#include "row_spec.h"

/* one replay of base with vary=v under cap: 1 completes, 0 not */
static int completes_at(const struct run_spec *base, const char *vary, uint64_t v, uint64_t cap, struct run_result *r) {
  char spec[512];
  if (fit_spec(base->workload, vary, v, spec, sizeof spec)) return -1;
  struct run_spec s = *base;
  s.workload = spec;
  s.cap_bytes = cap;
  run_result_init(r);
  replay_run(&s, r);
  return r->exit_class == 0 && r->completed && !strcmp(r->status, "ok");
}

TEST(fit_spec_sets_the_key_and_keeps_the_rest) {
  char b[256];
  CHECK_EQ(fit_spec("train_loop", "batch", 7, b, sizeof b), 0);
  CHECK_STR(b, "train_loop:batch=7");
  CHECK_EQ(fit_spec("train_loop:iters=4,batch=16,seq=128", "batch", 3, b, sizeof b), 0);
  CHECK_STR(b, "train_loop:batch=3,iters=4,seq=128");
  /* a list value keeps its commas; a key that only starts like the varied one stays */
  CHECK_EQ(fit_spec("varlen:buckets=[128,256],batch_max=8", "batch", 2, b, sizeof b), 0);
  CHECK_STR(b, "varlen:batch=2,buckets=[128,256],batch_max=8");
  CHECK_EQ(fit_spec("train_loop:iters=4", "batch", 1, b, 12), -1);   /* does not fit */
}

#define TL "train_loop:iters=2,layers=2,hidden=256,heads=4,ffn=1024,vocab=4096,seq=128"

TEST(fit_answer_completes_and_the_next_value_does_not) {
  const char *allocs[] = {"raw", "caching", "expandable"};
  for (int i = 0; i < 3; i++) {
    struct run_spec s;
    row_spec(&s, TL, allocs[i]);
    struct run_result r, chk;
    struct fit_report rep;
    uint64_t limit = 600ull << 20;
    CHECK_EQ(fit_find(&s, "batch", limit, 0, 1, 0, 0, &r, &rep), 0);
    CHECK_MSG(rep.found && rep.max_value > 1, "%s: max_value %llu", allocs[i], (unsigned long long)rep.max_value);
    CHECK_STR(r.status, "ok");
    CHECK_EQ(completes_at(&s, "batch", rep.max_value, limit, &chk), 1);
    CHECK_EQ(chk.peak_reserved, r.peak_reserved);
    CHECK_EQ(rep.headroom, limit - r.peak_reserved);
    CHECK_EQ(completes_at(&s, "batch", rep.max_value + 1, limit, &chk), 0);
    CHECK_EQ(rep.next_value, rep.max_value + 1);
    CHECK(rep.next_needs > limit);
    /* the next value completes at what it needs */
    CHECK_EQ(completes_at(&s, "batch", rep.next_value, rep.next_needs, &chk), 1);
    CHECK_EQ(rep.nonmono_value, 0);
    CHECK_EQ(r.cap_bytes, limit);
  }
}

TEST(fit_margin_is_taken_off_the_limit) {
  struct run_spec s;
  row_spec(&s, TL, "caching");
  struct run_result r, r0;
  struct fit_report a, b;
  uint64_t limit = 600ull << 20, margin = 150ull << 20;
  CHECK_EQ(fit_find(&s, "batch", limit - margin, 0, 1, 0, 0, &r0, &a), 0);   /* the same cap, no margin */
  CHECK_EQ(fit_find(&s, "batch", limit, margin, 1, 0, 0, &r, &b), 0);
  CHECK(a.found && b.found);
  CHECK_EQ(b.max_value, a.max_value);
  CHECK_EQ(r.peak_reserved, r0.peak_reserved);
  CHECK_EQ(r.cap_bytes, limit - margin);
  CHECK_EQ(b.headroom, limit - r.peak_reserved);        /* the margin is inside the headroom */
  CHECK_EQ(b.next_needs, a.next_needs + margin);
  struct fit_report c;
  CHECK_EQ(fit_find(&s, "batch", limit, 0, 1, 0, 0, &r, &c), 0);
  CHECK(c.max_value > b.max_value);                      /* 150 MiB is worth a step here */
}

TEST(fit_nothing_fits_reports_what_from_needs) {
  struct run_spec s;
  row_spec(&s, TL, "raw");
  struct run_result r;
  struct fit_report rep;
  CHECK_EQ(fit_find(&s, "batch", 1ull << 20, 0, 4, 0, 0, &r, &rep), 0);
  CHECK_EQ(rep.found, 0);
  CHECK_EQ(rep.next_value, 4);
  CHECK(rep.next_needs > (1ull << 20));
  CHECK(!strncmp(r.status, "oom", 3));
}

TEST(fit_to_bounds_the_search) {
  struct run_spec s;
  row_spec(&s, TL, "raw");
  struct run_result r;
  struct fit_report rep;
  CHECK_EQ(fit_find(&s, "batch", 8ull << 30, 0, 1, 5, 0, &r, &rep), 0);
  CHECK_EQ(rep.max_value, 5);
  CHECK_EQ(rep.at_to, 1);
  CHECK_EQ(rep.next_value, 0);
}

/* caching on train_loop:iters=4 under 7540 MB (measured): batch 9 and 11 complete, batch
 * 10 does not (its cached blocks pin more) - need is not monotonic in batch there */
#define TL4 "train_loop:iters=4"
#define NONMONO_LIMIT 7540000000ull

TEST(fit_reports_a_value_completing_above_the_answer) {
  struct run_spec s;
  row_spec(&s, TL4, "caching");
  struct run_result r, chk;
  CHECK_EQ(completes_at(&s, "batch", 10, NONMONO_LIMIT, &chk), 0);
  CHECK_EQ(completes_at(&s, "batch", 11, NONMONO_LIMIT, &chk), 1);
  struct fit_report rep;
  CHECK_EQ(fit_find(&s, "batch", NONMONO_LIMIT, 0, 1, 0, 0, &r, &rep), 0);
  CHECK_EQ(rep.max_value, 9);
  CHECK_EQ(rep.nonmono_value, 11);
  CHECK_EQ(rep.nonmono_completes, 1);
  CHECK_CONTAINS(r.status, "non-monotonic");
}

TEST(fit_falls_back_below_a_failing_value) {
  /* --to 11: the gallop lands on 11 (completes); the check below finds 10 failing */
  struct run_spec s;
  row_spec(&s, TL4, "caching");
  struct run_result r;
  struct fit_report rep;
  CHECK_EQ(fit_find(&s, "batch", NONMONO_LIMIT, 0, 1, 11, 0, &r, &rep), 0);
  CHECK_EQ(rep.max_value, 9);
  CHECK_EQ(rep.nonmono_value, 10);
  CHECK_EQ(rep.nonmono_completes, 0);
  CHECK_CONTAINS(r.workload, "batch=9");
  CHECK_CONTAINS(r.status, "non-monotonic");
}

/* issue 33's figures: under 0.125 of the H100 (10,627,186,688 bytes), without a margin,
 * train_loop:iters=4 fits batch 16 with caching (3 MB under) and 17 with expandable */
TEST(fit_train_loop_issue_figures_without_margin) {
  struct run_spec s;
  row_spec(&s, TL4, "caching");
  struct run_result r;
  struct fit_report rep;
  CHECK_EQ(fit_find(&s, "batch", 10627186688ull, 0, 1, 0, 0, &r, &rep), 0);
  CHECK_EQ(rep.max_value, 16);
  CHECK_EQ(r.peak_reserved, 10624172032ull);
  CHECK_EQ(rep.headroom, 10627186688ull - 10624172032ull);
  s.allocator = "expandable";
  CHECK_EQ(fit_find(&s, "batch", 10627186688ull, 0, 1, 0, 0, &r, &rep), 0);
  CHECK_EQ(rep.max_value, 17);
}


TEST(fit_cli_writes_fit_columns_and_the_usual_row) {
  char out[512], err[512], cell[128];
  snprintf(out, sizeof out, "%s/fit.csv", test_tmpdir());
  snprintf(err, sizeof err, "%s/fit.err", test_tmpdir());
  int rc = test_cli(NULL, err, "fit", "--workload", TL, "--vary", "batch", "--limit", "600Mi", "--margin", "0",
                    "--allocator", "caching", "--out", out, NULL);
  char *e = test_read_file(err);
  CHECK_MSG(rc == 0, "exit %d: %s", rc, e ? e : "");
  free(e);
  char *csv = test_read_file(out);
  CHECK(csv != NULL);
  const char *cols[] = {"allocator", "vary", "max_value", "headroom_bytes", "next_value", "next_needs_bytes", "peak_reserved",
                        "status"};
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) CHECK_MSG(!test_csv_cell(csv, cols[i], cell, sizeof cell), "no %s", cols[i]);
  CHECK(!test_csv_cell(csv, "allocator", cell, sizeof cell));
  CHECK_STR(cell, "caching");
  CHECK(!test_csv_cell(csv, "vary", cell, sizeof cell));
  CHECK_STR(cell, "batch");
  CHECK(!test_csv_cell(csv, "limit_bytes", cell, sizeof cell));
  CHECK_STR(cell, "629145600");
  struct run_spec s;
  row_spec(&s, TL, "caching");
  struct run_result r;
  struct fit_report rep;
  fit_find(&s, "batch", 600ull << 20, 0, 1, 0, 0, &r, &rep);
  char want[32];
  snprintf(want, sizeof want, "%llu", (unsigned long long)rep.max_value);
  CHECK(!test_csv_cell(csv, "max_value", cell, sizeof cell));
  CHECK_STR(cell, want);
  free(csv);
}

/* the default margin: 65 MiB (cuBLAS/cuBLASLt workspaces, measured) + 1% of the limit */
TEST(fit_cli_default_margin_is_workspaces_plus_one_percent) {
  char out[512], cell[128];
  snprintf(out, sizeof out, "%s/fitm.csv", test_tmpdir());
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", "--limit", "1000000000B", "--allocator", "raw", "--out", out,
                    "--quiet", NULL), 0);
  char *csv = test_read_file(out);
  CHECK(csv != NULL);
  CHECK(!test_csv_cell(csv, "margin_bytes", cell, sizeof cell));
  CHECK_STR(cell, "78157440");   /* 68157440 + 10000000 */
  CHECK(!test_csv_cell(csv, "cap_bytes", cell, sizeof cell));
  CHECK_STR(cell, "921842560");
  free(csv);
  CHECK_EQ(fit_default_margin(10627186688ull), 68157440ull + 106271866ull);
}

/* PyTorch's OOM text gives the limit (its "allowed" figure), as on run and mincap */
TEST(fit_cli_takes_the_limit_from_an_oom_message) {
  char msg[512], out[512], cell[128];
  snprintf(msg, sizeof msg, "%s/fitoom.txt", test_tmpdir());
  snprintf(out, sizeof out, "%s/fitoom.csv", test_tmpdir());
  FILE *f = fopen(msg, "w");
  CHECK(f != NULL);
  fputs("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.18 GiB "
        "of which 62.10 GiB is free. Including non-PyTorch memory, this process has 17.07 GiB memory in use. 19.79 GiB "
        "allowed; Of the allocated memory 12.81 GiB is allocated by PyTorch, and 3.52 GiB is reserved by PyTorch but "
        "unallocated.\n", f);
  fclose(f);
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", "--oom-message", msg, "--allocator", "caching", "--out", out,
                    "--quiet", NULL), 0);
  char *csv = test_read_file(out);
  CHECK(csv != NULL);
  CHECK(!test_csv_cell(csv, "limit_bytes", cell, sizeof cell));
  CHECK_STR(cell, "21243981988");   /* 19.785 GiB: the low end of what "19.79 GiB" printed to 2 decimals can be */
  free(csv);
}

TEST(fit_cli_bad_input_exits_2) {
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", NULL), 2);                       /* no limit */
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--limit", "0.5", NULL), 2);                        /* no vary */
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", "--limit", "lots", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "nosuch", "--limit", "0.5", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", "--limit", "0.5", "--from", "9", "--to", "3", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", "--limit", "1Mi", "--margin", "2Mi", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--trace", "x.pickle", "--vary", "batch", "--limit", "0.5", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", "--limit", "0.5", "--cap-x", "2", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "fit", "--workload", TL, "--vary", "batch", "--limit", "0.5", "--from", "0", NULL), 2);
}

TEST(fit_bench_table_has_a_row_per_strategy_and_a_plot_when_gnuplot_is_there) {
  if (access("scripts/bench_fit.sh", R_OK)) SKIP("scripts/bench_fit.sh not found (run from the repository root)");
  char dir[600], log[600], cmd[3000], p[700];
  const char *bin = test_fragbench_bin();
  if (!bin) SKIP("no fragbench binary beside the tests");
  snprintf(dir, sizeof dir, "%s/benchfit", test_tmpdir());
  snprintf(log, sizeof log, "%s/benchfit.log", test_tmpdir());
  snprintf(cmd, sizeof cmd, "FIT=batch FIT_LIMIT=600Mi WORKLOADS='" TL " random' sh scripts/bench_fit.sh '%s' '%s' > '%s' 2>&1", bin,
           dir, log);
  int st = system(cmd);
  char *out = test_read_file(log);
  CHECK_MSG(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "bench_fit.sh failed:\n%s", out ? out : "");
  free(out);
  snprintf(p, sizeof p, "%s/fit.md", dir);
  char *md = test_read_file(p);
  CHECK(md != NULL);
  CHECK_CONTAINS(md, "## What fits");
  CHECK_CONTAINS(md, "| batch | caching | ");
  CHECK_CONTAINS(md, "| batch | expandable | ");
  int random_rows = strstr(md, "| random |") != NULL;   /* random has no batch: not searched */
  free(md);
  CHECK(!random_rows);
  if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
    snprintf(p, sizeof p, "%s/plots/fit-" TL "-batch.png", dir);
    for (char *c = p + strlen(dir) + 11; *c; c++)
      if (*c == ':' || *c == ',') *c = '_';
    CHECK_MSG(!access(p, R_OK), "no plot %s", p);
  }
}

/* fit's searches and its plot's points run on the engine's pool: the rows, the sentences
 * and the plot data are the same on 1 and 3 threads */
TEST(fit_same_answer_whatever_the_number_of_threads) {
  char out[2][512], err[2][512], plot[2][512];
  const char *threads[] = {"1", "3"};
  for (int k = 0; k < 2; k++) {
    snprintf(out[k], sizeof out[k], "%s/fit_t%s.csv", test_tmpdir(), threads[k]);
    snprintf(err[k], sizeof err[k], "%s/fit_t%s.err", test_tmpdir(), threads[k]);
    snprintf(plot[k], sizeof plot[k], "%s/fit_t%s.png", test_tmpdir(), threads[k]);
    setenv("FB_THREADS", threads[k], 1);
    int rc = test_cli(NULL, err[k], "fit", "--workload", TL, "--vary", "batch", "--limit", "600MiB", "--allocator", "caching",
                      "--allocator", "expandable", "--allocator", "bfc", "--allocator", "stitch", "--out", out[k], "--plot", plot[k], NULL);
    unsetenv("FB_THREADS");
    CHECK_EQ(rc, 0);
  }
  const char *cols[] = {"vary", "max_value", "headroom_bytes", "next_value", "next_needs_bytes", "allocator", "peak_reserved", "status"};
  struct results t[2];
  char e[FB_ERRLEN];
  CHECK_EQ(results_load(out[0], &t[0], e, sizeof e), 0);
  CHECK_EQ(results_load(out[1], &t[1], e, sizeof e), 0);
  CHECK_EQ(t[0].nrows, 4);
  CHECK_EQ(t[1].nrows, 4);
  for (int r = 0; r < 4 && r < t[0].nrows && r < t[1].nrows; r++)
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
      CHECK_MSG(!strcmp(results_get(&t[0], r, cols[c]), results_get(&t[1], r, cols[c])), "row %d %s: %s on 1 thread, %s on 3", r,
                cols[c], results_get(&t[0], r, cols[c]), results_get(&t[1], r, cols[c]));
  results_free(&t[0]);
  results_free(&t[1]);
  char *a = test_read_file(err[0]), *b = test_read_file(err[1]);
  CHECK(a && b && !strcmp(a, b));   /* the sentences, in the same order */
  free(a);
  free(b);
  char d0[600], d1[600];
  snprintf(d0, sizeof d0, "%s.dat", plot[0]);
  snprintf(d1, sizeof d1, "%s.dat", plot[1]);
  a = test_read_file(d0);
  b = test_read_file(d1);
  CHECK(a && b && !strcmp(a, b) && strlen(a) > 100);   /* every point, in order */
  free(a);
  free(b);
}
