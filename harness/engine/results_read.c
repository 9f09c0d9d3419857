/* results_read.c - a results CSV into a table of strings (see results_read.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "results_read.h"

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) abort();
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

/* the whole file, refusing a line longer than RESULTS_LINE_MAX as it is read (so
 * /dev/zero or a file without newlines ends at the bound instead of filling memory):
 * NULL with errno set, or with *too_long = the 1-based line that is too long */
static char *slurp(const char *path, size_t *len, int *too_long) {
  *too_long = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0, line_start = 0;
  int line = 1;
  char *buf = malloc(cap);
  if (!buf) abort();
  for (;;) {
    if (n + 4096 > cap) { cap *= 2; buf = realloc(buf, cap); if (!buf) abort(); }
    size_t k = fread(buf + n, 1, cap - n - 1, f);
    for (size_t i = n; i < n + k && !*too_long; i++)   /* every line, not only the last of a chunk */
      if (buf[i] == '\n') {
        if (i - line_start > RESULTS_LINE_MAX) *too_long = line;
        line++;
        line_start = i + 1;
      }
    n += k;
    if (*too_long) break;
    if (n - line_start > RESULTS_LINE_MAX) { *too_long = line; break; }
    if (k == 0) break;
  }
  fclose(f);
  if (*too_long) { free(buf); return NULL; }
  buf[n] = 0;
  *len = n;
  return buf;
}

/* Parse one record starting at *p; fields appended to a growing array. Returns the
 * number of fields, -1 on an unclosed quote. *p moves past the record's newline. */
static int parse_record(const char **p, const char *end, char ***fields, int *cap) {
  const char *s = *p;
  int n = 0;
  char *tmp = malloc((size_t)(end - s) + 1);
  if (!tmp) abort();
  for (;;) {
    size_t k = 0;
    if (s < end && *s == '"') {
      s++;
      for (;;) {
        if (s >= end) {   /* unclosed quote: the record's fields so far are freed here */
          for (int i = 0; i < n; i++) free((*fields)[i]);
          free(tmp);
          return -1;
        }
        if (*s == '"') {
          if (s + 1 < end && s[1] == '"') { tmp[k++] = '"'; s += 2; continue; }
          s++;
          break;
        }
        tmp[k++] = *s++;
      }
      while (s < end && *s != ',' && *s != '\n' && *s != '\r') tmp[k++] = *s++;
    } else {
      while (s < end && *s != ',' && *s != '\n' && *s != '\r') tmp[k++] = *s++;
    }
    if (n == *cap) { *cap = *cap ? *cap * 2 : 64; *fields = realloc(*fields, (size_t)*cap * sizeof **fields); if (!*fields) abort(); }
    (*fields)[n++] = dup_n(tmp, k);
    if (s < end && *s == ',') { s++; continue; }
    if (s < end && *s == '\r') s++;
    if (s < end && *s == '\n') s++;
    break;
  }
  free(tmp);
  *p = s;
  return n;
}

/* the header check: every name in required[] present, or (required == NULL) a fragbench
 * results header */
static int header_ok(const struct results *t, const char *const *required, char *missing, size_t len) {
  if (!required) {
    if (results_col(t, "run_id") >= 0 || results_col(t, "workload") >= 0) return 1;
    snprintf(missing, len, "a fragbench results header (run_id,version,workload,...)");
    return 0;
  }
  for (int i = 0; required[i]; i++)
    if (results_col(t, required[i]) < 0) { snprintf(missing, len, "a header with a column '%s'", required[i]); return 0; }
  return 1;
}

/* absent: NULL, or where a file that is not there is no error (*absent = 1, t empty) */
static int load(const char *path, const char *const *required, int *absent, struct results *t, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  if (absent) *absent = 0;
  size_t len = 0;
  int too_long = 0;
  char *buf = slurp(path, &len, &too_long);
  if (!buf && too_long) {
    snprintf(err, errlen, "%s:%d: a line longer than %d bytes (the bound on a results line)", path, too_long, RESULTS_LINE_MAX);
    return 2;
  }
  if (!buf && absent && errno == ENOENT) { *absent = 1; return 0; }
  if (!buf) { snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno)); return 2; }
  const char *nul = memchr(buf, 0, len);
  if (nul) {   /* a NUL would silently cut the field it is in: refused, with its line */
    int at = 1;
    for (const char *q = buf; q < nul; q++) at += *q == '\n';
    snprintf(err, errlen, "%s:%d: a NUL byte (byte %zu): expected a results CSV of text", path, at, (size_t)(nul - buf));
    free(buf);
    return 2;
  }
  t->path = dup_n(path, strlen(path));
  const char *p = buf, *end = buf + len;
  int line = 1;
  if (len >= 1 && p[0] == '#') {   /* old format: "# fragbench results v1" before the header */
    while (p < end && *p != '\n') p++;
    if (p < end) p++;
    line++;
  }
  while (p < end && (*p == '\n' || *p == '\r')) { p++; line++; }
  if (p >= end) { snprintf(err, errlen, "%s: empty: expected a header line (run_id,version,...)", path); free(buf); results_free(t); return 2; }
  char **fields = NULL;
  int cap = 0;
  int n = parse_record(&p, end, &fields, &cap);
  if (n <= 0) { snprintf(err, errlen, "%s:%d: unclosed quote in the header", path, line); free(buf); free(fields); results_free(t); return 2; }
  if (n > RESULTS_COLS_MAX) {   /* before any row is read: a crafted header does not fill memory row by row */
    snprintf(err, errlen, "%s:%d: a header of %d columns: expected at most %d (a fragbench results file has %d)", path, line, n,
             RESULTS_COLS_MAX, 48);
    for (int i = 0; i < n; i++) free(fields[i]);
    free(buf); free(fields); results_free(t); return 2;
  }
  t->ncols = n;
  t->cols = malloc((size_t)n * sizeof *t->cols);
  if (!t->cols) abort();
  memcpy(t->cols, fields, (size_t)n * sizeof *fields);
  char missing[160];
  if (!header_ok(t, required, missing, sizeof missing)) {
    snprintf(err, errlen, "%s:%d: expected %s, got \"%.60s\"", path, line, missing, t->cols[0]);
    free(buf); free(fields); results_free(t); return 2;
  }
  int rcap = 0;
  while (p < end) {
    line++;
    if (*p == '\n' || *p == '\r') { p += (*p == '\r' && p + 1 < end && p[1] == '\n') ? 2 : 1; continue; }
    const char *start = p;
    int row_line = line;
    n = parse_record(&p, end, &fields, &cap);
    for (const char *q = start; q < p; q++) if (*q == '\n' && q + 1 < p) line++;
    if (n < 0) { snprintf(err, errlen, "%s:%d: unclosed quote", path, line); free(buf); free(fields); results_free(t); return 2; }
    if (n > t->ncols) {
      snprintf(err, errlen, "%s:%d: %d fields, the header has %d", path, line, n, t->ncols);
      for (int i = 0; i < n; i++) free(fields[i]);
      free(buf); free(fields); results_free(t); return 2;
    }
    if (t->nrows == rcap) {
      rcap = rcap ? rcap * 2 : 64;
      t->rows = realloc(t->rows, (size_t)rcap * sizeof *t->rows);
      t->row_line = realloc(t->row_line, (size_t)rcap * sizeof *t->row_line);
      t->row_fields = realloc(t->row_fields, (size_t)rcap * sizeof *t->row_fields);
      if (!t->rows || !t->row_line || !t->row_fields) abort();
    }
    t->row_line[t->nrows] = row_line;
    t->row_fields[t->nrows] = n;
    char **row = malloc((size_t)t->ncols * sizeof *row);
    if (!row) abort();
    for (int i = 0; i < t->ncols; i++) row[i] = i < n ? fields[i] : dup_n("", 0);
    t->rows[t->nrows++] = row;
  }
  free(fields);
  free(buf);
  return 0;
}

/* the results columns that hold numbers (csv.c writes them): a cell is empty (not
 * measured) or a plain decimal ("123", "1.5", "2e-05"); "nan"/"inf" are left for compare
 * to name; a sign only where a figure can fall (leak_bytes_per_iter). "123abc", "0x10"
 * or "-5" is no figure of any run: refused, naming the file, line and column. */
static const char *const numeric[] = {
  "cap_bytes", "cap_x", "seed", "completed", "events", "allocs", "frees", "skipped_events", "oom_count", "first_oom_event",
  "peak_requested", "peak_allocated", "peak_reserved", "overhead", "frag", "ext_frag", "internal_frag", "trace_peak_reserved",
  "device_allocs", "device_frees", "maps", "unmaps", "cache_flushes", "modeled_driver_ns", "wall_ns", "ns_per_op", "p50_ns",
  "p99_ns", "max_ns", "leak_bytes_per_iter", "mincap_bytes", "mincap_x", "imbalance", "cap_lo", "cap_hi", "model_err", NULL};

static int plain_decimal(const char *s, int sign_ok) {
  if (!strcmp(s, "nan") || !strcmp(s, "inf") || !strcmp(s, "-inf") || !strcmp(s, "-nan")) return 1;   /* compare names them */
  if (*s == '-' && sign_ok) s++;
  int digits = 0;
  while (*s >= '0' && *s <= '9') { s++; digits++; }
  if (*s == '.') { s++; while (*s >= '0' && *s <= '9') { s++; digits++; } }
  if (!digits) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  }
  return *s == 0;
}

/* load()'s rows, their numeric columns checked */
static int load_checked(const char *path, int *absent, struct results *t, char *err, size_t errlen) {
  int rc = load(path, NULL, absent, t, err, errlen);
  if (rc || (absent && *absent)) return rc;
  for (int i = 0; numeric[i]; i++) {
    int c = results_col(t, numeric[i]), sign_ok = !strcmp(numeric[i], "leak_bytes_per_iter");
    for (int r = 0; c >= 0 && r < t->nrows; r++) {
      const char *v = t->rows[r][c];
      if (!v[0] || plain_decimal(v, sign_ok)) continue;
      snprintf(err, errlen, "%s:%d: %s is '%.40s': expected a %snumber written in decimal (or empty for not measured)", path,
               t->row_line[r], numeric[i], v, sign_ok || v[0] != '-' ? "" : "non-negative ");
      results_free(t);
      return 2;
    }
  }
  return 0;
}

int results_load(const char *path, struct results *t, char *err, size_t errlen) {
  return load_checked(path, NULL, t, err, errlen);
}

int results_load_if_there(const char *path, struct results *t, int *there, char *err, size_t errlen) {
  int absent;
  int rc = load_checked(path, &absent, t, err, errlen);
  *there = !absent;
  return rc;
}

int results_load_table(const char *path, const char *const *required, struct results *t, char *err, size_t errlen) {
  return load(path, required, NULL, t, err, errlen);
}

void results_free(struct results *t) {
  for (int r = 0; r < t->nrows; r++) {
    for (int c = 0; c < t->ncols; c++) free(t->rows[r][c]);
    free(t->rows[r]);
  }
  free(t->rows);
  free(t->row_line);
  free(t->row_fields);
  if (t->cols) for (int c = 0; c < t->ncols; c++) free(t->cols[c]);
  free(t->cols);
  free(t->path);
  memset(t, 0, sizeof *t);
}

int results_col(const struct results *t, const char *name) {
  for (int c = 0; c < t->ncols; c++) if (!strcmp(t->cols[c], name)) return c;
  return -1;
}

const char *results_get(const struct results *t, int row, const char *name) {
  int c = results_col(t, name);
  if (c < 0 || row < 0 || row >= t->nrows) return "";
  return t->rows[row][c];
}

double results_num(const struct results *t, int row, const char *name, int *ok) {
  const char *s = results_get(t, row, name);
  char *e;
  double v = strtod(s, &e);
  int good = *s && *e == 0;
  if (ok) *ok = good;
  return good ? v : 0;
}

uint64_t results_u64(const struct results *t, int row, const char *name, int *ok) {
  const char *s = results_get(t, row, name);
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  int good = *s && *e == 0 && !errno && *s != '-';
  if (ok) *ok = good;
  return good ? (uint64_t)v : 0;
}
