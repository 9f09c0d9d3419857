/* compare.c - matching two results files row by row and judging each difference (see
 * compare.h); the output formats are in compare_out.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"
#include "params.h"

static char *dup(const char *s) {
  char *d = strdup(s ? s : "");
  if (!d) abort();
  return d;
}

const char *cmp_kind_name(enum cmp_kind k) {
  static const char *n[] = {"worse", "better", "within", "changed", "new", "missing", "warning", "oom"};
  return n[k];
}

void cmp_opts_init(struct cmp_opts *o) {
  memset(o, 0, sizeof *o);
  o->max_increase = 0;
  o->min_timed_events = 10000;
}

void cmp_opts_free(struct cmp_opts *o) { free(o->rules); o->rules = NULL; o->nrules = 0; }

static int parse_num(const char *s, double *v) {
  if (!s || !*s) return 0;
  char *e;
  *v = strtod(s, &e);
  return *e == 0 && !isnan(*v);
}

int cmp_load_tolerance(const char *path, struct cmp_opts *o, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) { snprintf(err, errlen, "%s: cannot read", path); return 2; }
  char line[512];
  int ln = 0;
  while (fgets(line, sizeof line, f)) {
    ln++;
    size_t len = strlen(line);
    if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {   /* never a line cut in two */
      snprintf(err, errlen, "%s:%d: a line over %zu characters: expected column,mode,abs,rel,factor", path, ln, sizeof line - 2);
      fclose(f);
      return 2;
    }
    if (len < sizeof line - 1 && !feof(f) && (!len || line[len - 1] != '\n')) {   /* fgets stopped short: a NUL byte */
      snprintf(err, errlen, "%s:%d: a NUL byte in the line: expected text (column,mode,abs,rel,factor)", path, ln);
      fclose(f);
      return 2;
    }
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#' || !strncmp(line, "column,", 7)) continue;
    char *fld[5] = {0};
    int n = 0;
    for (char *p = line; n < 5; n++) {
      fld[n] = p;
      char *c = strchr(p, ',');
      if (!c) { n++; break; }
      *c = 0;
      p = c + 1;
    }
    if (n < 2 || !fld[0][0] || strlen(fld[0]) >= sizeof o->rules[0].column) {
      snprintf(err, errlen, "%s:%d: expected column,mode,abs,rel,factor", path, ln);
      fclose(f);
      return 2;
    }
    struct cmp_rule r = {0};
    snprintf(r.column, sizeof r.column, "%s", fld[0]);
    if (!strcmp(fld[1], "exact")) r.mode = CMP_EXACT;
    else if (!strcmp(fld[1], "within")) r.mode = CMP_WITHIN;
    else if (!strcmp(fld[1], "warn")) r.mode = CMP_WARN;
    else if (!strcmp(fld[1], "ignore")) r.mode = CMP_IGNORE;
    else {
      snprintf(err, errlen, "%s:%d: mode '%s': expected exact, within, warn or ignore", path, ln, fld[1]);
      fclose(f);
      return 2;
    }
    double *dst[3] = {&r.abs, &r.rel, &r.factor};
    for (int i = 0; i < 3; i++)
      if (n > 2 + i && fld[2 + i][0] && !parse_num(fld[2 + i], dst[i])) {
        snprintf(err, errlen, "%s:%d: '%s': expected a number", path, ln, fld[2 + i]);
        fclose(f);
        return 2;
      }
    o->rules = realloc(o->rules, (size_t)(o->nrules + 1) * sizeof *o->rules);
    if (!o->rules) abort();
    o->rules[o->nrules++] = r;
  }
  fclose(f);
  o->use_tolerance = 1;
  return 0;
}

static const struct cmp_rule *rule_for(const struct cmp_opts *o, const char *col) {
  for (int i = 0; i < o->nrules; i++)
    if (!strcmp(o->rules[i].column, col)) return &o->rules[i];
  return NULL;
}

static const char *metric(const struct cmp_opts *o, int i) { return o->nmetrics ? o->metrics[i] : "peak_reserved"; }
static int nmetrics(const struct cmp_opts *o) { return o->nmetrics ? o->nmetrics : 1; }

/* a cell that reads as a number but is not finite ("nan", "inf"): a figure no run writes */
static int not_finite(const char *s) {
  if (!s || !*s) return 0;
  char *e;
  double v = strtod(s, &e);
  return *e == 0 && !isfinite(v);
}

int cmp_check_columns(const struct results *old, const struct cmp_opts *o, char *err, size_t errlen) {
  static const char *key[] = {"workload", "allocator", NULL};
  for (int i = 0; key[i]; i++)
    if (results_col(old, key[i]) < 0) { snprintf(err, errlen, "%s: no '%s' column: not a fragbench results file", old->path, key[i]); return 2; }
  for (int r = 0; r < old->nrows; r++)   /* a short row would compare its missing cells as "" */
    if (old->row_fields && old->row_fields[r] < old->ncols) {
      snprintf(err, errlen, "%s:%d: %d fields, the header has %d (a cut or hand-edited row)", old->path, old->row_line[r], old->row_fields[r],
               old->ncols);
      return 2;
    }
  for (int c = 0; c < old->ncols; c++) {
    const struct cmp_rule *ru = o->use_tolerance ? rule_for(o, old->cols[c]) : NULL;
    int judged = 0;
    if (o->use_tolerance) judged = ru && ru->mode != CMP_IGNORE;
    else for (int i = 0; i < nmetrics(o); i++) judged |= !strcmp(metric(o, i), old->cols[c]);
    if (!judged) continue;
    for (int r = 0; r < old->nrows; r++)
      if (not_finite(old->rows[r][c])) {
        snprintf(err, errlen, "%s:%d: %s is '%s': expected a number (or empty for not measured)", old->path,
                 old->row_line ? old->row_line[r] : r + 2, old->cols[c], old->rows[r][c]);
        return 2;
      }
  }
  if (o->use_tolerance) return 0;
  for (int i = 0; i < nmetrics(o); i++)
    if (results_col(old, metric(o, i)) < 0) {
      snprintf(err, errlen, "%s: --metric %s: no such column (see the CSV columns in docs/csv.md)", old->path, metric(o, i));
      return 2;
    }
  return 0;
}

/* ---- keys ------------------------------------------------------------------------- */

struct keyed { char *key; int row; };

static void row_cap(const struct results *t, int r, char *cap, size_t n) {
  const char *x = results_get(t, r, "cap_x"), *b = results_get(t, r, "cap_bytes");
  if (results_get(t, r, "mincap_bytes")[0] || results_get(t, r, "mincap_x")[0]) snprintf(cap, n, "mincap");   /* its cap is its result */
  else if (x[0]) snprintf(cap, n, "%sx", x);
  else if (b[0]) snprintf(cap, n, "%sB", b);
  else snprintf(cap, n, "-");
}

static int selected(const struct results *t, int r, const struct cmp_opts *o) {
  if (!o->nonly) return 1;
  const char *a = results_get(t, r, "allocator");
  for (int i = 0; i < o->nonly; i++) if (!strcmp(o->only[i], a)) return 1;
  return 0;
}

static int by_key(const void *a, const void *b) {
  const struct keyed *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : x->row - y->row;
}

/* keys of a file's selected rows, in row order; repeats numbered "#2", "#3"... */
static struct keyed *make_keys(const struct results *t, const struct cmp_opts *o, int *n) {
  struct keyed *k = calloc((size_t)t->nrows + 1, sizeof *k);
  if (!k) abort();
  *n = 0;
  for (int r = 0; r < t->nrows; r++) {
    if (!selected(t, r, o)) continue;
    char cap[96];
    row_cap(t, r, cap, sizeof cap);
    const char *parts[] = {results_get(t, r, "workload"), results_get(t, r, "trace"), results_get(t, r, "allocator"),
                           results_get(t, r, "params"), results_get(t, r, "device"), cap};
    /* an aggregate row's params end in its results (";sum_peak_requested=..."): not key */
    char params[1024];
    snprintf(params, sizeof params, "%s", parts[3]);
    char *sums = strstr(params, ";sum_peak_requested=");
    if (sums) *sums = 0;
    parts[3] = params;
    size_t len = 16;
    for (int i = 0; i < 6; i++) len += strlen(parts[i]) + 1;
    char *s = malloc(len);
    if (!s) abort();
    s[0] = 0;
    for (int i = 0; i < 6; i++) { if (i) strcat(s, "\x1f"); strcat(s, parts[i]); }
    k[*n].key = s;
    k[*n].row = r;
    (*n)++;
  }
  /* number the repeats in row order: each row's repeat number is found on the sorted
   * copy first, and keys are renamed only afterwards (renaming frees a key the sorted
   * copy still points at); k is in row order, so a row's place in k is a binary search */
  struct keyed *sorted = malloc(((size_t)*n + 1) * sizeof *sorted);
  int *rep = calloc((size_t)*n + 1, sizeof *rep);
  if (!sorted || !rep) abort();
  memcpy(sorted, k, (size_t)*n * sizeof *k);
  qsort(sorted, (size_t)*n, sizeof *sorted, by_key);
  for (int i = 1, r = 1; i < *n; i++) {
    r = strcmp(sorted[i].key, sorted[i - 1].key) ? 1 : r + 1;
    if (r == 1) continue;
    int lo = 0, hi = *n - 1;
    while (lo < hi) { int mid = (lo + hi) / 2; if (k[mid].row < sorted[i].row) lo = mid + 1; else hi = mid; }
    rep[lo] = r;
  }
  for (int j = 0; j < *n; j++) {
    if (!rep[j]) continue;
    char *s = malloc(strlen(k[j].key) + 16);
    if (!s) abort();
    sprintf(s, "%s\x1f#%d", k[j].key, rep[j]);
    free(k[j].key);
    k[j].key = s;
  }
  free(rep);
  free(sorted);
  return k;
}

/* ---- the report ------------------------------------------------------------------- */

static int add_row(struct cmp_report *rep, const struct results *t, int r, const char *key) {
  if (rep->nrows == rep->rcap) {
    rep->rcap = rep->rcap ? rep->rcap * 2 : 64;
    rep->rows = realloc(rep->rows, (size_t)rep->rcap * sizeof *rep->rows);
    if (!rep->rows) abort();
  }
  struct cmp_row *x = &rep->rows[rep->nrows];
  memset(x, 0, sizeof *x);
  char cap[96];
  row_cap(t, r, cap, sizeof cap);
  x->workload = dup(results_get(t, r, "workload"));
  x->trace = dup(results_get(t, r, "trace"));
  x->allocator = dup(results_get(t, r, "allocator"));
  x->params = dup(results_get(t, r, "params"));
  x->device = dup(results_get(t, r, "device"));
  x->cap = dup(cap);
  /* label: the trace's file name (or the workload spec), the strategy, the cap */
  const char *w = x->trace[0] ? x->trace : x->workload;
  const char *slash = strrchr(w, '/');
  if (slash && x->trace[0]) w = slash + 1;
  const char *rep_n = strstr(key, "\x1f#");
  size_t len = strlen(w) + strlen(x->allocator) + strlen(x->params) + strlen(cap) + strlen(x->device) + 64;
  x->label = malloc(len);
  if (!x->label) abort();
  snprintf(x->label, len, "%s %s%s%s %s%s%s%s%s", w, x->allocator, x->params[0] ? ":" : "", x->params,
           !strcmp(cap, "-") ? "uncapped" : !strcmp(cap, "mincap") ? "mincap" : "cap ", !strcmp(cap, "-") || !strcmp(cap, "mincap") ? "" : cap,
           strcmp(x->device, "sim") && x->device[0] ? " dev " : "", strcmp(x->device, "sim") ? x->device : "", rep_n ? " " : "");
  if (rep_n) strncat(x->label, rep_n + 1, len - strlen(x->label) - 1);
  size_t wl = strlen(w);
  x->short_label = malloc(len);
  if (!x->short_label) abort();
  if (wl > 44) snprintf(x->short_label, len, "%.41s...%s", w, x->label + wl);
  else snprintf(x->short_label, len, "%s", x->label);
  x->verdict = CMP_K_WITHIN;
  x->old_row = x->new_row = -1;
  return rep->nrows++;
}

static void add_line(struct cmp_report *rep, enum cmp_kind kind, int row, const char *col, const char *o, const char *n, const char *note) {
  if (rep->nlines == rep->lcap) {
    rep->lcap = rep->lcap ? rep->lcap * 2 : 64;
    rep->lines = realloc(rep->lines, (size_t)rep->lcap * sizeof *rep->lines);
    if (!rep->lines) abort();
  }
  struct cmp_line *l = &rep->lines[rep->nlines++];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  l->row = row;
  snprintf(l->column, sizeof l->column, "%s", col ? col : "");
  l->old = dup(o);
  l->new = dup(n);
  l->note = note ? dup(note) : NULL;
  double a, b;
  if (parse_num(o, &a) && parse_num(n, &b) && a != 0) { l->pct = (b - a) / fabs(a) * 100.0; l->has_pct = 1; }
  int fails = kind == CMP_K_WORSE || kind == CMP_K_CHANGED || (kind == CMP_K_MISSING && !rep->allow_missing);
  switch (kind) {
    case CMP_K_WORSE: rep->worse++; break;
    case CMP_K_BETTER: rep->better++; break;
    case CMP_K_WITHIN: rep->within++; break;
    case CMP_K_CHANGED: rep->changed++; break;
    case CMP_K_NEW: if (!strcmp(l->column, "(row)")) rep->newrows++; break;   /* else a figure now measured */
    case CMP_K_MISSING: rep->missing++; break;
    case CMP_K_WARN: rep->warnings++; break;
    case CMP_K_OOM: rep->oom++; break;
  }
  if (row >= 0) {
    struct cmp_row *x = &rep->rows[row];
    if (fails) { x->failed = 1; x->verdict = kind; }
    else if (!x->failed && kind == CMP_K_MISSING) x->verdict = kind;
    else if (!x->failed && (kind == CMP_K_NEW || kind == CMP_K_BETTER)) x->verdict = kind;
  }
  if (fails) rep->fail = 1;
}

/* a lower-is-better column under --max-increase */
static void judge_metric(struct cmp_report *rep, int row, const char *col, const char *o, const char *n, double max_inc) {
  if (!strcmp(o, n)) return;
  double a, b;
  int has_o = parse_num(o, &a), has_n = parse_num(n, &b);
  if (!has_o && has_n) { add_line(rep, CMP_K_NEW, row, col, o, n, "now measured"); return; }   /* e.g. a row that was skipped */
  if (has_o && !has_n) { add_line(rep, CMP_K_WORSE, row, col, o, n, "no longer measured"); return; }
  if (!has_o) { add_line(rep, CMP_K_CHANGED, row, col, o, n, "not a number"); return; }
  if (b < a) add_line(rep, CMP_K_BETTER, row, col, o, n, NULL);
  else if (b > a && (a == 0 || (b - a) / fabs(a) > max_inc)) add_line(rep, CMP_K_WORSE, row, col, o, n, NULL);
  else if (b > a) add_line(rep, CMP_K_WITHIN, row, col, o, n, NULL);
}

/* timing ratios for the warn mode: per (allocator, column), a growing list */
struct ratios { char alloc[64], col[64]; double *v; int n, cap; };

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void judge_by_rules(struct cmp_report *rep, int row, const struct results *old, int ro, const struct results *new, int rn,
                           const struct cmp_opts *o, struct ratios **rat, int *nrat) {
  for (int c = 0; c < old->ncols; c++) {
    const char *col = old->cols[c];
    const struct cmp_rule *ru = rule_for(o, col);
    enum cmp_mode m = ru ? ru->mode : CMP_EXACT;
    if (m == CMP_IGNORE || results_col(new, col) < 0) continue;   /* a missing column is said once */
    const char *a = old->rows[ro][c], *b = results_get(new, rn, col);
    double x, y;
    if (m == CMP_WARN) {
      int ok = 0;
      double ev = results_num(new, rn, "events", &ok);
      if (ok && ev >= o->min_timed_events && parse_num(a, &x) && parse_num(b, &y) && x > 0 && y > 0) {
        const char *al = results_get(new, rn, "allocator");
        int i = 0;
        while (i < *nrat && (strcmp((*rat)[i].alloc, al) || strcmp((*rat)[i].col, col))) i++;
        if (i == *nrat) {
          *rat = realloc(*rat, (size_t)(*nrat + 1) * sizeof **rat);
          if (!*rat) abort();
          memset(&(*rat)[i], 0, sizeof **rat);
          snprintf((*rat)[i].alloc, sizeof (*rat)[i].alloc, "%s", al);
          snprintf((*rat)[i].col, sizeof (*rat)[i].col, "%s", col);
          (*nrat)++;
        }
        struct ratios *q = &(*rat)[i];
        if (q->n == q->cap) { q->cap = q->cap ? q->cap * 2 : 16; q->v = realloc(q->v, (size_t)q->cap * sizeof *q->v); if (!q->v) abort(); }
        q->v[q->n++] = y / x;
      }
      continue;
    }
    if (!strcmp(a, b)) continue;
    if (m == CMP_WITHIN && parse_num(a, &x) && parse_num(b, &y) && fabs(y - x) <= ru->abs + ru->rel * fabs(x)) continue;
    add_line(rep, CMP_K_CHANGED, row, col, a, b, NULL);
  }
}

/* ---- rows that died, rows across a cap or settings change --------------------------- */

int cmp_row_died(const struct results *t, int r) { return !strncmp(results_get(t, r, "status"), "oom", 3); }

/* a row's cap in words: "cap 19.79 GiB", "cap 1.25x", "uncapped" */
void cmp_cap_words(const struct results *t, int r, char *out, size_t n) {
  const char *x = results_get(t, r, "cap_x"), *b = results_get(t, r, "cap_bytes");
  char a[48];
  int ok;
  uint64_t v = results_u64(t, r, "cap_bytes", &ok);
  if (b[0] && ok) snprintf(out, n, "cap %s", fmt_bytes(v, a, sizeof a));
  else if (x[0]) snprintf(out, n, "cap %sx", x);
  else snprintf(out, n, "uncapped");
}

/* what a dead row's line says: where it died, under which cap */
static void died_at(const struct results *t, int r, char *out, size_t n) {
  char c[64];
  cmp_cap_words(t, r, c, sizeof c);
  const char *ev = results_get(t, r, "first_oom_event");
  snprintf(out, n, "%s%s%s", c, ev[0] ? ", at event " : "", ev);
}


/* every selected row of a file by its group (workload, trace, allocator, device), sorted */
struct group_index { struct keyed *k; int n; };

static char *group_key(const struct results *t, int r);

static void group_index_build(struct group_index *g, const struct results *t, const struct cmp_opts *o) {
  g->k = malloc(((size_t)t->nrows + 1) * sizeof *g->k);
  if (!g->k) abort();
  g->n = 0;
  for (int r = 0; r < t->nrows; r++)
    if (selected(t, r, o)) { g->k[g->n].key = group_key(t, r); g->k[g->n++].row = r; }
  qsort(g->k, (size_t)g->n, sizeof *g->k, by_key);
}

static void group_index_free(struct group_index *g) {
  for (int i = 0; i < g->n; i++) free(g->k[i].key);
  free(g->k);
}

/* the first entry of g with key, or g->n */
static int group_first(const struct group_index *g, const char *key) {
  int lo = 0, hi = g->n;
  while (lo < hi) { int mid = (lo + hi) / 2; if (strcmp(g->k[mid].key, key) < 0) lo = mid + 1; else hi = mid; }
  return lo;
}

/* the rows of the other file (its index: other_g) with r's workload, trace, allocator and
 * device, in words: "NEW has this workload and strategy only as: cap 17.42 GiB" ("" when none) */
static void other_side(const struct results *mine, int r, const struct results *other, const struct group_index *other_g, const char *other_name,
                       char *out, size_t n) {
  size_t k = 0;
  out[0] = 0;
  char *key = group_key(mine, r);
  for (int i = group_first(other_g, key), shown = 0; i < other_g->n && shown < 4 && !strcmp(other_g->k[i].key, key); i++, shown++) {
    int q = other_g->k[i].row;
    char c[64], pm[300];
    cmp_cap_words(other, q, c, sizeof c);
    const char *p = results_get(other, q, "params");
    snprintf(pm, sizeof pm, "%s%s", p[0] ? " with " : "", p);
    if (!shown) k += (size_t)snprintf(out + k, n - k, "%s has this workload and strategy only as: ", other_name);
    if (k < n) k += (size_t)snprintf(out + k, n - k, "%s%s%s", shown ? "; " : "", c, pm);
  }
  free(key);
}

/* one matched pair, judged: by the tolerance file, or by the metrics, a dead row by
 * whether it completed */
static void judge_pair(struct cmp_report *rep, int row, const struct results *old, int ro, const struct results *new, int rn,
                       const struct cmp_opts *o, struct ratios **rat, int *nrat) {
  rep->rows[row].old_row = ro;
  rep->rows[row].new_row = rn;
  rep->compared++;
  if (o->use_tolerance) { judge_by_rules(rep, row, old, ro, new, rn, o, rat, nrat); return; }
  int dio = cmp_row_died(old, ro), din = cmp_row_died(new, rn);
  char a[200], b[200], note[500];
  if (dio || din) {   /* its figures are how far it got: never compared */
    if (dio && din) {
      died_at(old, ro, a, sizeof a);
      died_at(new, rn, b, sizeof b);
      snprintf(note, sizeof note, "ran out of memory at the cap on both sides (%s; %s): its figures are how far it got, not compared", a, b);
      add_line(rep, CMP_K_OOM, row, "status", results_get(old, ro, "status"), results_get(new, rn, "status"), note);
    } else if (din) {
      died_at(new, rn, b, sizeof b);
      snprintf(note, sizeof note, "completed before, dies now (%s)", b);
      add_line(rep, CMP_K_WORSE, row, "status", results_get(old, ro, "status"), results_get(new, rn, "status"), note);
    } else {
      died_at(old, ro, a, sizeof a);
      snprintf(note, sizeof note, "died before (%s), completes now", a);
      add_line(rep, CMP_K_BETTER, row, "status", results_get(old, ro, "status"), results_get(new, rn, "status"), note);
    }
    return;
  }
  int okc = 0, okn = 0;
  double co = results_num(old, ro, "completed", &okc), cn = results_num(new, rn, "completed", &okn);
  if (okc && okn && co != cn) {
    snprintf(note, sizeof note, "status %s -> %s", results_get(old, ro, "status"), results_get(new, rn, "status"));
    add_line(rep, cn < co ? CMP_K_WORSE : CMP_K_BETTER, row, "completed", results_get(old, ro, "completed"), results_get(new, rn, "completed"), note);
  }
  for (int m = 0; m < nmetrics(o); m++) {
    const char *col = metric(o, m);
    if (results_col(new, col) < 0) { add_line(rep, CMP_K_CHANGED, row, col, results_get(old, ro, col), "", "column not in NEW"); continue; }
    judge_metric(rep, row, col, results_get(old, ro, col), results_get(new, rn, col), o->max_increase);
  }
}

/* the group a row belongs to: workload, trace, allocator, device (malloc'd) */
static char *group_key(const struct results *t, int r) {
  static const char *const k[] = {"workload", "trace", "allocator", "device", NULL};
  size_t len = 8;
  for (int i = 0; k[i]; i++) len += strlen(results_get(t, r, k[i])) + 1;
  char *s = malloc(len);
  if (!s) abort();
  s[0] = 0;
  for (int i = 0; k[i]; i++) { if (i) strcat(s, "\x1f"); strcat(s, results_get(t, r, k[i])); }
  return s;
}

/* the paired row (pair_matched) and its warning: what changed between them */
static void pair_rows(struct cmp_report *rep, int j, const struct results *old, const struct results *new, int rn, const struct cmp_opts *o,
                      struct ratios **rat, int *nrat) {
  const struct cmp_row *y = &rep->rows[j];
  char a[64], b[64], why[900];
  size_t k = 0;
  cmp_cap_words(old, y->old_row, a, sizeof a);
  cmp_cap_words(new, rn, b, sizeof b);
  const char *po = results_get(old, y->old_row, "params"), *pn = results_get(new, rn, "params");
  int dcap = strcmp(a, b) != 0, dset = strcmp(po, pn) != 0;
  why[0] = 0;
  if (dcap) k += (size_t)snprintf(why, sizeof why, "%s -> %s", a, !strncmp(a, "cap ", 4) && !strncmp(b, "cap ", 4) ? b + 4 : b);
  if (dset && k < sizeof why) k += (size_t)snprintf(why + k, sizeof why - k, "%ssettings '%s' -> '%s'", k ? ", " : "", po, pn);
  char note[1400];
  snprintf(note, sizeof note, "matched across a change of %s: %s; its figures are compared as they are",
           dcap && dset ? "cap and settings" : dcap ? "cap" : "settings", why);
  add_line(rep, CMP_K_WARN, j, "cap", a, b, note);
  judge_pair(rep, j, old, y->old_row, new, rn, o, rat, nrat);
}

/* rows of OLD left without a match: paired with NEW's unmatched rows of the same
 * workload, trace, allocator and device (a cap or the settings changed), in row order,
 * when both sides have as many; else missing, saying what NEW has. Sorted by group, so
 * the work stays n log n on files of many rows. */
static void pair_unmatched(struct cmp_report *rep, const struct results *old, const struct results *new, const struct cmp_opts *o,
                           const struct group_index *gnew, char *matched, struct ratios **rat, int *nrat) {
  int nrows = rep->nrows, no = 0, nn = 0;
  struct keyed *ko = malloc(((size_t)nrows + 1) * sizeof *ko), *kn = malloc(((size_t)new->nrows + 1) * sizeof *kn);
  if (!ko || !kn) abort();
  for (int j = 0; j < nrows; j++)
    if (rep->rows[j].new_row < 0 && rep->rows[j].old_row >= 0) { ko[no].key = group_key(old, rep->rows[j].old_row); ko[no++].row = j; }
  for (int r = 0; r < new->nrows; r++)
    if (!matched[r] && selected(new, r, o)) { kn[nn].key = group_key(new, r); kn[nn++].row = r; }
  qsort(ko, (size_t)no, sizeof *ko, by_key);   /* by key, then row: row order within a group */
  qsort(kn, (size_t)nn, sizeof *kn, by_key);
  int *partner = malloc(((size_t)nrows + 1) * sizeof *partner);
  if (!partner) abort();
  for (int j = 0; j < nrows; j++) partner[j] = -1;
  for (int i = 0, q = 0; i < no;) {
    int e = i;
    while (e < no && !strcmp(ko[e].key, ko[i].key)) e++;
    while (q < nn && strcmp(kn[q].key, ko[i].key) < 0) q++;
    int f = q;
    while (f < nn && !strcmp(kn[f].key, ko[i].key)) f++;
    if (f - q == e - i)
      for (int m = 0; m < e - i; m++) partner[ko[i + m].row] = kn[q + m].row;
    i = e;
    q = f;
  }
  for (int j = 0; j < nrows; j++) {   /* in the report's row order */
    struct cmp_row *y = &rep->rows[j];
    if (y->new_row >= 0 || y->old_row < 0) continue;
    if (partner[j] >= 0) { matched[partner[j]] = 1; pair_rows(rep, j, old, new, partner[j], o, rat, nrat); continue; }
    char note[700];
    other_side(old, y->old_row, new, gnew, "NEW", note, sizeof note);
    if (o->allow_missing) {
      size_t k = strlen(note);
      snprintf(note + k, sizeof note - k, "%sallowed (--allow-missing)", k ? "; " : "");
    }
    add_line(rep, CMP_K_MISSING, j, "(row)", "present", "missing", note[0] ? note : NULL);
  }
  for (int i = 0; i < no; i++) free(ko[i].key);
  for (int i = 0; i < nn; i++) free(kn[i].key);
  free(ko);
  free(kn);
  free(partner);
}

void cmp_run(const struct results *old, const struct results *new, const struct cmp_opts *o, struct cmp_report *rep) {
  memset(rep, 0, sizeof *rep);
  rep->allow_missing = o->allow_missing;
  int no, nn;
  struct keyed *ko = make_keys(old, o, &no), *kn = make_keys(new, o, &nn);
  struct keyed *sn = malloc(((size_t)nn + 1) * sizeof *sn);
  if (!sn) abort();
  memcpy(sn, kn, (size_t)nn * sizeof *kn);
  qsort(sn, (size_t)nn, sizeof *sn, by_key);
  char *matched = calloc((size_t)new->nrows + 1, 1);
  if (!matched) abort();
  struct ratios *rat = NULL;
  int nrat = 0;

  if (o->use_tolerance)   /* a column of OLD that NEW lacks: columns are never removed */
    for (int c = 0; c < old->ncols; c++) {
      const struct cmp_rule *ru = rule_for(o, old->cols[c]);
      if (results_col(new, old->cols[c]) < 0 && !(ru && ru->mode == CMP_IGNORE)) {
        add_line(rep, CMP_K_MISSING, -1, old->cols[c], "present", "missing", "a column of OLD is not in NEW (columns are never renamed or removed)");
        rep->columns_missing++;
      }
    }
  for (int i = 0; i < no; i++) {
    int ro = ko[i].row;
    int row = add_row(rep, old, ro, ko[i].key);
    /* binary search by key alone */
    int lo = 0, hi = nn - 1, rn = -1;
    while (lo <= hi) {
      int mid = (lo + hi) / 2, c = strcmp(sn[mid].key, ko[i].key);
      if (!c) { rn = sn[mid].row; break; }
      if (c < 0) lo = mid + 1; else hi = mid - 1;
    }
    rep->rows[row].old_row = ro;
    if (rn < 0) continue;   /* paired across a cap or settings change below, or missing */
    matched[rn] = 1;
    judge_pair(rep, row, old, ro, new, rn, o, &rat, &nrat);
  }
  struct group_index gold, gnew;
  group_index_build(&gold, old, o);
  group_index_build(&gnew, new, o);
  pair_unmatched(rep, old, new, o, &gnew, matched, &rat, &nrat);
  for (int i = 0; i < nn; i++)
    if (!matched[kn[i].row]) {
      int row = add_row(rep, new, kn[i].row, kn[i].key);
      rep->rows[row].new_row = kn[i].row;
      char note[600];
      other_side(new, kn[i].row, old, &gold, "OLD", note, sizeof note);
      add_line(rep, CMP_K_NEW, row, "(row)", "", results_get(new, kn[i].row, "status"), note[0] ? note : NULL);
    }
  /* timing: the median new/old per allocator and column, a warning beyond the factor */
  for (int i = 0; i < nrat; i++) {
    const struct cmp_rule *ru = rule_for(o, rat[i].col);
    qsort(rat[i].v, (size_t)rat[i].n, sizeof *rat[i].v, cmp_double);
    int n = rat[i].n;
    double med = n % 2 ? rat[i].v[n / 2] : (rat[i].v[n / 2 - 1] + rat[i].v[n / 2]) / 2;
    if (ru && ru->factor > 1 && (med > ru->factor || med < 1 / ru->factor)) {
      char note[300], ratio[32];
      snprintf(note, sizeof note, "%s: %s x%.2f against OLD (median over %d rows of >= %d events; band %gx); timing is a warning, never a failure",
               rat[i].alloc, rat[i].col, med, n, o->min_timed_events, ru->factor);
      snprintf(ratio, sizeof ratio, "x%.2f", med);
      add_line(rep, CMP_K_WARN, -1, rat[i].col, "1", ratio, note);
    }
    free(rat[i].v);
  }
  free(rat);
  for (int i = 0; i < no; i++) free(ko[i].key);
  for (int i = 0; i < nn; i++) free(kn[i].key);
  free(ko); free(kn); free(sn); free(matched);
  group_index_free(&gold);
  group_index_free(&gnew);
}

void cmp_report_free(struct cmp_report *r) {
  for (int i = 0; i < r->nrows; i++) {
    struct cmp_row *x = &r->rows[i];
    free(x->label); free(x->short_label); free(x->allocator); free(x->workload); free(x->trace); free(x->params); free(x->device); free(x->cap);
  }
  for (int i = 0; i < r->nlines; i++) { free(r->lines[i].old); free(r->lines[i].new); free(r->lines[i].note); }
  free(r->rows); free(r->lines);
  memset(r, 0, sizeof *r);
}
