/* test_cli_options.c - the flag table (harness/cli/flags.def) and the subcommands' lists
 * of the flags they take (options.c, opts_check.c): every listed name is one entry and
 * every entry is taken, every subcommand's --help comes from its list and the entries, a
 * flag it does not take is exit 2 naming flag and subcommand, empty values and list items
 * are exit 2, N% resolves the same whatever the order, a flag means the same on every
 * command, bounds are stated. */
#include <stdlib.h>
#include "test.h"
#include "cli.h"
#include "options.h"

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/opt_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/opt_err.txt", test_tmpdir());
}

/* every flag is one entry of flags.def: each name a command's list gives is an entry, each
 * entry is taken by some command (opts_check.c) */
TEST(options_every_list_names_entries_of_the_one_flag_table) {
  char err[4096];
  int n = opts_check(cli_commands, opts_flags, opts_nflags, err, sizeof err);
  CHECK_MSG(n == 0, "%d problems: %s", n, err);
  CHECK_EQ(opts_nflags, (int)FLAGS_N);
  for (int i = 0; i < opts_nflags; i++) CHECK(opts_flag(opts_flags[i].flag) == &opts_flags[i]);
  CHECK(opts_flag("--no-such-flag") == NULL);
}

/* the check finds what it is for: a misspelled or doubled name in a list, an entry no
 * command takes, a doubled entry, a positional argument that repeats before the last */
TEST(options_check_names_what_disagrees) {
  static const char *const typo[] = {"--seed", "--sed", "--seed", NULL};
  static const struct arg_def args[] = {{"FILE", 1, "inputs"}, {"OUT", 0, "output"}, {NULL, 0, NULL}};
  static const struct cmd_def bad_cmd = {"bad", "", "", typo, NULL, NULL, args};
  static const struct flag_def table[] = {
    {"--seed", OPT_COUNT, "N", "seed", 0},
    {"--orphan", OPT_SWITCH, NULL, "taken by none", 0},
    {"--seed", OPT_COUNT, "N", "again", 0},
    {"--quiet", OPT_SWITCH, "X", "", 0},
  };
  static const char *const q[] = {"--quiet", NULL};
  static const struct cmd_def ok_cmd = {"ok", "", "", q, NULL, NULL, NULL};
  const struct cmd_def *const cmds[] = {&bad_cmd, &ok_cmd, NULL};
  char err[4096];
  CHECK_EQ(opts_check(cmds, table, 4, err, sizeof err), 7);
  CHECK_CONTAINS(err, "bad --sed: no such flag in flags.def");
  CHECK_CONTAINS(err, "bad --seed: named twice");
  CHECK_CONTAINS(err, "flags.def --orphan: taken by no command");
  CHECK_CONTAINS(err, "flags.def --seed: declared twice");
  CHECK_CONTAINS(err, "flags.def --quiet: no help line");
  CHECK_CONTAINS(err, "flags.def --quiet: a value name exactly when it takes a value");
  CHECK_CONTAINS(err, "bad FILE: only the last positional argument may repeat");
  /* the real lists, less one command that alone takes some flags: those are orphans */
  const struct cmd_def *less[64];
  int n = 0;
  for (int i = 0; cli_commands[i]; i++)
    if (strcmp(cli_commands[i]->name, "compare")) less[n++] = cli_commands[i];
  less[n] = NULL;
  CHECK(opts_check(less, opts_flags, opts_nflags, err, sizeof err) > 0);
  CHECK_CONTAINS(err, "flags.def --max-increase: taken by no command");
}

/* a flag given on any command that takes it lands in its entry's field, checked by its
 * entry: the same value, the same refusal, whatever the command */
TEST(options_a_flag_means_the_same_on_every_command) {
  paths();
  for (int i = 0; cli_commands[i]; i++) {
    if (!opts_takes(cli_commands[i], "--seed")) continue;
    CHECK_EQ(test_cli(outp, errp, cli_commands[i]->name, "--seed", "x1", NULL), 2);
    char *e = test_read_file(errp), want[96];
    snprintf(want, sizeof want, "fragbench %s: --seed 'x1': expected a non-negative integer", cli_commands[i]->name);
    CHECK_CONTAINS(e, want);
    free(e);
  }
}

/* the parser walks the entry: its default, its field, how often it was given */
TEST(options_each_entry_gives_its_default_and_field) {
  const struct cmd_def *stress = NULL;
  for (int i = 0; cli_commands[i]; i++)
    if (!strcmp(cli_commands[i]->name, "stress")) stress = cli_commands[i];
  CHECK(stress != NULL);
  struct cli_opts *o = malloc(sizeof *o);
  char *argv[] = {"fragbench", "stress", "--seed", "7", "--threads=3", "--seconds", "0.5", "--allocator", "raw", "--allocator", "caching", NULL};
  CHECK_EQ(opts_parse(stress, 11, argv, o), 0);
  CHECK_EQ(o->seed, 7);
  CHECK_EQ(o->threads, 3);
  CHECK(o->seconds == 0.5);
  CHECK_EQ(o->nallocators, 2);
  CHECK_STR(o->allocators[1], "caching");
  CHECK(OPT_GIVEN(o, seed) && !OPT_GIVEN(o, fail_rate));
  CHECK_EQ(o->given[FLAG_allocators], 2);
  CHECK(o->fail_rate == 0 && o->precision == 0.005 && o->max_lines == 200 && o->frames == 25 && o->trace_device == -1);
  CHECK_STR(o->device, "auto");
  CHECK_STR(o->format, "png");
  free(o);
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
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--quiet", "--cap-bytes", "50%", "--sim-total", "40GB", "--out", csv, NULL), 0);
  CHECK_EQ(cap_of(csv), 20000000000ull);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--quiet", "--sim-total", "40GB", "--cap-bytes", "50%", "--out", csv, NULL), 0);
  CHECK_EQ(cap_of(csv), 20000000000ull);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--quiet", "--limit", "0.5", "--sim-total", "40GB", "--out", csv, NULL), 0);
  CHECK_EQ(cap_of(csv), 20000000000ull);
}

TEST(options_absurd_values_are_refused_with_the_bound) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--sim-total", "18446744073709551615", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "at most 4 TiB");
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
  const char *want = "limit 50.00 MiB (52428800 bytes): given (--limit 50M: M = MiB = 2^20 bytes)";
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
  CHECK_CONTAINS(e, "limit 50.00 MiB (52428800 bytes): given (--budget 50M: M = MiB = 2^20 bytes)");
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

/* compare, report and readspeed (files and folders, not a selection) are read from their
 * tables too: a foreign flag, an empty value, a missing, surplus or empty positional
 * argument are exit 2 naming the subcommand; --help lists their arguments and flags */
static void expect2(const char *want, const char *a0, const char *a1, const char *a2, const char *a3, const char *a4) {
  CHECK_EQ(test_cli(outp, errp, a0, a1, a2, a3, a4, NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, want);
  free(e);
}

TEST(options_compare_report_readspeed_refuse_foreign_flags_naming_the_subcommand) {
  paths();
  expect2("fragbench compare: --budget is not a compare option (it is for: advise)", "compare", "a.csv", "b.csv", "--budget", "5G");
  expect2("fragbench compare: --format is not a compare option (it is for: report)", "compare", "--format", "svg", "a.csv", "b.csv");
  expect2("fragbench report: --json is not a report option (it is for: compare)", "report", "dir", "--json", "x.json", NULL);
  expect2("fragbench report: --threads is not a report option", "report", "dir", "--threads", "2", NULL);
  expect2("fragbench readspeed: --format is not a readspeed option (it is for: report)", "readspeed", "--format", "png", NULL, NULL);
  expect2("fragbench readspeed: --trace is not a readspeed option", "readspeed", "--trace", "x.pickle", NULL, NULL);
  expect2("fragbench readspeed: unknown option '--bogus'", "readspeed", "--bogus", NULL, NULL, NULL);
  expect2("fragbench compare: unknown option '--bogus'", "compare", "a.csv", "b.csv", "--bogus", NULL);
}

TEST(options_compare_report_readspeed_refuse_empty_values) {
  paths();
  expect2("fragbench compare: --json: empty value", "compare", "a.csv", "b.csv", "--json", "");
  expect2("fragbench compare: --max-increase: empty value", "compare", "a.csv", "b.csv", "--max-increase", "");
  expect2("fragbench compare: --metric 'peak_reserved,,ns_per_op': an empty item", "compare", "a.csv", "b.csv", "--metric",
          "peak_reserved,,ns_per_op");
  expect2("fragbench compare: --allocator: empty value", "compare", "a.csv", "b.csv", "--allocator=", NULL);
  expect2("fragbench compare: --max-lines needs a value", "compare", "a.csv", "b.csv", "--max-lines", NULL);
  expect2("fragbench report: --format: empty value", "report", "dir", "--format", "", NULL);
  expect2("fragbench report: --format 'gif': expected png or svg", "report", "dir", "--format", "gif", NULL);
  expect2("fragbench readspeed: --frames: empty value", "readspeed", "--frames", "", NULL, NULL);
  expect2("fragbench readspeed: --events '0': expected a count", "readspeed", "--events", "0", NULL, NULL);
}

TEST(options_positional_arguments_are_counted_and_never_empty) {
  paths();
  expect2("fragbench compare: missing NEW.csv: give OLD.csv NEW.csv", "compare", "a.csv", NULL, NULL, NULL);
  expect2("fragbench compare: missing OLD.csv", "compare", "--max-increase", "1%", NULL, NULL);
  expect2("fragbench compare: unexpected argument 'c.csv': give OLD.csv NEW.csv", "compare", "a.csv", "b.csv", "c.csv", NULL);
  expect2("fragbench compare: an empty argument where OLD.csv goes", "compare", "", "b.csv", NULL, NULL);
  expect2("fragbench report: missing DIR", "report", NULL, NULL, NULL, NULL);
  expect2("fragbench report: an empty argument where DIR goes", "report", "", NULL, NULL, NULL);
  expect2("fragbench report: unexpected argument 'b': give DIR", "report", "a", "b", NULL, NULL);
  expect2("fragbench readspeed: an empty argument where FILE goes", "readspeed", "", NULL, NULL, NULL);
  expect2("fragbench run: unexpected argument 'x.pickle'", "run", "x.pickle", NULL, NULL, NULL);   /* a table without any */
  /* --help prints the arguments' names from the table */
  CHECK_EQ(test_cli(outp, errp, "compare", "--help", NULL), 0);
  char *o = test_read_file(outp);
  CHECK_CONTAINS(o, "arguments:\n  OLD.csv");
  CHECK_CONTAINS(o, "  NEW.csv");
  CHECK_CONTAINS(o, "--allow-missing");
  free(o);
  CHECK_EQ(test_cli(outp, errp, "readspeed", "--help", NULL), 0);
  o = test_read_file(outp);
  CHECK_CONTAINS(o, "  FILE...");
  free(o);
}

/* every flag compare had before its table keeps its meaning, in any order and as --flag=value */
TEST(options_compare_flags_keep_their_meaning_through_the_table) {
  paths();
  char old[512], new[512];
  snprintf(old, sizeof old, "%s/opt_old.csv", test_tmpdir());
  snprintf(new, sizeof new, "%s/opt_new.csv", test_tmpdir());
  const char *w = "script:events=a1=1K/f1";
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "raw", "--allocator", "caching", "--device", "sim", "--quiet",
                    "--out", old, NULL), 0);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "raw", "--device", "sim", "--quiet", "--out", new, NULL), 0);
  CHECK_EQ(test_cli(outp, errp, "compare", old, new, NULL), 1);                        /* caching's row is missing */
  CHECK_EQ(test_cli(outp, errp, "compare", "--allow-missing", old, new, NULL), 0);     /* ... allowed */
  CHECK_EQ(test_cli(outp, errp, "compare", old, "--allocator=raw", new, NULL), 0);     /* only raw's rows */
  CHECK_EQ(test_cli(outp, errp, "compare", old, new, "--allocator", "nosuch", NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "compare", old, new, "--allow-missing", "--max-lines", "0", NULL), 0);
  char *o = test_read_file(outp);
  CHECK_CONTAINS(o, "... and 1 more lines");
  free(o);
  CHECK_EQ(test_cli(outp, errp, "compare", old, new, "--allow-missing", "--metric", "peak_reserved", "--metric=peak_requested",
                    "--max-increase", "5%", NULL), 0);
  o = test_read_file(outp);
  CHECK_CONTAINS(o, "(peak_reserved,peak_requested, max increase 5%)");
  free(o);
  CHECK_EQ(test_cli(outp, errp, "compare", old, new, "--tolerance", "results/tolerance.csv", "--metric", "peak_reserved", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "--tolerance judges every column");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "compare", "--", old, new, NULL), 1);   /* after "--" every word is an argument */
}

TEST(options_readspeed_events_and_frames_keep_their_meaning) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "readspeed", "--events", "1000", "--frames=2", NULL), 0);
  char *o = test_read_file(outp);
  CHECK_CONTAINS(o, "synthetic 1000 ev x 2 frames");
  CHECK_CONTAINS(o, "pickle reading:");
  free(o);
}
