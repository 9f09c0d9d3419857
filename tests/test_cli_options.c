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
