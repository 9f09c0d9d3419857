/* cli_compare.c - `fragbench compare OLD.csv NEW.csv`: regression tracking between two
 * results files, for a user's CI and for `make regress` (the logic is in
 * harness/engine/compare.c). Its own options, as report: two files, not a selection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"
#include "lookup.h"
#include "outfile.h"
#include "results_read.h"

static const char compare_usage[] =
"usage: fragbench compare OLD.csv NEW.csv [--max-increase P%] [--metric COL[,COL...]]...\n"
"                         [--tolerance FILE] [--allocator NAME]... [--allow-missing]\n"
"                         [--junit FILE.xml] [--json FILE] [--max-lines N]\n"
"\n"
"Matches the rows of two results CSVs (any file `fragbench run`, `mincap` or `make bench`\n"
"wrote; the old first line '# fragbench results v1' is accepted) by workload, trace,\n"
"allocator, params, device and cap, and reports each difference:\n"
"  worse    a metric rose by more than --max-increase, or a row no longer completes: fails\n"
"  better   a metric fell, or a row now completes: reported, passes\n"
"  within   a metric rose within --max-increase: reported, passes\n"
"  changed  with --tolerance: any difference beyond the file's tolerance, either way: fails\n"
"  new      a row only in NEW: passes\n"
"  missing  a row of OLD not in NEW: fails (reported only with --allow-missing)\n"
"\n"
"  --max-increase P   how much a metric may rise, in percent of OLD (1% or 1; default 0:\n"
"                     any rise is worse)\n"
"  --metric COLS      the lower-is-better columns judged (default peak_reserved), e.g.\n"
"                     peak_reserved,mincap_bytes,ns_per_op\n"
"  --tolerance FILE   judge every column of OLD as FILE says (column,mode,abs,rel,factor;\n"
"                     modes exact (the default for a column not listed), within, warn (host\n"
"                     timing: the median new/old per allocator beyond factor is a warning),\n"
"                     ignore): what `make regress` does with results/tolerance.csv\n"
"  --allocator NAME   compare only this allocator's rows (repeatable)\n"
"  --junit FILE.xml   JUnit XML: a testcase per row, a failure per worse/changed/missing row\n"
"                     (GitHub Actions, GitLab and Jenkins show it natively)\n"
"  --json FILE        every difference as JSON\n"
"  --max-lines N      lines of the table on stdout (default 200; --json keeps all)\n"
"Exit status: 0 nothing got worse beyond the tolerance; 1 something did (or a row is\n"
"missing); 2 bad usage or a file that is missing or malformed (file and line named).\n";

static int bad(const char *fmt, const char *a) {
  fprintf(stderr, "fragbench compare: ");
  fprintf(stderr, fmt, a);
  fprintf(stderr, "\n(fragbench compare --help)\n");
  return 2;
}

static int parse_percent(const char *s, double *frac) {
  char *e;
  double v = strtod(s, &e);
  if (e == s || v < 0 || v != v) return -1;
  if (*e == '%') e++;
  if (*e) return -1;
  *frac = v / 100.0;
  return 0;
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

static const char *const compare_flags[] = {"--max-increase", "--metric", "--tolerance", "--allocator", "--junit", "--json",
                                            "--max-lines", NULL};

int cmd_compare_main(int argc, char **argv) {
  struct cmp_opts o;
  cmp_opts_init(&o);
  const char *files[2] = {0}, *junit = NULL, *json = NULL, *tol = NULL;
  int nfiles = 0, max_lines = 200, have_inc = 0;
  static char metric_buf[1024];
  size_t used = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(compare_usage, stdout); return 0; }
    if (!strcmp(a, "--allow-missing")) { o.allow_missing = 1; continue; }
    if (a[0] == '-' && a[1]) {
      const char *eq = strchr(a, '=');
      char name[64];
      snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
      int known = 0;
      for (int k = 0; compare_flags[k]; k++) known |= !strcmp(compare_flags[k], name);
      if (!known) return bad("unknown option '%s'", name);
      const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) return bad("%s needs a value", name);
      if (!v[0]) { fprintf(stderr, "fragbench compare: %s: empty value\n(fragbench compare --help)\n", name); return 2; }
      if (!strcmp(name, "--max-increase")) {
        if (parse_percent(v, &o.max_increase)) return bad("--max-increase '%s': expected a percentage such as 1%% or 0.5", v);
        have_inc = 1;
      } else if (!strcmp(name, "--metric")) {
        size_t n = strlen(v);
        if (used + n + 1 > sizeof metric_buf) return bad("--metric %s: too many columns", v);
        if (v[0] == ',' || v[n - 1] == ',' || strstr(v, ",,")) return bad("--metric '%s': an empty item in the list", v);
        char *s = metric_buf + used;
        memcpy(s, v, n + 1);
        used += n + 1;
        for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
          if (o.nmetrics == CMP_MAX_METRICS) return bad("--metric: at most 32 columns%s", "");
          o.metrics[o.nmetrics++] = tok;
        }
      } else if (!strcmp(name, "--tolerance")) tol = v;
      else if (!strcmp(name, "--allocator")) { if (o.nonly == 64) return bad("--allocator: at most 64%s", ""); o.only[o.nonly++] = v; }
      else if (!strcmp(name, "--junit")) junit = v;
      else if (!strcmp(name, "--json")) json = v;
      else if (!strcmp(name, "--max-lines")) { char *e; long n = strtol(v, &e, 10); if (*e || n < 0) return bad("--max-lines '%s': expected a count", v); max_lines = (int)n; }
      else return bad("unknown option '%s'", name);
      continue;
    }
    if (nfiles == 2) return bad("unexpected argument '%s': give OLD.csv and NEW.csv", a);
    files[nfiles++] = a;
  }
  if (nfiles < 2) return bad("%s", "two files are needed: OLD.csv NEW.csv");
  if (tol && (o.nmetrics || have_inc)) return bad("%s", "--tolerance judges every column: give it, or --metric/--max-increase, not both");
  const char *outs[2] = {junit, json}, *flags[2] = {"--junit", "--json"}, *ins[3] = {files[0], files[1], tol};
  if (outfile_check("compare", flags, outs, 2, ins, 3)) { cmp_opts_free(&o); return 2; }
  char err[1200];
  if (tol && cmp_load_tolerance(tol, &o, err, sizeof err)) { fprintf(stderr, "fragbench compare: %s\n", err); return 2; }
  struct results old, new;
  if (results_load(files[0], &old, err, sizeof err)) { fprintf(stderr, "fragbench compare: %s\n", err); cmp_opts_free(&o); return 2; }
  if (results_load(files[1], &new, err, sizeof err)) { fprintf(stderr, "fragbench compare: %s\n", err); results_free(&old); cmp_opts_free(&o); return 2; }
  int rc = 0;
  if (cmp_check_columns(&old, &o, err, sizeof err) || cmp_check_columns(&new, &(struct cmp_opts){.use_tolerance = 1}, err, sizeof err)) {
    fprintf(stderr, "fragbench compare: %s\n", err);
    rc = 2;
  }
  if (!rc) rc = check_only(&o, &old, &new);
  if (!rc) {
    struct cmp_report rep;
    cmp_run(&old, &new, &o, &rep);
    cmp_print_text(stdout, &rep, &o, max_lines);
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
