/* report_verdict.c - the report's first line: what a PyTorch user should set, from the
 * rows. Each of PyTorch's settings replayed exactly (its rows carry no model_err:
 * caching with or without knobs, expandable_segments) is weighed against PyTorch's
 * default (the strategy "caching" without parameters) workload by workload: it reserves
 * less, the same or more; it completes where the default ran out of memory (a win), or
 * runs out where the default completed (a loss); both running out is neither. A run that
 * died is never weighed by its figures. The setting with the most wins (then the fewest
 * losses, then the most bytes saved) is recommended when it wins more than it loses and
 * either wins on most workloads weighed or never loses; else the default is kept. A
 * modelled setting (cudaMallocAsync: model_err > 0) is never ranked against an exact one:
 * the line says where its range lies against the chosen setting's figure. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "report.h"
#include "report_cells.h"
#include "report_text.h"

struct tally { int less, same, more, rescued, dies, both_died, weighed; double saved; };

static int exact_setting(const struct run_folder *f, int s) {
  if (rc_group_of(f->strategy[s]) != RC_PYTORCH) return 0;
  for (int w = 0; w < f->nw; w++)
    if (rc_has_run(f, w, s) && rc_model_err(f, w, s) > 0) return 0;
  return 1;
}

static int has_any_run(const struct run_folder *f, int s) {
  for (int w = 0; w < f->nw; w++) if (rc_has_run(f, w, s)) return 1;
  return 0;
}

/* the PYTORCH_CUDA_ALLOC_CONF that selects s (its first row's) */
static const char *conf_of(const struct run_folder *f, int s) {
  for (int w = 0; w < f->nw; w++)
    if (rc_has_run(f, w, s)) { const char *c = rc_alloc_conf(f, w, s); return c ? c : ""; }
  return "";
}

static double reserved(const struct run_folder *f, int w, int s) { return rt_num(rc_value(f, w, s, "peak_reserved")); }
static int measured(const struct run_folder *f, int w, int s) { return rc_ok(f, w, s) && rc_value(f, w, s, "peak_reserved")[0]; }

static struct tally weigh(const struct run_folder *f, int s, int d) {
  struct tally t = {0};
  for (int w = 0; w < f->nw; w++) {
    if (!rc_has_run(f, w, s) || !rc_has_run(f, w, d)) continue;
    int so = measured(f, w, s), dk = measured(f, w, d), sx = rc_oom(f, w, s), dx = rc_oom(f, w, d);
    if (so && dk) {
      double a = reserved(f, w, s), b = reserved(f, w, d);
      if (a < b) t.less++; else if (a > b) t.more++; else t.same++;
      t.saved += b - a;
    } else if (so && dx) t.rescued++;
    else if (sx && dk) t.dies++;
    else if (sx && dx) t.both_died++;
    else continue;   /* skipped, failed, or a figure missing: not weighed */
    t.weighed++;
  }
  return t;
}

static int wins(const struct tally *t) { return t->less + t->rescued; }
static int losses(const struct tally *t) { return t->more + t->dies; }
/* a before b */
static int better(const struct tally *a, const struct tally *b) {
  if (wins(a) != wins(b)) return wins(a) > wins(b);
  if (losses(a) != losses(b)) return losses(a) < losses(b);
  return a->saved > b->saved;
}
static int same_tally(const struct tally *a, const struct tally *b) {
  return a->less == b->less && a->same == b->same && a->more == b->more && a->rescued == b->rescued && a->dies == b->dies &&
         a->both_died == b->both_died && a->saved == b->saved;
}

/* appends to buf at *k */
#define ADD(...) do { if (*k < len) *k += (size_t)snprintf(buf + *k, len - *k, __VA_ARGS__); } while (0)

/* "(the default ran out of memory on 2 of them; the same on 1, more on 2, ...)" */
static void details(const struct tally *t, char *buf, size_t len, size_t *k) {
  const char *sep = " (";
  if (t->rescued) { ADD("%son %d of them the default ran out of memory and it completed", sep, t->rescued); sep = "; "; }
  if (t->same) { ADD("%sthe same on %d", sep, t->same); sep = ", "; }
  if (t->more) { ADD("%smore on %d", sep, t->more); sep = ", "; }
  if (t->dies) { ADD("%sruns out of memory on %d where the default completes", sep, t->dies); sep = ", "; }
  if (t->both_died) { ADD("%sboth run out of memory on %d", sep, t->both_died); sep = ", "; }
  if (strcmp(sep, " (")) ADD(")");
}

/* where each modelled PyTorch setting's range lies against ref's figure (ref: a setting) */
static void modelled(const struct run_folder *f, int ref, char *buf, size_t len, size_t *k) {
  char a[256];
  for (int m = 0; m < f->ns_cells; m++) {
    if (rc_group_of(f->strategy[m]) != RC_PYTORCH || exact_setting(f, m) || !has_any_run(f, m)) continue;
    int below = 0, holds = 0, above = 0, n = 0, varies = 0;
    double e = 0;
    for (int w = 0; w < f->nw; w++) {
      double ew = rc_model_err(f, w, m);
      if (ew > 0 && e > 0 && ew != e) varies = 1;
      if (ew > e) e = ew;
      if (ref < 0 || !measured(f, w, m) || !measured(f, w, ref)) continue;
      double lo, hi, r = reserved(f, w, ref);
      rc_range(f, w, m, &lo, &hi);
      n++;
      if (hi < r) below++; else if (lo > r) above++; else holds++;
    }
    ADD(" `%s` is a model (%s±%.0f%%), not ranked against the settings measured exactly", rt_md(conf_of(f, m), a, sizeof a), varies ? "up to " : "",
        e * 100);
    if (n) {
      char r[256];
      if (!strcmp(f->strategy[ref], "caching")) snprintf(r, sizeof r, "the default's");
      else snprintf(r, sizeof r, "`%s`'s", rt_md(conf_of(f, ref), a, sizeof a));
      ADD(": its range holds %s figure on %d of %d workloads", r, holds, n);
      if (below) ADD(", lies below it on %d", below);
      if (above) ADD(", above it on %d", above);
    }
    ADD(".");
  }
}

void report_verdict(const struct run_folder *f, char *buf, size_t len) {
  size_t kk = 0, *k = &kk;
  char a[256], b[256];
  buf[0] = 0;
  int d = -1, any_pt = 0;
  for (int s = 0; s < f->ns_cells; s++) {
    if (rc_group_of(f->strategy[s]) == RC_PYTORCH && has_any_run(f, s)) any_pt = 1;
    if (!strcmp(f->strategy[s], "caching") && has_any_run(f, s)) d = s;
  }
  if (!any_pt) { ADD("No PyTorch setting was replayed here: nothing to set (the tables compare other allocators)."); return; }
  if (d < 0) {
    ADD("No row of PyTorch's default (caching) here: no setting is weighed against it (the tables rank what was replayed).");
    modelled(f, -1, buf, len, k);
    return;
  }
  int best = -1, tie = -1;
  struct tally bt = {0};
  for (int s = 0; s < f->ns_cells; s++) {
    if (s == d || !exact_setting(f, s) || !has_any_run(f, s)) continue;
    struct tally t = weigh(f, s, d);
    if (!t.weighed) continue;
    if (best < 0 || better(&t, &bt)) { best = s; bt = t; tie = -1; }
    else if (same_tally(&t, &bt)) tie = s;
  }
  int set = best >= 0 && wins(&bt) > losses(&bt) && (2 * wins(&bt) > bt.weighed || losses(&bt) == 0);
  if (set) {
    ADD("Set `PYTORCH_CUDA_ALLOC_CONF=%s`", rt_md(conf_of(f, best), a, sizeof a));
    if (tie >= 0) ADD(" (or `PYTORCH_CUDA_ALLOC_CONF=%s`: the same figures)", rt_md(conf_of(f, tie), b, sizeof b));
    ADD(": it reserves less than PyTorch's default on %d of %d workload%s", wins(&bt), bt.weighed, bt.weighed == 1 ? "" : "s");
    details(&bt, buf, len, k);
    ADD(", replayed exactly.");
    modelled(f, best, buf, len, k);
    return;
  }
  ADD("Keep PyTorch's default (`PYTORCH_CUDA_ALLOC_CONF` unset): ");
  if (best < 0) ADD("no other setting measured exactly was weighed against it here.");
  else {
    ADD("no setting measured exactly reserves less on most workloads; the nearest, `%s`, reserves less on %d of %d",
        rt_md(conf_of(f, best), a, sizeof a), wins(&bt), bt.weighed);
    details(&bt, buf, len, k);
    ADD(".");
  }
  modelled(f, d, buf, len, k);
}
