/* test_cli_inputs.c - what the command line makes of odd input, each refused clearly or
 * read right rather than silently bent (issue 40): a single-valued flag given twice, an
 * integer parameter past 64 bits, an RMM request larger than any device (an OOM, not a
 * skipped event), advise on a trace without allocations, a NUL byte in a results CSV,
 * and fit --plot from a working directory other than the repository's. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test.h"
#include "params.h"
#include "event.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"   /* test paths are short: tmpdir + a name */

#define WL "script:events=a1=1K/f1"

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/i_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/i_err.txt", test_tmpdir());
}

static void put(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f) { fwrite(text, 1, n, f); fclose(f); }
}

static int err_has(const char *s) { return test_file_has(errp, s); }


TEST(inputs_a_single_valued_flag_given_twice_is_refused) {
  paths();
  char a[512], b[512];
  snprintf(a, sizeof a, "%s/twice_a.csv", test_tmpdir());
  snprintf(b, sizeof b, "%s/twice_b.csv", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--out", a, "--out", b, NULL), 2);
  CHECK(err_has("--out given twice"));
  struct stat st;
  CHECK(stat(a, &st) && stat(b, &st));   /* neither written */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--seed", "1", "--seed=2", NULL), 2);
  CHECK(err_has("--seed given twice"));
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--device", "sim", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "fit", "--workload", WL, "--vary", "x", "--vary", "y", NULL), 2);
  CHECK(err_has("--vary given twice"));
  /* the repeatable ones add one more each; a switch twice is the switch */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--workload", WL, "--allocator", "raw", "--allocator", "caching",
                    "--device", "sim", "--quiet", "--quiet", NULL), 0);
  char *t = test_read_file(outp);
  int rows = 0;
  for (char *p = t; p && *p; p++) rows += *p == '\n';
  CHECK_EQ(rows, 5);   /* the header and 2 x 2 rows */
  free(t);
}

TEST(inputs_an_integer_parameter_past_64_bits_is_refused_not_clamped) {
  static const struct param_spec spec[] = {{"batch", P_INT, "1", "rows"}, {NULL, 0, NULL, NULL}};
  struct params p;
  char err[FB_ERRLEN];
  char name[32];
  CHECK(!params_parse_spec("g:batch=18446744073709551615", name, sizeof name, &p, err));
  CHECK(params_check(&p, spec, "g", err) == -1);
  CHECK_CONTAINS(err, "batch=18446744073709551615");
  CHECK_CONTAINS(err, "at most 9223372036854775807");
  CHECK(!params_parse_spec("g:batch=9223372036854775807", name, sizeof name, &p, err));
  CHECK(!params_check(&p, spec, "g", err));
  CHECK(param_int(&p, "batch") == INT64_MAX);
  CHECK(!params_parse_spec("g:batch=-9223372036854775809", name, sizeof name, &p, err));
  CHECK(params_check(&p, spec, "g", err) == -1);
  /* the command says the value as given, not a clamped one */
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "train_loop:batch=18446744073709551615", "--device", "sim", NULL), 2);
  CHECK(err_has("'batch=18446744073709551615'"));
  char *e = test_read_file(errp);
  CHECK(e && !strstr(e, "9223372036854775807'"));
  free(e);
}

TEST(inputs_an_rmm_request_past_any_device_is_an_oom) {
  paths();
  char log[512];
  snprintf(log, sizeof log, "%s/huge_rmm.csv", test_tmpdir());
  const char *text = "Thread,Time,Action,Pointer,Size,Stream\n"
                     "1,01:00:00.000001,allocate,0x10,281474976710656,0\n"
                     "1,01:00:00.000002,free,0x10,281474976710656,0\n";
  put(log, text, strlen(text));
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", log, "--device", "sim", "--quiet", NULL), 0);
  char *csv = test_read_file(outp), cell[64];
  CHECK(!test_csv_cell(csv, "status", cell, sizeof cell));
  CHECK_STR(cell, "oom");
  CHECK(!test_csv_cell(csv, "oom_count", cell, sizeof cell));
  CHECK_STR(cell, "1");
  CHECK(!test_csv_cell(csv, "skipped_events", cell, sizeof cell));
  CHECK_STR(cell, "0");
  free(csv);
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", log, "--device", "sim", "--quiet", "--fail-on-oom", NULL), 1);
  /* under skip, the free of the dropped request is no unknown free either */
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", log, "--device", "sim", "--on-oom", "skip", "--allocator", "caching", NULL), 0);
  csv = test_read_file(outp);
  CHECK(!test_csv_cell(csv, "skipped_events", cell, sizeof cell));
  CHECK_STR(cell, "0");
  free(csv);
  /* one byte less than 2^48 is no longer refused at the door: the device says */
  text = "Thread,Time,Action,Pointer,Size,Stream\n1,01:00:00.000001,allocate,0x10,281474976710655,0\n";
  put(log, text, strlen(text));
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", log, "--device", "sim", "--quiet", NULL), 0);
  csv = test_read_file(outp);
  CHECK(!test_csv_cell(csv, "status", cell, sizeof cell));
  CHECK_STR(cell, "oom");   /* no 256 TiB on an H100 either */
  free(csv);
}

TEST(inputs_advise_on_a_trace_without_allocations_says_so) {
  paths();
  char log[512];
  snprintf(log, sizeof log, "%s/empty_rmm.csv", test_tmpdir());
  put(log, "Thread,Time,Action,Pointer,Size,Stream\n", 39);
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", log, NULL), 2);
  CHECK(err_has("no allocation in the trace"));
  char *e = test_read_file(errp);
  CHECK(e && !strstr(e, "nan"));
  free(e);
}

TEST(inputs_a_nul_byte_in_a_results_csv_is_refused) {
  paths();
  const char *base = "results/baseline-sim.csv";
  if (access(base, R_OK)) SKIP("no baseline");
  char *t = test_read_file(base), bad[512];
  CHECK(t != NULL);
  size_t n = strlen(t);
  char *nl = strchr(t, '\n');
  CHECK(nl != NULL);
  char *at = strstr(nl, ",ok,");   /* inside the first row's status column: "o\0k" */
  CHECK(at != NULL);
  at[2] = 0;
  snprintf(bad, sizeof bad, "%s/nul_results.csv", test_tmpdir());
  put(bad, t, n);
  free(t);
  CHECK_EQ(test_cli(outp, errp, "compare", base, bad, NULL), 2);
  CHECK(err_has("nul_results.csv:2: a NUL byte"));
}

TEST(inputs_fit_plot_works_outside_the_repository) {
  paths();
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  if (system("command -v gnuplot >/dev/null 2>&1")) SKIP("no gnuplot");
  char cmd[2000], png[512];
  snprintf(png, sizeof png, "%s/elsewhere_fit.png", test_tmpdir());
  unlink(png);
  snprintf(cmd, sizeof cmd, "B=$PWD/build/fragbench; cd '%s' && env -u FB_PLOTS_DIR $B fit --workload "
           "'train_loop:iters=2,layers=2,hidden=256,heads=4,ffn=1024,vocab=4096,seq=128' --vary batch --limit 0.5 "
           "--allocator caching --to 6 --quiet --plot elsewhere_fit.png > /dev/null 2>'%s'", test_tmpdir(), errp);
  CHECK_EQ(system(cmd), 0);
  struct stat st;
  CHECK(!stat(png, &st) && st.st_size > 0);
}
