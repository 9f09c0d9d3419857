/* cli_compare.c - `fragbench compare OLD.csv NEW.csv`: regression tracking between two
 * results files, for a user's CI and for `make regress` (the logic is in
 * harness/engine/compare.c). Its own options, as report: two files, not a selection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"

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

static FILE *open_out(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "fragbench compare: %s: cannot write\n", path);
  return f;
}

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
      const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) return bad("%s needs a value", name);
      if (!strcmp(name, "--max-increase")) {
        if (parse_percent(v, &o.max_increase)) return bad("--max-increase '%s': expected a percentage such as 1%% or 0.5", v);
        have_inc = 1;
      } else if (!strcmp(name, "--metric")) {
        size_t n = strlen(v);
        if (used + n + 1 > sizeof metric_buf) return bad("--metric %s: too many columns", v);
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
  if (!rc) {
    struct cmp_report rep;
    cmp_run(&old, &new, &o, &rep);
    cmp_explain_growth(&rep, &old, &new);
    cmp_print_text(stdout, &rep, &o, max_lines);
    FILE *f;
    if (junit) { if ((f = open_out(junit))) { cmp_write_junit(f, &rep, files[0], files[1]); if (fclose(f)) rc = 2; } else rc = 2; }
    if (json) { if ((f = open_out(json))) { cmp_write_json(f, &rep, &o, files[0], files[1]); if (fclose(f)) rc = 2; } else rc = 2; }
    if (!rc) rc = rep.fail ? 1 : 0;
    cmp_report_free(&rep);
  }
  results_free(&old);
  results_free(&new);
  cmp_opts_free(&o);
  return rc;
}
