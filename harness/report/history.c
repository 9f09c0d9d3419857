/* history.c - see history.h: the runs read (a bench folder's runs.csv + mincap.csv + env.txt,
 * or a results CSV), ordered, and the one rule for a workload's largest step. */
#include "history.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "params.h"
#include "results_read.h"
#include "run_folder.h"

struct history_rec { int w, s, r; struct history_point p; };

static int index_of(char ***list, int *n, const char *s) {
  for (int i = 0; i < *n; i++) if (!strcmp((*list)[i], s)) return i;
  *list = realloc(*list, (size_t)(*n + 1) * sizeof **list);
  if (!*list) abort();
  (*list)[*n] = strdup(s);
  if (!(*list)[*n]) abort();
  return (*n)++;
}

static void push(struct history *h, int w, int s, int r, const struct history_point *p) {
  for (int i = 0; i < h->nrec; i++) {   /* one point per (w, s, r): the best-ranked row, merged with mincap */
    struct history_rec *q = &h->rec[i];
    if (q->w != w || q->s != s || q->r != r) continue;
    if (p->has && (!q->p.has || p->rank > q->p.rank)) {
      int hm = q->p.has_mincap;
      uint64_t m = q->p.mincap;
      q->p = *p;
      if (!p->has_mincap && hm) { q->p.has_mincap = 1; q->p.mincap = m; }
    } else if (p->has_mincap) {
      q->p.has_mincap = 1;
      q->p.mincap = p->mincap;
    }
    return;
  }
  if (h->nrec == h->caprec) {
    h->caprec = h->caprec ? h->caprec * 2 : 64;
    h->rec = realloc(h->rec, (size_t)h->caprec * sizeof *h->rec);
    if (!h->rec) abort();
  }
  h->rec[h->nrec++] = (struct history_rec){w, s, r, *p};
}

static int u64_cell(const struct results *t, int row, const char *col, uint64_t *v, char *err, size_t errlen) {
  const char *c = results_get(t, row, col);
  if (parse_u64(c, v)) {
    snprintf(err, errlen, "%s: line %d: %s '%.40s': expected bytes (an integer)", t->path, t->row_line[row], col, c);
    return 2;
  }
  return 0;
}

/* every row of one results CSV: a mincap row (mincap_bytes set) gives the mincap, any
 * other the peak reserved */
static int add_rows(struct history *h, const struct results *t, int r, char *err, size_t errlen) {
  char wl[600], st[800];
  for (int row = 0; row < t->nrows; row++) {
    rf_workload_label(t, row, wl, sizeof wl);
    rf_strategy_label(t, row, st, sizeof st);
    if (!wl[0] || !st[0]) continue;
    struct history_point p;
    memset(&p, 0, sizeof p);
    if (results_get(t, row, "mincap_bytes")[0]) {
      if (u64_cell(t, row, "mincap_bytes", &p.mincap, err, errlen)) return 2;
      p.has_mincap = 1;
    } else {
      if (!strcmp(results_get(t, row, "completed"), "1")) {
        if (u64_cell(t, row, "peak_reserved", &p.peak, err, errlen)) return 2;
        p.completed = 1;
      } else snprintf(p.status, sizeof p.status, "%.63s", results_get(t, row, "status")[0] ? results_get(t, row, "status") : "did not complete");
      p.has = 1;
      p.rank = (!results_get(t, row, "cap_bytes")[0] && !results_get(t, row, "cap_x")[0]) * 2 +
               !strcmp(results_get(t, row, "device"), "all");
    }
    push(h, index_of(&h->workload, &h->nw, wl), index_of(&h->strategy, &h->ns, st), r, &p);
  }
  return 0;
}

static int load_csv(struct history *h, const char *path, int r, int optional, char *err, size_t errlen) {
  static const char *const required[] = {"workload", "allocator", "peak_reserved", "completed", NULL};
  struct stat sb;
  if (optional && stat(path, &sb)) return 0;
  struct results t;
  if (results_load_table(path, required, &t, err, errlen)) return 2;
  int rc = add_rows(h, &t, r, err, errlen);
  results_free(&t);
  return rc;
}

static void read_env(struct history_run *run, const char *dir) {
  char path[1200], line[1024];
  snprintf(path, sizeof path, "%s/env.txt", dir);
  FILE *f = fopen(path, "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    char *v = strchr(line, ':');
    if (!v) continue;
    *v++ = 0;
    while (*v == ' ') v++;
    if (!strcmp(line, "commit") && strcmp(v, "unknown")) snprintf(run->commit, sizeof run->commit, "%.63s", v);
    else if (!strcmp(line, "commit_date")) snprintf(run->commit_date, sizeof run->commit_date, "%.47s", v);
    else if (!strcmp(line, "date")) snprintf(run->date, sizeof run->date, "%.47s", v);
  }
  fclose(f);
}

int history_add(struct history *h, const char *path, char *err, size_t errlen) {
  struct stat sb;
  if (stat(path, &sb)) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return 2; }
  h->run = realloc(h->run, (size_t)(h->nruns + 1) * sizeof *h->run);
  if (!h->run) abort();
  int r = h->nruns++;
  struct history_run *run = &h->run[r];
  memset(run, 0, sizeof *run);
  snprintf(run->path, sizeof run->path, "%s", path);
  char dir[1024], name[256];
  snprintf(dir, sizeof dir, "%s", path);
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') dir[--n] = 0;
  int rc;
  if (S_ISDIR(sb.st_mode)) {
    char p[1100];
    snprintf(p, sizeof p, "%s/runs.csv", dir);
    if (stat(p, &sb)) {
      snprintf(err, errlen, "%s: no runs.csv: expected a bench folder (results/bench-<stamp>/) or a results CSV", path);
      h->nruns--;
      return 2;
    }
    rc = load_csv(h, p, r, 0, err, errlen);
    snprintf(p, sizeof p, "%s/mincap.csv", dir);
    if (!rc) rc = load_csv(h, p, r, 1, err, errlen);
    read_env(run, dir);
  } else {
    rc = load_csv(h, path, r, 0, err, errlen);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    read_env(run, dir);
  }
  if (rc) { h->nruns--; return rc; }
  const char *b = strrchr(path, '/');
  snprintf(name, sizeof name, "%.255s", b && b[1] ? b + 1 : path);
  if (!(b && b[1])) {   /* "results/bench-x/": the folder's name */
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    char *s = strrchr(tmp, '/');
    snprintf(name, sizeof name, "%.255s", s ? s + 1 : tmp);
  }
  snprintf(run->name, sizeof run->name, "%.127s", name);
  if (run->commit[0]) snprintf(run->label, sizeof run->label, "%.63s", run->commit);
  else snprintf(run->label, sizeof run->label, "%.127s", name);
  return 0;
}

void history_finish(struct history *h) {
  /* the order: commit date when every run has one, else date, else as given (stable) */
  int all_cd = h->nruns > 0, all_d = h->nruns > 0;
  for (int r = 0; r < h->nruns; r++) {
    if (!h->run[r].commit_date[0]) all_cd = 0;
    if (!h->run[r].date[0]) all_d = 0;
  }
  h->order_by = all_cd ? "commit_date" : all_d ? "date" : "given";
  size_t nr = h->nruns > 0 ? (size_t)h->nruns : 1;
  int *perm = malloc(nr * sizeof *perm), *pos = malloc(nr * sizeof *pos);
  if (!perm || !pos) abort();
  for (int r = 0; r < h->nruns; r++) perm[r] = r;
  for (int i = 1; i < h->nruns; i++)   /* insertion sort: stable */
    for (int j = i; j > 0; j--) {
      const struct history_run *a = &h->run[perm[j - 1]], *b = &h->run[perm[j]];
      int c = 0;
      if (all_cd) c = strcmp(a->commit_date, b->commit_date);
      if (!c && (all_cd || all_d)) c = strcmp(a->date, b->date);
      if (c <= 0) break;
      int t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t;
    }
  struct history_run *runs = malloc(nr * sizeof *runs);
  if (!runs) abort();
  for (int i = 0; i < h->nruns; i++) { runs[i] = h->run[perm[i]]; pos[perm[i]] = i; }
  free(h->run);
  h->run = runs;
  for (int i = 0; i < h->nruns; i++) {   /* the same commit benched twice: its runs told apart by name */
    int dup = 0;
    for (int j = 0; j < h->nruns; j++) dup |= j != i && !strcmp(h->run[i].commit, h->run[j].commit) && h->run[i].commit[0];
    if (dup) snprintf(h->run[i].label, sizeof h->run[i].label, "%.63s (%.127s)", h->run[i].commit, h->run[i].name);
  }
  h->pt = calloc((size_t)(h->nw * h->ns * h->nruns) + 1, sizeof *h->pt);
  if (!h->pt) abort();
  for (int i = 0; i < h->nrec; i++) {
    const struct history_rec *q = &h->rec[i];
    h->pt[((size_t)q->w * (size_t)h->ns + (size_t)q->s) * (size_t)h->nruns + (size_t)pos[q->r]] = q->p;
  }
  free(perm);
  free(pos);
  free(h->rec);
  h->rec = NULL;
  h->nrec = h->caprec = 0;
}

void history_free(struct history *h) {
  for (int i = 0; i < h->nw; i++) free(h->workload[i]);
  for (int i = 0; i < h->ns; i++) free(h->strategy[i]);
  free(h->workload);
  free(h->strategy);
  free(h->run);
  free(h->pt);
  free(h->rec);
  memset(h, 0, sizeof *h);
}

const struct history_point *history_at(const struct history *h, int w, int s, int r) {
  return &h->pt[((size_t)w * (size_t)h->ns + (size_t)s) * (size_t)h->nruns + (size_t)r];
}

void history_step(const struct history *h, int w, struct history_step *st) {
  memset(st, 0, sizeof *st);
  uint64_t best = 0;
  for (int s = 0; s < h->ns; s++) {
    int prev = -1, points = 0;
    for (int r = 0; r < h->nruns; r++) {
      const struct history_point *p = history_at(h, w, s, r);
      if (!p->has) continue;
      if (!p->completed) {
        const struct history_point *q = r > 0 ? history_at(h, w, s, r - 1) : NULL;
        if (q && q->has && q->completed && st->ndied < 16) { st->died_s[st->ndied] = s; st->died_at[st->ndied++] = r; }
        continue;
      }
      points++;
      if (prev >= 0) {
        uint64_t a = history_at(h, w, s, prev)->peak, b = p->peak, d = a > b ? a - b : b - a;
        if (d > best || (d == best && d && r < st->to)) {
          best = d;
          st->found = 1;
          st->s = s; st->from = prev; st->to = r; st->before = a; st->after = b;
        }
      }
      prev = r;
    }
    if (points > st->points) st->points = points;
  }
}

static void signed_bytes(uint64_t before, uint64_t after, char *buf, size_t n) {
  char a[32];
  fmt_bytes(after > before ? after - before : before - after, a, sizeof a);
  snprintf(buf, n, "%s%s", after > before ? "+" : "-", a);
}

void history_sentence(const struct history *h, int w, char *buf, size_t n) {
  struct history_step st;
  history_step(h, w, &st);
  size_t k = 0;
  char a[32], b[32], d[40];
  if (st.found) {
    signed_bytes(st.before, st.after, d, sizeof d);
    double pct = st.before ? 100.0 * ((double)st.after - (double)st.before) / (double)st.before : 0;
    k += (size_t)snprintf(buf + k, n - k, "%s: the largest step is %s %s (%+.1f%%, %s -> %s) at %s (run %d of %d; the run "
                          "before: run %d, %s).", h->workload[w], h->strategy[st.s], d, pct,
                          fmt_bytes(st.before, a, sizeof a), fmt_bytes(st.after, b, sizeof b), h->run[st.to].label,
                          st.to + 1, h->nruns, st.from + 1, h->run[st.from].label);
  } else if (st.points >= 2)
    k += (size_t)snprintf(buf + k, n - k, "%s: peak reserved did not change over the %d runs, for any strategy.",
                          h->workload[w], h->nruns);
  else
    k += (size_t)snprintf(buf + k, n - k, "%s: no strategy completed in two runs: no step to show.", h->workload[w]);
  for (int i = 0; i < st.ndied && k < n; i++) {
    const struct history_point *p = history_at(h, w, st.died_s[i], st.died_at[i]);
    k += (size_t)snprintf(buf + k, n - k, " %s died at %s (run %d: %s) after completing in the run before.",
                          h->strategy[st.died_s[i]], h->run[st.died_at[i]].label, st.died_at[i] + 1, p->status);
  }
}

void history_order_sentence(const struct history *h, char *buf, size_t n) {
  if (!strcmp(h->order_by, "commit_date"))
    snprintf(buf, n, "%d runs, ordered by the commit date in their env.txt", h->nruns);
  else if (!strcmp(h->order_by, "date"))
    snprintf(buf, n, "%d runs, ordered by the date in their env.txt (not every run has a commit_date)", h->nruns);
  else
    snprintf(buf, n, "%d runs, in the order given (not every run has an env.txt with a date)", h->nruns);
}
