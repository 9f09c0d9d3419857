/* run_folder.c - a bench run folder read into memory (see run_folder.h). */
#include "run_folder.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_s(const char *s) {
  char *d = strdup(s);
  if (!d) abort();
  return d;
}

void rf_workload_label(const struct results *t, int row, char *out, size_t len) {
  const char *trace = results_get(t, row, "trace");
  if (!trace[0]) { snprintf(out, len, "%s", results_get(t, row, "workload")); return; }
  const char *b = strrchr(trace, '/');
  snprintf(out, len, "%s", b ? b + 1 : trace);
  size_t n = strlen(out);
  if (n > 3 && !strcmp(out + n - 3, ".gz")) out[n - 3] = 0;
}

void rf_strategy_label(const struct results *t, int row, char *out, size_t len) {
  const char *a = results_get(t, row, "allocator"), *p = results_get(t, row, "params");
  snprintf(out, len, "%s%s%s", a, p[0] ? ":" : "", p);
}

static int find(char **list, int n, const char *s) {
  for (int i = 0; i < n; i++) if (!strcmp(list[i], s)) return i;
  return -1;
}

static int add(char ***list, int *n, const char *s) {
  int i = find(*list, *n, s);
  if (i >= 0) return i;
  *list = realloc(*list, (size_t)(*n + 1) * sizeof **list);
  if (!*list) abort();
  (*list)[*n] = dup_s(s);
  return (*n)++;
}

int rf_workload_index(const struct run_folder *f, const char *label) { return find(f->workload, f->nw, label); }

int rf_strategy_index(struct run_folder *f, const char *label, int add_new) {
  int i = find(f->strategy, f->ns, label);
  return i >= 0 || !add_new ? i : add(&f->strategy, &f->ns, label);
}

const struct rf_cell *rf_cell_at(const struct run_folder *f, int w, int s) {
  if (w < 0 || s < 0 || w >= f->nw || s >= f->ns_cells) return NULL;
  return &f->cells[(size_t)w * (size_t)f->ns_cells + (size_t)s];
}

const char *rf_env(const struct run_folder *f, const char *key) {
  for (int i = 0; i < f->nenv; i++) if (!strcmp(f->env_key[i], key)) return f->env_val[i];
  return NULL;
}

int rf_is_reference(const char *s) {
  size_t n = strcspn(s, ":");
  return (n == 3 && !strncmp(s, "raw", 3)) || (n == 6 && !strncmp(s, "oracle", 6));
}

/* an optional file: absent is fine (t left empty), malformed is not */
static int load_optional(const char *dir, const char *name, struct results *t, int *have, char *err, size_t errlen) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return results_load_if_there(path, t, have, err, errlen);
}

static void load_env(struct run_folder *f) {
  char path[1200], line[2048];
  snprintf(path, sizeof path, "%s/env.txt", f->dir);
  FILE *e = fopen(path, "r");
  if (!e) return;
  while (fgets(line, sizeof line, e)) {
    line[strcspn(line, "\r\n")] = 0;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    *colon = 0;
    char *val = colon + 1;
    while (*val == ' ' || *val == '\t') val++;
    f->env_key = realloc(f->env_key, (size_t)(f->nenv + 1) * sizeof *f->env_key);
    f->env_val = realloc(f->env_val, (size_t)(f->nenv + 1) * sizeof *f->env_val);
    if (!f->env_key || !f->env_val) abort();
    f->env_key[f->nenv] = dup_s(line);
    f->env_val[f->nenv++] = dup_s(val);
  }
  fclose(e);
}

/* uncapped first, then the aggregate row */
static int row_rank(const struct results *t, int r) {
  int k = 0;
  if (!results_get(t, r, "cap_bytes")[0] && !results_get(t, r, "cap_x")[0]) k += 2;
  if (!strcmp(results_get(t, r, "device"), "all")) k += 1;
  return k;
}

static void labels_of(struct run_folder *f, const struct results *t) {
  char w[600], s[800];
  for (int r = 0; r < t->nrows; r++) {
    rf_workload_label(t, r, w, sizeof w);
    rf_strategy_label(t, r, s, sizeof s);
    add(&f->workload, &f->nw, w);
    add(&f->strategy, &f->ns, s);
  }
}

static struct rf_cell *cell_of(struct run_folder *f, const struct results *t, int r) {
  char w[600], s[800];
  rf_workload_label(t, r, w, sizeof w);
  rf_strategy_label(t, r, s, sizeof s);
  return (struct rf_cell *)rf_cell_at(f, rf_workload_index(f, w), find(f->strategy, f->ns, s));
}

/* a folder without runs.csv: every other results CSV in it (not a timeline, the cap
 * sweep, mincap or advise's) read as the runs, their columns joined by name */
static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void append(struct results *dst, const struct results *src) {
  int *map = malloc(((size_t)src->ncols + 1) * sizeof *map);
  if (!map) abort();
  for (int c = 0; c < src->ncols; c++) {
    map[c] = results_col(dst, src->cols[c]);
    if (map[c] >= 0) continue;
    dst->cols = realloc(dst->cols, (size_t)(dst->ncols + 1) * sizeof *dst->cols);
    if (!dst->cols) abort();
    dst->cols[dst->ncols] = dup_s(src->cols[c]);
    for (int r = 0; r < dst->nrows; r++) {
      dst->rows[r] = realloc(dst->rows[r], (size_t)(dst->ncols + 1) * sizeof **dst->rows);
      if (!dst->rows[r]) abort();
      dst->rows[r][dst->ncols] = dup_s("");
    }
    map[c] = dst->ncols++;
  }
  dst->rows = realloc(dst->rows, (size_t)(dst->nrows + src->nrows + 1) * sizeof *dst->rows);
  if (!dst->rows) abort();
  for (int r = 0; r < src->nrows; r++) {
    char **row = malloc((size_t)dst->ncols * sizeof *row);
    if (!row) abort();
    for (int c = 0; c < dst->ncols; c++) row[c] = NULL;
    for (int c = 0; c < src->ncols; c++) row[map[c]] = dup_s(src->rows[r][c]);
    for (int c = 0; c < dst->ncols; c++) if (!row[c]) row[c] = dup_s("");
    dst->rows[dst->nrows++] = row;
  }
  free(map);
}

static int load_other_csvs(struct run_folder *f, char *err, size_t errlen) {
  DIR *d = opendir(f->dir);
  if (!d) { snprintf(err, errlen, "%s: cannot read: %s", f->dir, strerror(errno)); return 2; }
  char **names = NULL;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".csv") || !strncmp(e->d_name, "timeline-", 9) ||
        !strncmp(e->d_name, "advise-", 7) || !strcmp(e->d_name, "capsweep.csv") || !strcmp(e->d_name, "mincap.csv")) continue;
    names = realloc(names, (size_t)(n + 1) * sizeof *names);
    if (!names) abort();
    names[n++] = dup_s(e->d_name);
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, by_name);
  int rc = 0;
  memset(&f->runs, 0, sizeof f->runs);
  for (int i = 0; i < n; i++) {
    char path[1400];
    struct results t;
    snprintf(path, sizeof path, "%s/%s", f->dir, names[i]);
    if (!rc && results_load(path, &t, err, errlen)) rc = 2;
    else if (!rc) { append(&f->runs, &t); results_free(&t); }
    free(names[i]);
  }
  free(names);
  if (!rc && !n) {
    snprintf(err, errlen, "%s: no results CSV (runs.csv, or any file that `fragbench run --out` wrote)", f->dir);
    rc = 2;
  }
  if (rc) results_free(&f->runs);
  return rc;
}

static int by_cap(const void *a, const void *b) {
  double x = ((const struct sweep_point *)a)->x, y = ((const struct sweep_point *)b)->x;
  return (x > y) - (x < y);
}

int run_folder_load(struct run_folder *f, const char *dir, char *err, size_t errlen) {
  memset(f, 0, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "%s", dir);
  char path[1200];
  snprintf(path, sizeof path, "%s/runs.csv", dir);
  int have_runs;
  if (results_load_if_there(path, &f->runs, &have_runs, err, errlen)) return 2;
  if (!have_runs && load_other_csvs(f, err, errlen)) return 2;
  if (load_optional(dir, "mincap.csv", &f->mincap, &f->have_mincap, err, errlen) ||
      load_optional(dir, "capsweep.csv", &f->capsweep, &f->have_capsweep, err, errlen)) { run_folder_free(f); return 2; }
  load_env(f);
  labels_of(f, &f->runs);
  labels_of(f, &f->mincap);
  labels_of(f, &f->capsweep);
  f->ns_cells = f->ns;
  f->cells = calloc((size_t)(f->nw ? f->nw : 1) * (size_t)(f->ns ? f->ns : 1), sizeof *f->cells);
  if (!f->cells) abort();
  for (int i = 0; i < f->nw * f->ns; i++) f->cells[i].run = f->cells[i].mincap = f->cells[i].mincap_other = -1;

  for (int r = 0; r < f->runs.nrows; r++) {
    struct rf_cell *c = cell_of(f, &f->runs, r);
    int k = row_rank(&f->runs, r);
    if (c->run >= 0 && c->run_rank >= k) continue;
    c->run = r;
    c->run_rank = k;
  }
  for (int r = 0; r < f->mincap.nrows; r++) {
    struct rf_cell *c = cell_of(f, &f->mincap, r);
    if (results_get(&f->mincap, r, "mincap_x")[0]) {
      c->mincap = r;
      if (strstr(results_get(&f->mincap, r, "status"), "non-monotonic")) c->mincap_nonmono = 1;
    } else if (c->mincap < 0) {
      c->mincap_other = r;
    }
  }
  for (int r = 0; r < f->capsweep.nrows; r++) {
    int ok;
    double x = results_num(&f->capsweep, r, "cap_x", &ok);
    if (!ok) continue;
    struct rf_cell *c = cell_of(f, &f->capsweep, r);
    c->sweep = realloc(c->sweep, (size_t)(c->nsweep + 1) * sizeof *c->sweep);
    if (!c->sweep) abort();
    c->sweep[c->nsweep++] = (struct sweep_point){x, results_get(&f->capsweep, r, "peak_reserved"),
                                                 !strcmp(results_get(&f->capsweep, r, "completed"), "1")};
  }
  for (int i = 0; i < f->nw * f->ns_cells; i++)
    if (f->cells[i].nsweep > 1) qsort(f->cells[i].sweep, (size_t)f->cells[i].nsweep, sizeof *f->cells[i].sweep, by_cap);

  const char *dn = rf_env(f, "device_name");
  for (int r = 0; !(dn && dn[0]) && r < f->runs.nrows; r++) dn = results_get(&f->runs, r, "device_name");
  snprintf(f->device_name, sizeof f->device_name, "%s", dn ? dn : "");
  rf_advise_load(f);
  return 0;
}

void run_folder_free(struct run_folder *f) {
  rf_advise_free(f);
  results_free(&f->runs);
  results_free(&f->mincap);
  results_free(&f->capsweep);
  for (int i = 0; i < f->nenv; i++) { free(f->env_key[i]); free(f->env_val[i]); }
  free(f->env_key);
  free(f->env_val);
  for (int i = 0; i < f->nw; i++) free(f->workload[i]);
  for (int i = 0; i < f->ns; i++) free(f->strategy[i]);
  for (int i = 0; f->cells && i < f->nw * f->ns_cells; i++) free(f->cells[i].sweep);
  free(f->workload);
  free(f->strategy);
  free(f->cells);
  free(f->wl_events);
  memset(f, 0, sizeof *f);
}
