/* compare_out.c - a comparison's report as a text table (stdout of `fragbench compare`),
 * JUnit XML (--junit: one <testsuite>, one <testcase> per row of OLD and each new row,
 * the form Ant's JUnit task writes and GitHub Actions, GitLab and Jenkins read) and JSON
 * (--json: every line, for scripts). The table and the JUnit names and messages write
 * byte columns and byte caps in GiB/MiB as the rest of the tool does; the JSON keeps the
 * raw bytes. cmp_explain_growth says, for a peak_reserved that moved, whether the workload
 * asks for more (peak_requested grew: a bigger model or batch) or the allocator holds more
 * beyond it (overhead grew: worse fragmentation). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "compare.h"
#include "params.h"

static int fails(const struct cmp_report *r, const struct cmp_line *l) {
  return l->kind == CMP_K_WORSE || l->kind == CMP_K_CHANGED || (l->kind == CMP_K_MISSING && !r->allow_missing);
}

static void pct_str(const struct cmp_line *l, char *b, size_t n) {
  if (l->has_pct) snprintf(b, n, "%+.2f%%", l->pct);
  else b[0] = 0;
}

/* a column of bytes: peak_*, *_bytes, cap_lo/cap_hi, internal_frag, leak_bytes_per_iter */
static int bytes_column(const char *c) {
  size_t n = strlen(c);
  return !strncmp(c, "peak_", 5) || !strcmp(c, "trace_peak_reserved") || (n > 6 && !strcmp(c + n - 6, "_bytes")) ||
         !strcmp(c, "cap_lo") || !strcmp(c, "cap_hi") || !strcmp(c, "internal_frag") || !strcmp(c, "leak_bytes_per_iter");
}

/* an integer of bytes ("-123" too) in GiB/MiB, else the text as written */
static const char *human(const char *col, const char *v, char *buf, size_t n) {
  char *end;
  if (!v[0] || !bytes_column(col)) return v;
  long long x = strtoll(v, &end, 10);
  if (*end) return v;
  char t[48];
  fmt_bytes((uint64_t)(x < 0 ? -x : x), t, sizeof t);
  snprintf(buf, n, "%s%s", x < 0 ? "-" : "", t);
  return buf;
}

/* a line's old or new value as shown: "(empty)", GiB/MiB, or as written */
static const char *val_text(const struct cmp_line *l, int new_side, char *buf, size_t n) {
  const char *v = new_side ? l->new : l->old;
  return v[0] ? human(l->column, v, buf, n) : "(empty)";
}

/* a row label with a byte cap ("cap 80000000000B") written in GiB/MiB */
static const char *human_label(const char *label, char *out, size_t n) {
  const char *p = strstr(label, " cap ");
  snprintf(out, n, "%s", label);
  if (!p) return out;
  const char *d = p + 5, *e = d;
  while (isdigit((unsigned char)*e)) e++;
  if (e == d || *e != 'B' || (e[1] && e[1] != ' ')) return out;
  char t[48];
  fmt_bytes(strtoull(d, NULL, 10), t, sizeof t);
  snprintf(out, n, "%.*s cap %s%s", (int)(p - label), label, t, e + 1);
  return out;
}

static const char *row_label(const struct cmp_report *r, const struct cmp_line *l, char *buf, size_t n) {
  return l->row >= 0 ? human_label(r->rows[l->row].label, buf, n) : "(file)";
}

static const char *short_label(const struct cmp_report *r, const struct cmp_line *l, char *buf, size_t n) {
  return l->row >= 0 ? human_label(r->rows[l->row].short_label, buf, n) : "(file)";
}

/* the change, with the exact bytes when the shown values look the same */
static void change_str(const struct cmp_line *l, char *b, size_t n) {
  char x[64], y[64];
  pct_str(l, b, n);
  if (!bytes_column(l->column) || !l->old[0] || !l->new[0] || strcmp(val_text(l, 0, x, sizeof x), val_text(l, 1, y, sizeof y))) return;
  long long d = strtoll(l->new, NULL, 10) - strtoll(l->old, NULL, 10);
  if (d) snprintf(b + strlen(b), n - strlen(b), "%s(%+lld B)", b[0] ? " " : "", d);
}

void cmp_print_text(FILE *f, const struct cmp_report *r, const struct cmp_opts *o, int max_lines) {
  int order[] = {CMP_K_WORSE, CMP_K_CHANGED, CMP_K_MISSING, CMP_K_BETTER, CMP_K_WITHIN, CMP_K_OOM, CMP_K_NEW};
  int w1 = 3, w2 = 6, w3 = 3, w4 = 3, shown = 0, total = 0;
  for (int i = 0; i < r->nlines; i++) {
    const struct cmp_line *l = &r->lines[i];
    if (l->kind == CMP_K_WARN) continue;
    total++;
    char lb[1200], x[64], y[64];
    int a = (int)strlen(short_label(r, l, lb, sizeof lb)), b = (int)strlen(l->column), c = (int)strlen(val_text(l, 0, x, sizeof x)),
        d = (int)strlen(val_text(l, 1, y, sizeof y));
    if (a > w1) w1 = a;
    if (b > w2) w2 = b;
    if (c > w3) w3 = c;
    if (d > w4) w4 = d;
  }
  if (w1 > 64) w1 = 64;   /* a longer label (long params) runs past its column */
  if (w3 > 24) w3 = 24;
  if (w4 > 24) w4 = 24;
  if (total) fprintf(f, "%-8s %-*s  %-*s  %*s  %*s  %s\n", "kind", w1, "row", w2, "column", w3, "old", w4, "new", "change");
  for (int k = 0; k < 7; k++)
    for (int i = 0; i < r->nlines; i++) {
      const struct cmp_line *l = &r->lines[i];
      if ((int)l->kind != order[k]) continue;
      if (shown++ >= max_lines) continue;
      char p[64], lb[1200], x[64], y[64];
      change_str(l, p, sizeof p);
      fprintf(f, "%-8s %-*s  %-*s  %*s  %*s  %s%s%s\n", cmp_kind_name(l->kind), w1, short_label(r, l, lb, sizeof lb), w2, l->column,
              w3, val_text(l, 0, x, sizeof x), w4, val_text(l, 1, y, sizeof y), p, l->note && p[0] ? "  " : "", l->note ? l->note : "");
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
    int said = 0;
    for (int i = 0; i < r->nlines; i++)
      if (r->lines[i].kind == CMP_K_WARN && said++ < max_lines) {
        char lb[1200];
        if (r->lines[i].row >= 0) fprintf(f, "  %s: ", row_label(r, &r->lines[i], lb, sizeof lb));
        else fputs("  ", f);
        fprintf(f, "%s\n", r->lines[i].note ? r->lines[i].note : r->lines[i].column);
      }
    if (said > max_lines) fprintf(f, "... and %d more warnings (--json FILE keeps every line)\n", said - max_lines);
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
  fprintf(f, "compare: %s: %d rows compared (%s): %d worse, %d better, %d within tolerance, %d changed, %d new, %d missing, %d warnings",
          r->fail ? "FAIL" : "ok", r->compared, judged, r->worse, r->better, r->within, r->changed, r->newrows, r->missing, r->warnings);
  if (r->oom) fprintf(f, ", %d out of memory on both sides (not compared)", r->oom);
  fprintf(f, "; %d rows fail\n", failing);
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
  char p[64], buf[4096], lb[1200], x[64], y[64];
  change_str(l, p, sizeof p);
  snprintf(buf, sizeof buf, "%s: %s%s%s: %s -> %s%s%s%s", cmp_kind_name(l->kind), with_row ? row_label(r, l, lb, sizeof lb) : "",
           with_row ? " " : "", l->column, val_text(l, 0, x, sizeof x), val_text(l, 1, y, sizeof y), p[0] ? " (" : "", p, p[0] ? ")" : "");
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
    char lb[1200];
    fputs("  <testcase name=\"", f);
    xml_text(f, human_label(x->label, lb, sizeof lb));
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
  fprintf(f, "  \"counts\": {\"compared\": %d, \"worse\": %d, \"better\": %d, \"within\": %d, \"changed\": %d, \"new\": %d, \"missing\": %d, \"warnings\": %d, \"oom\": %d},\n",
          r->compared, r->worse, r->better, r->within, r->changed, r->newrows, r->missing, r->warnings, r->oom);
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

/* ---- why peak_reserved moved ------------------------------------------------------- */

/* the columns a run's figures are in: what a run that died reached, not what it needs */
static int figure_column(const char *c) {
  static const char *const f[] = {"peak_requested", "peak_allocated", "peak_reserved", "overhead", "frag", "ext_frag", "internal_frag",
                                  "device_allocs", "device_frees", "maps", "unmaps", "cache_flushes", "modeled_driver_ns", NULL};
  for (int i = 0; f[i]; i++) if (!strcmp(f[i], c)) return 1;
  return 0;
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

void cmp_explain_growth(struct cmp_report *r, const struct results *old, const struct results *new) {
  for (int i = 0; i < r->nlines; i++) {
    struct cmp_line *l = &r->lines[i];
    if (l->row < 0 || l->note || (l->kind != CMP_K_WORSE && l->kind != CMP_K_BETTER && l->kind != CMP_K_WITHIN && l->kind != CMP_K_CHANGED))
      continue;
    int ro = r->rows[l->row].old_row, rn = r->rows[l->row].new_row;
    if (ro < 0 || rn < 0) continue;
    int dio = cmp_row_died(old, ro), din = cmp_row_died(new, rn);
    if ((dio || din) && figure_column(l->column)) {   /* a run that died stopped part-way: its figures are not what it needs */
      char ca[64], cb[64], note[400];
      cmp_cap_words(old, ro, ca, sizeof ca);
      cmp_cap_words(new, rn, cb, sizeof cb);
      snprintf(note, sizeof note, "%s (%s; %s): %s figures are how far it got, not what it needs",
               dio && din ? "ran out of memory at the cap on both sides" : din ? "completed before, dies now" : "died before, completes now",
               ca, cb, dio && din ? "its" : din ? "NEW's" : "OLD's");
      l->note = strdup(note);
      continue;
    }
    if (strcmp(l->column, "peak_reserved")) continue;
    int ok1, ok2, ok3, ok4;
    double qo = results_num(old, ro, "peak_requested", &ok1), qn = results_num(new, rn, "peak_requested", &ok2);
    double vo = results_num(old, ro, "peak_reserved", &ok3), vn = results_num(new, rn, "peak_reserved", &ok4);
    if (!ok1 || !ok2 || !ok3 || !ok4 || qo <= 0 || qn <= 0) continue;
    double oo = ratio(vo, qo), on = ratio(vn, qn), dq = qn / qo - 1, dv = oo > 0 ? on / oo - 1 : 0;
    char a[48], b[48], note[400];
    int k = 0;
    if (fabs(dq) >= 0.001)
      k += snprintf(note + k, sizeof note - (size_t)k, "peak_requested %s -> %s (%+.2f%%): %s", fmt_bytes((uint64_t)qo, a, sizeof a),
                    fmt_bytes((uint64_t)qn, b, sizeof b), dq * 100,
                    dq > 0 ? "the workload asks for more (a bigger model, batch or sequence)" : "the workload asks for less");
    else
      k += snprintf(note + k, sizeof note - (size_t)k, "peak_requested unchanged (%s)", fmt_bytes((uint64_t)qn, a, sizeof a));
    if (fabs(dv) >= 0.001)
      snprintf(note + k, sizeof note - (size_t)k, "; overhead %.3fx -> %.3fx (%+.2f%%): %s", oo, on, dv * 100,
               dv > 0 ? "the allocator holds more beyond it (worse fragmentation)" : "less fragmentation");
    else
      snprintf(note + k, sizeof note - (size_t)k, "; overhead unchanged (%.3fx): not fragmentation", on);
    l->note = strdup(note);
  }
}
