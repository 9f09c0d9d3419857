/* test_cli_options.c - the option tables (harness/cli/options.c): every subcommand's
 * --help comes from its table, a flag it does not take is exit 2 naming flag and
 * subcommand, empty values and list items are exit 2, N% resolves the same whatever
 * the order, a flag means the same (same type) on every table, bounds are stated. */
#include <stdlib.h>
#include "test.h"
#include "cli.h"
#include "options.h"

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/opt_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/opt_err.txt", test_tmpdir());
}

TEST(options_every_table_agrees_with_the_shared_meaning) {
  for (int i = 0; cli_commands[i]; i++)
    for (const struct opt_def *d = cli_commands[i]->opts; d->flag; d++) {
      int t = opts_flag_type(d->flag);
      CHECK_MSG(t >= 0, "%s %s: no shared meaning", cli_commands[i]->name, d->flag);
      CHECK_MSG(t == (int)d->type, "%s %s: type %d, the shared meaning's is %d", cli_commands[i]->name, d->flag, (int)d->type, t);
      CHECK_MSG(d->help && d->help[0], "%s %s: no help line", cli_commands[i]->name, d->flag);
    }
}

TEST(options_help_of_each_subcommand_lists_its_table) {
  paths();
  for (int i = 0; cli_commands[i]; i++) {
    CHECK_EQ(test_cli(outp, errp, cli_commands[i]->name, "--help", NULL), 0);
    char *o = test_read_file(outp);
    char want[64];
    snprintf(want, sizeof want, "usage: fragbench %s", cli_commands[i]->name);
    CHECK_CONTAINS(o, want);
    for (const struct opt_def *d = cli_commands[i]->opts; d->flag; d++) CHECK_CONTAINS(o, d->flag);
    free(o);
  }
}

TEST(options_a_foreign_flag_is_exit_2_naming_flag_and_subcommand) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--budget", "5G", "--threads", "9", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "--budget is not a run option");
  free(e);
  /* every subcommand refuses a flag that only another one takes */
  for (int i = 0; cli_commands[i]; i++) {
    const char *foreign = strcmp(cli_commands[i]->name, "stress") ? "--threads" : "--timeline";
    CHECK_EQ(test_cli(outp, errp, cli_commands[i]->name, foreign, "2", NULL), 2);
    e = test_read_file(errp);
    char want[96];
    snprintf(want, sizeof want, "%s is not a %s option", foreign, cli_commands[i]->name);
    CHECK_CONTAINS(e, want);
    free(e);
  }
}

TEST(options_unknown_option_in_last_place_says_unknown) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--bogus", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown option '--bogus'");
  CHECK(!strstr(e, "needs a value"));
  free(e);
}

TEST(options_empty_values_and_items_are_exit_2) {
  paths();
  const char *w = "script:events=a1=1K/f1";
  const char *cases[][2] = {{"--cap-bytes", ""}, {"--cap", ""}, {"--cap-bytes", "1G,2G,,3G"}, {"--cap", "0.5,"},
                            {"--devices", ""}, {"--limit", ""}, {"--out", ""}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", cases[i][0], cases[i][1], NULL), 2);
    char *e = test_read_file(errp);
    CHECK_CONTAINS(e, cases[i][0]);
    CHECK(strstr(e, "empty") != NULL);
    free(e);
  }
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--devices", "0,0", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "twice");
  free(e);
}

static unsigned long long cap_of(const char *csv) {
  char *t = test_read_file(csv);
  if (!t) return 0;
  char *row = strchr(t, '\n');
  unsigned long long v = 0;
  if (row) {
    char *f = row + 1;
    for (int i = 0; i < 8 && f; i++) { f = strchr(f, ','); if (f) f++; }   /* cap_bytes is field 9 */
    if (f) v = strtoull(f, NULL, 10);
  }
  free(t);
  return v;
}

TEST(options_percent_resolves_after_every_flag) {
  paths();
  char csv[512];
  snprintf(csv, sizeof csv, "%s/pct.csv", test_tmpdir());
  const char *w = "script:events=a1=1K/f1";
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--quiet", "--cap-bytes", "50%", "--sim-total", "40G", "--out", csv, NULL), 0);
  CHECK_EQ(cap_of(csv), 20000000000ull);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--quiet", "--sim-total", "40G", "--cap-bytes", "50%", "--out", csv, NULL), 0);
  CHECK_EQ(cap_of(csv), 20000000000ull);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--quiet", "--limit", "0.5", "--sim-total", "40G", "--out", csv, NULL), 0);
  CHECK_EQ(cap_of(csv), 20000000000ull);
}

TEST(options_absurd_values_are_refused_with_the_bound) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--sim-total", "18446744073709551615", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "at most 64 TiB");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "stress", "--allocator", "raw", "--seconds", "1e30", NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "at most 86400");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--cap-bytes", "18446744073709551615", NULL), 2);
}

/* one name for the limit, one sentence about where it came from, on every command */
TEST(options_the_limit_sentence_is_the_same_on_every_command) {
  paths();
  const char *snap = "tests/variants/oom_fragmented.pickle";
  const char *want = "limit 47.68 MiB (50000000 bytes): given (--limit 50M)";
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--limit", "50M", "--device", "sim", NULL), 0);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, want);
  free(e);
  test_cli(outp, errp, "mincap", "--trace", snap, "--limit", "50M", "--device", "sim", NULL);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, want);
  free(e);
  test_cli(outp, errp, "explain", "--trace", snap, "--limit", "50M", NULL);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, want);
  free(e);
  char *o = test_read_file(outp);
  CHECK(!strstr(o, "every strategy replayed under"));   /* the limit given was replayed, not the inferred one */
  free(o);
  test_cli(outp, errp, "advise", "--trace", snap, "--budget", "50M", NULL);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "limit 47.68 MiB (50000000 bytes): given (--budget 50M)");
  free(e);
  /* no limit given: inferred, with its interval; --no-infer-cap: none */
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--device", "sim", NULL), 0);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "inferred from the snapshot's OOM, the job ran under between");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--device", "sim", "--no-infer-cap", NULL), 0);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "limit: none (uncapped)");
  free(e);
}

TEST(options_oom_message_gives_the_exact_limit) {
  paths();
  char msg[512];
  snprintf(msg, sizeof msg, "%s/oom.txt", test_tmpdir());
  FILE *f = fopen(msg, "w");
  CHECK(f != NULL);
  fputs("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.18 GiB "
        "of which 62.10 GiB is free. Including non-PyTorch memory, this process has 17.07 GiB memory in use. 19.79 GiB "
        "allowed; Of the allocated memory 12.81 GiB is allocated by PyTorch, and 3.52 GiB is reserved by PyTorch but "
        "unallocated.\n", f);
  fclose(f);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--oom-message", msg, "--device", "sim", NULL), 0);
  char *e = test_read_file(errp), *o = test_read_file(outp);
  /* 19.79 GiB printed with 2 decimals: the low end, 19.785 GiB (oom_message.h) */
  CHECK_CONTAINS(e, "limit 19.79 GiB (21243981988 bytes): from PyTorch's OOM message (\"allowed\"");
  CHECK_CONTAINS(o, ",21243981988,");
  free(e);
  free(o);
}

/* the subcommands that read their own arguments refuse foreign and empty flags too */
TEST(options_readspeed_report_compare_refuse_foreign_and_empty_flags) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "readspeed", "--bogus", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "unknown option '--bogus'");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "readspeed", "--events", "", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "report", "--bogus", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "report", "--format", "", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "compare", "a.csv", "b.csv", "--max-lines", NULL), 2);
}
