/* compare_out.c - a comparison's report as a text table (stdout of `fragbench compare`),
 * JUnit XML (--junit: one <testsuite>, one <testcase> per row of OLD and each new row,
 * the form Ant's JUnit task writes and GitHub Actions, GitLab and Jenkins read) and JSON
 * (--json: every line, for scripts). */
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "compare.h"

static int fails(const struct cmp_report *r, const struct cmp_line *l) {
  return l->kind == CMP_K_WORSE || l->kind == CMP_K_CHANGED || (l->kind == CMP_K_MISSING && !r->allow_missing);
}

static void pct_str(const struct cmp_line *l, char *b, size_t n) {
  if (l->has_pct) snprintf(b, n, "%+.2f%%", l->pct);
  else b[0] = 0;
}

static const char *row_label(const struct cmp_report *r, const struct cmp_line *l) {
  return l->row >= 0 ? r->rows[l->row].label : "(file)";
}

static const char *short_label(const struct cmp_report *r, const struct cmp_line *l) {
  return l->row >= 0 ? r->rows[l->row].short_label : "(file)";
}

void cmp_print_text(FILE *f, const struct cmp_report *r, const struct cmp_opts *o, int max_lines) {
  int order[] = {CMP_K_WORSE, CMP_K_CHANGED, CMP_K_MISSING, CMP_K_BETTER, CMP_K_WITHIN, CMP_K_NEW};
  int w1 = 3, w2 = 6, w3 = 3, w4 = 3, shown = 0, total = 0;
  for (int i = 0; i < r->nlines; i++) {
    const struct cmp_line *l = &r->lines[i];
    if (l->kind == CMP_K_WARN) continue;
    total++;
    int a = (int)strlen(short_label(r, l)), b = (int)strlen(l->column), c = (int)strlen(l->old), d = (int)strlen(l->new);
    if (a > w1) w1 = a;
    if (b > w2) w2 = b;
    if (c > w3) w3 = c;
    if (d > w4) w4 = d;
  }
  if (w1 > 64) w1 = 64;   /* a longer label (long params) runs past its column */
  if (w3 > 24) w3 = 24;
  if (w4 > 24) w4 = 24;
  if (total) fprintf(f, "%-8s %-*s  %-*s  %*s  %*s  %s\n", "kind", w1, "row", w2, "column", w3, "old", w4, "new", "change");
  for (int k = 0; k < 6; k++)
    for (int i = 0; i < r->nlines; i++) {
      const struct cmp_line *l = &r->lines[i];
      if ((int)l->kind != order[k]) continue;
      if (shown++ >= max_lines) continue;
      char p[32];
      pct_str(l, p, sizeof p);
      fprintf(f, "%-8s %-*s  %-*s  %*s  %*s  %s%s%s\n", cmp_kind_name(l->kind), w1, short_label(r, l), w2, l->column,
              w3, l->old[0] ? l->old : "(empty)", w4, l->new[0] ? l->new : "(empty)", p, l->note && p[0] ? "  " : "", l->note ? l->note : "");
    }
  if (shown > max_lines) fprintf(f, "... and %d more lines (--json FILE keeps every line)\n", shown - max_lines);
  /* where the failures are */
  if (r->fail) {
    fprintf(f, "failing rows by allocator:");
    const char *seen[64]; int cnt[64], ns = 0;
    for (int i = 0; i < r->nrows; i++) {
      if (!r->rows[i].failed) continue;
      int j = 0;
      while (j < ns && strcmp(seen[j], r->rows[i].allocator)) j++;
      if (j == ns && ns < 64) { seen[ns] = r->rows[i].allocator; cnt[ns++] = 0; }
      if (j < 64) cnt[j]++;
    }
    for (int j = 0; j < ns; j++) fprintf(f, "%s %s %d", j ? "," : "", seen[j], cnt[j]);
    fputc('\n', f);
  }
  if (r->warnings) {
    fprintf(f, "warnings (not failures):\n");
    for (int i = 0; i < r->nlines; i++)
      if (r->lines[i].kind == CMP_K_WARN) fprintf(f, "  %s\n", r->lines[i].note ? r->lines[i].note : r->lines[i].column);
  }
  char judged[300];
  if (o->use_tolerance) snprintf(judged, sizeof judged, "every column, per the tolerance file");
  else {
    int n = snprintf(judged, sizeof judged, "%s", o->nmetrics ? "" : "peak_reserved");
    for (int i = 0; i < o->nmetrics && n < (int)sizeof judged; i++) n += snprintf(judged + n, sizeof judged - (size_t)n, "%s%s", i ? "," : "", o->metrics[i]);
    snprintf(judged + (n < (int)sizeof judged ? n : (int)sizeof judged - 1), sizeof judged - (size_t)(n < (int)sizeof judged ? n : (int)sizeof judged - 1),
             ", max increase %g%%", o->max_increase * 100);
  }
  int failing = 0;
  for (int i = 0; i < r->nrows; i++) failing += r->rows[i].failed;
  fprintf(f, "compare: %s: %d rows compared (%s): %d worse, %d better, %d within tolerance, %d changed, %d new, %d missing, %d warnings; %d rows fail\n",
          r->fail ? "FAIL" : "ok", r->compared, judged, r->worse, r->better, r->within, r->changed, r->newrows, r->missing, r->warnings, failing);
}

/* ---- XML / JSON text ---------------------------------------------------------------- */

static void xml_text(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') fputc('?', f);   /* not allowed in XML 1.0 */
        else fputc(*p, f);
    }
  }
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", f);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

/* "worse: ROW peak_reserved: 100 -> 102 (+2.00%); note"; with_row = 0 leaves ROW out */
static void line_sentence(FILE *f, const struct cmp_report *r, const struct cmp_line *l, int xml, int with_row) {
  char p[32], buf[2048];
  pct_str(l, p, sizeof p);
  snprintf(buf, sizeof buf, "%s: %s%s%s: %s -> %s%s%s%s", cmp_kind_name(l->kind), with_row ? row_label(r, l) : "", with_row ? " " : "",
           l->column, l->old[0] ? l->old : "(empty)", l->new[0] ? l->new : "(empty)", p[0] ? " (" : "", p, p[0] ? ")" : "");
  if (xml) xml_text(f, buf); else fputs(buf, f);
  if (l->note) { fputs("; ", f); if (xml) xml_text(f, l->note); else fputs(l->note, f); }
}

void cmp_write_junit(FILE *f, const struct cmp_report *r, const char *old_path, const char *new_path) {
  int failures = 0, skipped = 0, tests = r->nrows + (r->columns_missing ? 1 : 0);
  for (int i = 0; i < r->nrows; i++) {
    failures += r->rows[i].failed;
    skipped += !r->rows[i].failed && r->rows[i].verdict == CMP_K_MISSING;
  }
  if (r->columns_missing) failures++;
  char host[256] = "localhost", stamp[32];
  if (gethostname(host, sizeof host) || !host[0]) snprintf(host, sizeof host, "localhost");
  host[sizeof host - 1] = 0;
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f, "<testsuite name=\"fragbench compare\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"0\" timestamp=\"%s\" hostname=\"",
          tests, failures, skipped, stamp);
  xml_text(f, host);
  fputs("\">\n  <properties>\n    <property name=\"old\" value=\"", f);
  xml_text(f, old_path);
  fputs("\"/>\n    <property name=\"new\" value=\"", f);
  xml_text(f, new_path);
  fputs("\"/>\n  </properties>\n", f);
  if (r->columns_missing) {
    fputs("  <testcase name=\"columns\" classname=\"fragbench.file\" time=\"0\">\n    <failure type=\"missing\" message=\"columns of OLD not in NEW\">", f);
    for (int i = 0; i < r->nlines; i++)
      if (r->lines[i].row < 0 && r->lines[i].kind == CMP_K_MISSING) { line_sentence(f, r, &r->lines[i], 1, 0); fputc('\n', f); }
    fputs("</failure>\n  </testcase>\n", f);
  }
  for (int i = 0; i < r->nrows; i++) {
    const struct cmp_row *x = &r->rows[i];
    fputs("  <testcase name=\"", f);
    xml_text(f, x->label);
    fputs("\" classname=\"fragbench.", f);
    xml_text(f, x->allocator[0] ? x->allocator : "unknown");
    fputs("\" time=\"0\"", f);
    if (!x->failed && x->verdict != CMP_K_MISSING) { fputs("/>\n", f); continue; }
    if (!x->failed) { fputs(">\n    <skipped/>\n  </testcase>\n", f); continue; }
    /* one <failure> per testcase: the first failing line is the message, all of them the text */
    const struct cmp_line *first = NULL;
    for (int j = 0; j < r->nlines && !first; j++) if (r->lines[j].row == i && fails(r, &r->lines[j])) first = &r->lines[j];
    fprintf(f, ">\n    <failure type=\"%s\" message=\"", cmp_kind_name(first->kind));
    line_sentence(f, r, first, 1, 0);
    fputs("\">", f);
    for (int j = 0; j < r->nlines; j++)
      if (r->lines[j].row == i) { line_sentence(f, r, &r->lines[j], 1, 0); fputc('\n', f); }
    fputs("</failure>\n  </testcase>\n", f);
  }
  /* what passed but is worth reading: improvements, rises within tolerance, new rows, warnings */
  fputs("  <system-out>", f);
  for (int j = 0; j < r->nlines; j++)
    if (!fails(r, &r->lines[j])) { line_sentence(f, r, &r->lines[j], 1, 1); fputc('\n', f); }
  fprintf(f, "%s: %d rows compared: %d worse, %d better, %d within tolerance, %d changed, %d new, %d missing, %d warnings\n",
          r->fail ? "FAIL" : "ok", r->compared, r->worse, r->better, r->within, r->changed, r->newrows, r->missing, r->warnings);
  fputs("</system-out>\n  <system-err></system-err>\n</testsuite>\n", f);
}

void cmp_write_json(FILE *f, const struct cmp_report *r, const struct cmp_opts *o, const char *old_path, const char *new_path) {
  fputs("{\n  \"old\": ", f); json_str(f, old_path);
  fputs(",\n  \"new\": ", f); json_str(f, new_path);
  fprintf(f, ",\n  \"verdict\": \"%s\",\n  \"max_increase_pct\": %g,\n  \"tolerance_file\": %s,\n", r->fail ? "fail" : "ok",
          o->max_increase * 100, o->use_tolerance ? "true" : "false");
  fprintf(f, "  \"counts\": {\"compared\": %d, \"worse\": %d, \"better\": %d, \"within\": %d, \"changed\": %d, \"new\": %d, \"missing\": %d, \"warnings\": %d},\n",
          r->compared, r->worse, r->better, r->within, r->changed, r->newrows, r->missing, r->warnings);
  fputs("  \"differences\": [", f);
  for (int i = 0; i < r->nlines; i++) {
    const struct cmp_line *l = &r->lines[i];
    fputs(i ? ",\n    {" : "\n    {", f);
    fputs("\"kind\": ", f); json_str(f, cmp_kind_name(l->kind));
    fprintf(f, ", \"fails\": %s", fails(r, l) ? "true" : "false");
    if (l->row >= 0) {
      const struct cmp_row *x = &r->rows[l->row];
      fputs(", \"row\": ", f); json_str(f, x->label);
      fputs(", \"workload\": ", f); json_str(f, x->workload);
      fputs(", \"trace\": ", f); json_str(f, x->trace);
      fputs(", \"allocator\": ", f); json_str(f, x->allocator);
      fputs(", \"params\": ", f); json_str(f, x->params);
      fputs(", \"device\": ", f); json_str(f, x->device);
      fputs(", \"cap\": ", f); json_str(f, x->cap);
    }
    fputs(", \"column\": ", f); json_str(f, l->column);
    fputs(", \"old\": ", f); json_str(f, l->old);
    fputs(", \"new\": ", f); json_str(f, l->new);
    if (l->has_pct && isfinite(l->pct)) fprintf(f, ", \"change_pct\": %.4f", l->pct);
    if (l->note) { fputs(", \"note\": ", f); json_str(f, l->note); }
    fputc('}', f);
  }
  fputs(r->nlines ? "\n  ]\n}\n" : "]\n}\n", f);
}
