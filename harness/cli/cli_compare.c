/* cli_compare.c - `fragbench compare OLD.csv NEW.csv`: regression tracking between two
 * results files, for a user's CI and for `make regress` (the logic is in
 * harness/engine/compare.c). Its flag list (compare_opts) and two positional arguments
 * (compare_args) are read by options.c, as every subcommand's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "options.h"
#include "compare.h"
#include "lookup.h"
#include "outfile.h"
#include "results_read.h"

/* the flags it takes (flags.def) */
static const char *const compare_opts[] = {
  "--max-increase", "--metric", "--tolerance", "--allocator", "--allow-missing", "--junit", "--json", "--max-lines",
  NULL,
};
static const struct arg_def compare_args[] = {
  {"OLD.csv", 0, "the results CSV to compare against (a baseline)"},
  {"NEW.csv", 0, "the results CSV judged"},
  {NULL, 0, NULL},
};

const struct cmd_def cmd_compare_def = {
  "compare", "OLD.csv NEW.csv [--max-increase 1%] [--metric COLS] [--junit FILE.xml] [--json FILE]\n"
  "                   regression check; exit 1 when worse",
  "Matches the rows of two results CSVs (any file `fragbench run`, `mincap` or `make bench`\n"
  "wrote; the old first line '# fragbench results v1' is accepted) by workload, trace,\n"
  "allocator, params, device and cap, and reports each difference:\n"
  "  worse    a metric rose by more than --max-increase, or a row no longer completes: fails\n"
  "  better   a metric fell, or a row now completes: reported, passes\n"
  "  within   a metric rose within --max-increase: reported, passes\n"
  "  changed  with --tolerance: any difference beyond the file's tolerance, either way: fails\n"
  "  new      a row only in NEW: passes\n"
  "  missing  a row of OLD not in NEW: fails (reported only with --allow-missing)\n"
  "  oom      the row ran out of memory on both sides: its figures are how far it got, not\n"
  "           compared (passes); completed before and dies now is worse, the reverse better\n"
  "Rows whose cap or settings differ (another device, a changed knob) are matched within\n"
  "their workload, strategy and device, with a warning naming the change (cap 19.79 GiB ->\n"
  "17.42 GiB); where they cannot be paired, missing/new say what the other side has.\n",
  compare_opts, cmd_compare,
  "Exit status: 0 nothing got worse beyond the tolerance; 1 something did (or a row is\n"
  "missing); 2 bad usage or a file that is missing or malformed (file and line named).\n",
  .args = compare_args,
};

static int bad(const char *fmt, const char *a) {
  fprintf(stderr, "fragbench compare: ");
  fprintf(stderr, fmt, a);
  fprintf(stderr, "\n(fragbench compare --help)\n");
  return 2;
}

/* every --allocator must name a strategy of OLD or NEW: a typo must not compare 0 rows and pass */
static int check_only(const struct cmp_opts *o, const struct results *a, const struct results *b) {
  for (int i = 0; i < o->nonly; i++) {
    int found = 0;
    const struct results *t[2] = {a, b};
    for (int k = 0; k < 2 && !found; k++)
      for (int r = 0; r < t[k]->nrows && !found; r++) found = !strcmp(results_get(t[k], r, "allocator"), o->only[i]);
    if (found) continue;
    char msg[1024];
    struct lookup l;
    lookup_begin(&l, msg, sizeof msg, "allocator", o->only[i]);
    for (int k = 0; k < 2; k++)
      for (int r = 0; r < t[k]->nrows; r++) {
        const char *name = results_get(t[k], r, "allocator");
        int seen = !name[0];
        for (int k2 = 0; k2 <= k && !seen; k2++)
          for (int r2 = 0; r2 < (k2 < k ? t[k2]->nrows : r) && !seen; r2++) seen = !strcmp(results_get(t[k2], r2, "allocator"), name);
        if (!seen) lookup_known(&l, name);
      }
    fprintf(stderr, "fragbench compare: --allocator: %s (in neither file)\n", lookup_text(&l));
    return 2;
  }
  return 0;
}

int cmd_compare(struct cli_opts *co) {
  struct cmp_opts o;
  cmp_opts_init(&o);
  const char *files[2] = {co->args[0], co->args[1]}, *junit = co->junit, *json = co->json, *tol = co->tolerance;
  int max_lines = co->max_lines, have_inc = OPT_GIVEN(co, max_increase);
  o.max_increase = co->max_increase;
  o.allow_missing = co->allow_missing;
  for (int i = 0; i < co->nallocators; i++) o.only[o.nonly++] = co->allocators[i];   /* at most CLI_MAX = 64 */
  /* --metric lists (items non-empty: options.c), split into one buffer */
  char metric_buf[4096];
  size_t used = 0;
  for (int i = 0; i < co->nmetrics; i++) {
    size_t n = strlen(co->metrics[i]);
    if (used + n + 1 > sizeof metric_buf) return bad("--metric %s: too many columns", co->metrics[i]);
    char *s = metric_buf + used, *save = NULL;
    memcpy(s, co->metrics[i], n + 1);
    used += n + 1;
    for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      if (o.nmetrics == CMP_MAX_METRICS) return bad("--metric: at most 32 columns%s", "");
      o.metrics[o.nmetrics++] = tok;
    }
  }
  if (tol && (o.nmetrics || have_inc)) return bad("%s", "--tolerance judges every column: give it, or --metric/--max-increase, not both");
  char err[1200];
  if (tol && cmp_load_tolerance(tol, &o, err, sizeof err)) { fprintf(stderr, "fragbench compare: %s\n", err); return 2; }
  struct results old, new;
  if (results_load(files[0], &old, err, sizeof err)) { fprintf(stderr, "fragbench compare: %s\n", err); cmp_opts_free(&o); return 2; }
  if (results_load(files[1], &new, err, sizeof err)) { fprintf(stderr, "fragbench compare: %s\n", err); results_free(&old); cmp_opts_free(&o); return 2; }
  int rc = 0;
  if (cmp_check_columns(&old, &o, err, sizeof err) || cmp_check_columns(&new, &o, err, sizeof err)) {
    fprintf(stderr, "fragbench compare: %s\n", err);
    rc = 2;
  }
  if (!rc) rc = check_only(&o, &old, &new);
  if (!rc) {
    struct cmp_report rep;
    cmp_run(&old, &new, &o, &rep);
    cmp_explain_growth(&rep, &old, &new);
    /* --junit - or --json - (or /dev/stdout): that report is standard output, the text goes to stderr */
    int report_on_stdout = (junit && outfile_is_stdout(junit)) || (json && outfile_is_stdout(json));
    cmp_print_text(report_on_stdout ? stderr : stdout, &rep, &o, max_lines);
    /* the reports are written beside their names and renamed into place (outfile.h): an
     * existing report is replaced whole or not at all */
    struct outfile fj = {0}, fs = {0};
    FILE *f;
    if (junit) { if ((f = outfile_open(&fj, junit, "the JUnit report"))) cmp_write_junit(f, &rep, files[0], files[1]); else rc = 2; }
    if (json && !rc) { if ((f = outfile_open(&fs, json, "the JSON report"))) cmp_write_json(f, &rep, &o, files[0], files[1]); else rc = 2; }
    if (outfile_finish(&fj, !rc) || outfile_finish(&fs, !rc)) rc = 2;
    if (!rc) rc = rep.fail ? 1 : 0;
    cmp_report_free(&rep);
  }
  results_free(&old);
  results_free(&new);
  cmp_opts_free(&o);
  return rc;
}
