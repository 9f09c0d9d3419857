/* variations.c - reruns of a job made from its one recorded trace (see variations.h).
 *
 * Iterations. A trace with ITER events says where they end. A PyTorch snapshot does not:
 * there an iteration starts where every short-lived block is freed - the activations,
 * gradients and optimizer temporaries of the step before - and only the long-lived ones
 * are live (weights, optimizer state, leaks: never freed, or alive for over a quarter of
 * the trace; a leak of the last quarter hides the boundaries after it, which then stay in
 * the end kept in place). Those points are the minima of the count of live short-lived
 * blocks; a run of them is one boundary; slivers (under a tenth of the median piece by
 * events: a logging temporary between steps) run on into the iteration after; and pieces
 * that alternate in length (a dip inside the step, e.g. zero_grad between forward and
 * backward) are merged by the period whose iterations are most alike in length, at the
 * phase whose boundaries hold the least live memory.
 *
 * A variation keeps the warm-up (a prologue before the first boundary, and iterations of
 * the first half that build long-lived state) and the end (the iterations that free it,
 * and the last one: an OOM snapshot's partial step) in place and replays the middle
 * iterations in another order (a permutation), resampled with replacement, or resampled
 * with other shapes: every third variation scales each iteration's shape-dependent blocks
 * (short-lived, of a size that does not recur in 90% of the iterations, as a
 * parameter-sized gradient does) - the warm-up's step's too - by one factor drawn so that
 * their bytes stay within the range the recorded iterations span: sizes the recording
 * never saw, as a rerun's batches bring. Every block gets a fresh id. A block that
 * outlives its iteration (gradients freed at the next zero_grad, a kept loss) is carried:
 * the next iteration's free of such a block frees the oldest carried block of the same
 * recorded size (else the nearest size; none: it stays live, the cautious side). A
 * long-lived block is never freed early: a middle iteration's free of one is dropped, the
 * end's frees of the warm-up's blocks kept.
 *
 * A rerun draws the shapes the job draws, so it never asks for more at once than the
 * recorded run did: a variation whose peak requested is above the recorded sequence's by
 * more than VARIATION_EXCESS (1%: carried blocks freed in another order) is drawn again (another order, draw or factor: up to VARIATION_REDRAWS times), and if every
 * redraw is above too, the recorded order itself stands in for it. Without this rule a
 * prefix (an OOM snapshot: a few iterations and the failed step kept at the end) gave
 * variations that stacked carried blocks and rescaled steps into 30% more than any real
 * rerun asked for, and one such variation withheld all advice. */
#include "variations.h"
#include "inputs.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE ((size_t)-1)
#define MIN_ITERATIONS 4          /* fewer: no structure to vary */
#define SLIVER 0.10               /* a piece shorter than this share of the median runs on into the next */
#define LONG_LIVED_SHARE 4        /* alive for over 1/4 of the trace: long-lived */
#define ALTERNATING 0.2           /* pieces this unlike in length (CV) may be halves of one step */
#define VARIATION_REDRAWS 8       /* draws of one variation before the recorded order stands in */
#define VARIATION_EXCESS 0.01     /* a variation may ask this much more than the recorded run: blocks carried
                                     across iterations are freed by size, a few MiB off the recording's order */
#define STATE_SHARE 0.01          /* an iteration that allocates (frees) this share of the peak of long-lived bytes */

struct lifetimes {
  size_t n;
  size_t *free_at;                /* alloc j: the index of its free, n if never */
  size_t *alloc_at;               /* free j: the index of its alloc, NONE if unmatched */
  unsigned char *long_lived;      /* alloc j */
  uint64_t peak_live;             /* peak live requested bytes */
};

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void lifetimes_free(struct lifetimes *l) {
  free(l->free_at);
  free(l->alloc_at);
  free(l->long_lived);
}

/* each alloc's free and each free's alloc: ids are unique among live blocks */
static int lifetimes_of(const struct event_buffer *b, struct lifetimes *l) {
  size_t n = b->n, cap = 16;
  while (cap < 2 * n + 16) cap <<= 1;
  memset(l, 0, sizeof *l);
  l->n = n;
  l->free_at = malloc((n + 1) * sizeof *l->free_at);
  l->alloc_at = malloc((n + 1) * sizeof *l->alloc_at);
  l->long_lived = calloc(n + 1, 1);
  uint64_t *keys = malloc(cap * sizeof *keys);
  size_t *vals = malloc(cap * sizeof *vals);
  unsigned char *used = calloc(cap, 1);
  int ok = l->free_at && l->alloc_at && l->long_lived && keys && vals && used;
  uint64_t live = 0;
  for (size_t j = 0; ok && j < n; j++) {
    const struct event *e = &b->ev[j];
    l->free_at[j] = n;
    l->alloc_at[j] = NONE;
    if (e->op != OP_ALLOC && e->op != OP_FREE) continue;
    size_t h = (size_t)mix64(e->id) & (cap - 1);
    while (used[h] && keys[h] != e->id) h = (h + 1) & (cap - 1);
    if (e->op == OP_ALLOC) {
      used[h] = 1; keys[h] = e->id; vals[h] = j;
      live += e->size;
      if (live > l->peak_live) l->peak_live = live;
    } else if (used[h] && vals[h] != NONE) {
      size_t a = vals[h];
      l->alloc_at[j] = a;
      l->free_at[a] = j;
      vals[h] = NONE;
      live -= b->ev[a].size;
    }
  }
  for (size_t j = 0; ok && j < n; j++)
    if (b->ev[j].op == OP_ALLOC) l->long_lived[j] = l->free_at[j] == n || (l->free_at[j] - j) > n / LONG_LIVED_SHARE;
  free(keys); free(vals); free(used);
  if (!ok) lifetimes_free(l);
  return ok ? 0 : -1;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

/* the coefficient of variation of the lengths of groups of p pieces from phase ph,
 * leaving out the first and last group (warm-up, end) */
static double group_cv(const size_t *st, int k, size_t n, int p, int ph, int *groups) {
  double s = 0, s2 = 0;
  int g = 0;
  for (int i = ph; i + p <= k; i += p) {
    size_t end = i + p < k ? st[i + p] : n;
    if (i == ph || i + p > k - p) continue;
    double len = (double)(end - st[i]);
    s += len; s2 += len * len; g++;
  }
  *groups = g;
  if (g < 2) return 1e9;
  double mean = s / g, var = s2 / g - mean * mean;
  return mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 1e9;
}

static int boundaries_from_lifetimes(const struct event_buffer *b, const struct lifetimes *l, size_t **out, int *period) {
  size_t n = b->n;
  int *diff = calloc(n + 2, sizeof *diff);
  size_t *st = malloc((n + 1) * sizeof *st);
  uint64_t *live = malloc((n + 1) * sizeof *live);   /* live requested bytes before event t */
  if (!diff || !st || !live) { free(diff); free(st); free(live); return -1; }
  uint64_t bytes = 0;
  for (size_t j = 0; j < n; j++) {
    live[j] = bytes;
    if (b->ev[j].op == OP_ALLOC) bytes += b->ev[j].size;
    else if (b->ev[j].op == OP_FREE && l->alloc_at[j] != NONE) bytes -= b->ev[l->alloc_at[j]].size;
    if (b->ev[j].op == OP_ALLOC && !l->long_lived[j]) { diff[j + 1]++; diff[l->free_at[j] + 1]--; }
  }
  live[n] = bytes;
  /* c(t): short-lived blocks live before event t; its least value in the middle 80% */
  int c = 0, m = -1;
  for (size_t t = 0; t <= n; t++) {
    c += diff[t];
    diff[t] = c;
    if (t >= n / 10 && t <= n - n / 10 && (m < 0 || c < m)) m = c;
  }
  int k = 0;
  for (size_t t = 1; t < n; t++)
    if (diff[t] <= m && diff[t - 1] > m) st[k++] = t;
  free(diff);
  /* slivers join the piece before */
  if (k >= 2) {
    size_t *len = malloc((size_t)k * sizeof *len);
    if (!len) { free(st); free(live); return -1; }
    for (int i = 0; i < k; i++) len[i] = (i + 1 < k ? st[i + 1] : n) - st[i];
    qsort(len, (size_t)k, sizeof *len, cmp_size);
    /* the median by events (half of the events lie in pieces at least this long): slivers
     * may outnumber the steps */
    size_t total = 0, run = 0;
    for (int i = 0; i < k; i++) total += len[i];
    double med = (double)len[k - 1];
    for (int i = 0; i < k; i++) {
      run += len[i];
      if (run * 2 >= total) { med = (double)len[i]; break; }
    }
    free(len);
    int w = 1;
    for (int i = 1; i < k; i++) {
      if ((double)(st[i] - st[w - 1]) < SLIVER * med) continue;   /* a sliver: it runs on into this piece */
      st[w++] = st[i];
    }
    k = w;
  }
  /* the period: merge p pieces when that makes iterations much more alike in length; of
   * its phases, the one whose boundaries hold the least live memory (the step's end, not
   * a dip inside it) */
  int best_p = 1, best_ph = 0, g;
  double best_cv = group_cv(st, k, n, 1, 0, &g);
  for (int p = 2; p <= 4; p++) {
    double cv = 1e9;
    for (int ph = 0; ph < p; ph++) {
      double c2 = group_cv(st, k, n, p, ph, &g);
      if (g >= MIN_ITERATIONS && c2 < cv) cv = c2;
    }
    if (best_cv > ALTERNATING && cv < 0.5 * best_cv) { best_cv = cv; best_p = p; }
  }
  if (best_p > 1) {
    double least = -1;
    for (int ph = 0; ph < best_p; ph++) {
      double sum = 0;
      int cnt = 0;
      for (int i = ph; i < k; i += best_p) { sum += (double)live[st[i]]; cnt++; }
      if (cnt && (least < 0 || sum / cnt < least)) { least = sum / cnt; best_ph = ph; }
    }
  }
  free(live);
  int w = 0;
  for (int i = 0; i < k; i++)
    if (i < best_ph || (i - best_ph) % best_p == 0) st[w++] = st[i];
  *out = st;
  *period = best_p;
  return w;
}

int variations_iterations(const struct event_buffer *b, size_t **starts, int *period, char *how, size_t how_n) {
  *starts = NULL;
  *period = 1;
  size_t n = b->n, iters = 0;
  for (size_t j = 0; j < n; j++) iters += b->ev[j].op == OP_ITER;
  if (iters) {
    size_t *st = malloc((iters + 1) * sizeof *st);
    if (!st) return -1;
    int k = 0;
    st[k++] = 0;
    for (size_t j = 0; j + 1 < n; j++) if (b->ev[j].op == OP_ITER) st[k++] = j + 1;
    *starts = st;
    snprintf(how, how_n, "the trace's ITER events");
    return k >= MIN_ITERATIONS ? k : 0;
  }
  struct lifetimes l;
  if (lifetimes_of(b, &l)) return -1;
  int k = boundaries_from_lifetimes(b, &l, starts, period);
  lifetimes_free(&l);
  if (k < 0) return -1;
  if (*period > 1) snprintf(how, how_n, "points where every short-lived block is freed (%d per iteration)", *period);
  else snprintf(how, how_n, "points where every short-lived block is freed");
  return k >= MIN_ITERATIONS ? k : 0;
}

/* ---- building one variation ---- */

struct carried { uint64_t id, size; };

struct builder {
  const struct event_buffer *b;
  const struct lifetimes *l;
  struct event_buffer *out;
  uint64_t *newid;                /* alloc j: its id in this variation (latest copy) */
  unsigned char *fixed_live;      /* alloc j of the warm-up/end, long-lived, not yet freed */
  struct carried *pend; size_t npend, cappend;
  uint64_t next_id;
  const unsigned char *varies;    /* alloc j: short-lived and of a size that changes with the step's shape */
  double scale;                   /* this copy's sizes of varying blocks times this (1: as recorded) */
};

/* the carried block a free of `size` takes: the oldest of that size, else the nearest */
static int take_carried(struct builder *bd, uint64_t size, uint64_t *id) {
  size_t best = NONE;
  uint64_t best_d = UINT64_MAX;
  for (size_t i = 0; i < bd->npend; i++) {
    uint64_t s = bd->pend[i].size, d = s > size ? s - size : size - s;
    if (d < best_d) { best_d = d; best = i; if (!d) break; }
  }
  if (best == NONE) return 0;
  *id = bd->pend[best].id;
  memmove(&bd->pend[best], &bd->pend[best + 1], (bd->npend - best - 1) * sizeof *bd->pend);
  bd->npend--;
  return 1;
}

static int emit(struct builder *bd, size_t lo, size_t hi, int fixed) {
  const struct lifetimes *l = bd->l;
  for (size_t j = lo; j < hi; j++) {
    struct event e = bd->b->ev[j];
    if (e.op == OP_ALLOC) {
      uint64_t nid = ++bd->next_id;
      if (e.id >= TRACE_OOM_ID_BASE) nid |= TRACE_OOM_ID_BASE;   /* a failed request stays one */
      bd->newid[j] = nid;
      e.id = nid;
      if (bd->scale != 1 && bd->varies[j]) {          /* another shape: its tensors' sizes scaled, 512 B granules */
        uint64_t sz = (uint64_t)((double)e.size * bd->scale + 0.5);
        e.size = sz < 512 ? (sz ? sz : 1) : (sz + 511) / 512 * 512;
      }
      size_t f = l->free_at[j];
      if (f >= hi) {
        if (l->long_lived[j]) bd->fixed_live[j] = (unsigned char)fixed;
        else {
          if (bd->npend == bd->cappend) {
            size_t cap = bd->cappend ? bd->cappend * 2 : 256;
            struct carried *p = realloc(bd->pend, cap * sizeof *p);
            if (!p) return -1;
            bd->pend = p;
            bd->cappend = cap;
          }
          bd->pend[bd->npend++] = (struct carried){nid, bd->b->ev[j].size};   /* matched by the recorded size */
        }
      }
    } else if (e.op == OP_FREE) {
      size_t a = l->alloc_at[j];
      if (a == NONE) continue;                       /* unmatched in the recording: not replayed */
      if (a >= lo) e.id = bd->newid[a];              /* born in this piece */
      else if (l->long_lived[a]) {
        if (!fixed || !bd->fixed_live[a]) continue;  /* never freed early */
        bd->fixed_live[a] = 0;
        e.id = bd->newid[a];
      } else if (!take_carried(bd, bd->b->ev[a].size, &e.id)) continue;
    }
    if (event_buffer_push(bd->out, &e)) return -1;
  }
  return 0;
}

static int build_one(struct builder *bd, const size_t *st, int k, int head, int tail_first, const int *order,
                     const double *scale, double head_scale, int norder) {
  size_t n = bd->b->n;
  memset(bd->fixed_live, 0, n);
  bd->npend = 0;
  bd->next_id = 0;
  bd->out->n = 0;
  size_t head_end = st[head], tail_start = st[tail_first];
  bd->scale = head_scale;                           /* the warm-up's first steps drew their shapes too */
  if (emit(bd, 0, head_end, 1)) return -1;
  for (int i = 0; i < norder; i++) {
    int s = order[i];
    bd->scale = scale ? scale[i] : 1;
    if (emit(bd, st[s], s + 1 < k ? st[s + 1] : n, 0)) return -1;
  }
  bd->scale = 1;
  return emit(bd, tail_start, n, 1);
}

struct size_seg { uint64_t size; int seg; };

static int cmp_size_seg(const void *a, const void *b) {
  const struct size_seg *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return (x->seg > y->seg) - (x->seg < y->seg);
}

static int cmp_u64v(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Which blocks of the middle iterations change size with the step's shape: short-lived,
 * of a size that does not come back in (nearly) every iteration - a parameter-sized
 * gradient or optimizer temporary does. weight[i]: iteration i's bytes of those blocks;
 * head_weight: the warm-up's (its steps drew shapes too; its long-lived state never varies). */
static int varying_blocks(const struct event_buffer *b, const struct lifetimes *l, const size_t *st, int head,
                          int tail_first, unsigned char *varies, double *weight, double *head_weight) {
  size_t n = b->n, m = 0;
  struct size_seg *ss = malloc((n + 1) * sizeof *ss);
  uint64_t *fixed = malloc((n + 1) * sizeof *fixed);
  if (!ss || !fixed) { free(ss); free(fixed); return -1; }
  for (int i = head; i < tail_first; i++)
    for (size_t j = st[i]; j < st[i + 1]; j++)
      if (b->ev[j].op == OP_ALLOC && !l->long_lived[j]) ss[m++] = (struct size_seg){b->ev[j].size, i};
  qsort(ss, m, sizeof *ss, cmp_size_seg);
  size_t nf = 0;
  int mid = tail_first - head;
  for (size_t a = 0; a < m;) {
    size_t e = a;
    int segs = 0, last = -1;
    while (e < m && ss[e].size == ss[a].size) { if (ss[e].seg != last) { segs++; last = ss[e].seg; } e++; }
    if (segs * 10 >= mid * 9) fixed[nf++] = ss[a].size;   /* in 90% of the iterations: not the shape's */
    a = e;
  }
  free(ss);
  memset(varies, 0, n + 1);
  for (int i = head - 1; i < tail_first; i++) {       /* i = head - 1: the warm-up, from event 0 */
    double *w = i < head ? head_weight : &weight[i];
    *w = 0;
    for (size_t j = i < head ? 0 : st[i]; j < st[i + 1]; j++) {
      if (b->ev[j].op != OP_ALLOC || l->long_lived[j]) continue;
      if (bsearch(&b->ev[j].size, fixed, nf, sizeof *fixed, cmp_u64v)) continue;
      varies[j] = 1;
      *w += (double)b->ev[j].size;
    }
  }
  free(fixed);
  return 0;
}

/* the most requested bytes live at once (ids are unique among live blocks; a free of an
 * id not live frees nothing). UINT64_MAX when host memory runs out. */
/* the peak of live requested bytes, with the table given (cap slots of keys and sizes,
 * keys zero) */
static uint64_t peak_with(const struct event_buffer *b, uint64_t *keys, uint64_t *sizes, size_t cap) {
  uint64_t live = 0, peak = 0;
  for (size_t i = 0; i < b->n; i++) {
    const struct event *e = &b->ev[i];
    if (e->op != OP_ALLOC && e->op != OP_FREE) continue;
    size_t h = (size_t)(mix64(e->id) & (cap - 1));
    while (keys[h] && keys[h] != e->id + 1) h = (h + 1) & (cap - 1);
    if (e->op == OP_ALLOC) {
      if (keys[h]) live -= sizes[h];               /* an id reused while live: the newer block */
      keys[h] = e->id + 1;
      sizes[h] = e->size;
      live += e->size;
      if (live > peak) peak = live;
    } else if (keys[h]) {
      live -= sizes[h];
      sizes[h] = 0;                                /* freed: a later alloc of the id takes the slot */
    }
  }
  return peak;
}

static size_t peak_table_cap(size_t n) {
  size_t cap = 16;
  while (cap < 2 * n + 16) cap <<= 1;
  return cap;
}

uint64_t variations_peak_requested(const struct event_buffer *b) {
  size_t cap = peak_table_cap(b->n);
  uint64_t *keys = calloc(cap, sizeof *keys), *sizes = malloc(cap * sizeof *sizes);
  uint64_t peak = keys && sizes ? peak_with(b, keys, sizes, cap) : UINT64_MAX;
  free(keys);
  free(sizes);
  return peak;
}

/* the same for many buffers of about one length: one table, cleared between them (a
 * fresh one each time faulted its pages in for every draw of every variation) */
struct peak_table { uint64_t *keys, *sizes; size_t cap; };

static uint64_t peak_of(struct peak_table *t, const struct event_buffer *b) {
  size_t cap = peak_table_cap(b->n);
  if (cap > t->cap) {
    free(t->keys);
    free(t->sizes);
    t->keys = malloc(cap * sizeof *t->keys);
    t->sizes = malloc(cap * sizeof *t->sizes);
    t->cap = t->keys && t->sizes ? cap : 0;
    if (!t->cap) return UINT64_MAX;
  }
  memset(t->keys, 0, cap * sizeof *t->keys);
  return peak_with(b, t->keys, t->sizes, cap);
}

int variations_build(const struct event_buffer *b, int n, uint64_t seed, struct variation_set *vs, char *err) {
  memset(vs, 0, sizeof *vs);
  vs->v = calloc((size_t)(n > 0 ? n : 1), sizeof *vs->v);
  vs->peak = calloc((size_t)(n > 0 ? n : 1), sizeof *vs->peak);
  if (!vs->v || !vs->peak) { free(vs->v); free(vs->peak); vs->v = NULL; vs->peak = NULL; snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  vs->v[0] = *b;                                    /* the recorded sequence (not owned) */
  vs->n = 1;
  vs->peak[0] = variations_peak_requested(b);
  if (vs->peak[0] == UINT64_MAX) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  size_t *st = NULL;
  int k = variations_iterations(b, &st, &vs->period, vs->how, sizeof vs->how);
  if (k < 0) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  vs->iterations = k;
  if (!k || n <= 1) {
    if (!k) snprintf(vs->how, sizeof vs->how, "no repeating iteration structure found (fewer than %d iterations)", MIN_ITERATIONS);
    free(st);
    return 0;
  }
  struct lifetimes l;
  if (lifetimes_of(b, &l)) { free(st); snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  /* the warm-up: up to the last iteration of the first half that builds long-lived state;
   * the end: from the first of the second half that frees it, and the last iteration */
  double state = (double)l.peak_live * STATE_SHARE;
  int head = st[0] > 0 ? 0 : 1, tail_first = k - 1;   /* a prologue before the first boundary is the warm-up itself */
  for (int i = 0; i < k; i++) {
    size_t lo = st[i], hi = i + 1 < k ? st[i + 1] : b->n;
    double built = 0, freed = 0;
    for (size_t j = lo; j < hi; j++) {
      if (b->ev[j].op == OP_ALLOC && l.long_lived[j]) built += (double)b->ev[j].size;
      if (b->ev[j].op == OP_FREE && l.alloc_at[j] != NONE && l.long_lived[l.alloc_at[j]]) freed += (double)b->ev[l.alloc_at[j]].size;
    }
    if (i < k / 2 && built > state && i + 1 > head) head = i + 1;
    if (i >= k / 2 && freed > state && i < tail_first) tail_first = i;
  }
  int mid = tail_first - head;
  vs->head_iters = head;
  vs->tail_iters = k - tail_first;
  vs->head_end = st[head];
  vs->tail_start = st[tail_first];
  if (mid < 2) {
    snprintf(vs->how + strlen(vs->how), sizeof vs->how - strlen(vs->how), "; too few iterations between warm-up and end to vary");
    lifetimes_free(&l);
    free(st);
    return 0;
  }
  struct builder bd = {.b = b, .l = &l, .scale = 1};
  struct peak_table pt = {0};
  bd.newid = malloc((b->n + 1) * sizeof *bd.newid);
  bd.fixed_live = malloc(b->n + 1);
  unsigned char *varies = malloc(b->n + 1);
  double *weight = malloc((size_t)k * sizeof *weight), *scale = malloc((size_t)mid * sizeof *scale);
  int *order = malloc((size_t)mid * sizeof *order);
  int rc = bd.newid && bd.fixed_live && order && varies && weight && scale ? 0 : -1;
  double head_weight = 0;
  if (!rc) rc = varying_blocks(b, &l, st, head, tail_first, varies, weight, &head_weight);
  bd.varies = varies;
  double wmin = 0, wmax = 0;
  for (int i = head; !rc && i < tail_first; i++) {
    if (i == head || weight[i] < wmin) wmin = weight[i];
    if (weight[i] > wmax) wmax = weight[i];
  }
  for (int v = 1; !rc && v < n; v++) {
   for (int draw = 0; !rc && draw <= VARIATION_REDRAWS; draw++) {
    uint64_t x = seed * 0x100000001b3ull + (uint64_t)v + (uint64_t)draw * 0x9e3779b97f4a7c15ull;
    int kind = v % 3;                               /* 1: another order, 2: another draw, 0: another draw, other shapes */
    if (kind == 1) {                                /* another order: a permutation */
      for (int i = 0; i < mid; i++) order[i] = head + i;
      for (int i = mid - 1; i > 0; i--) {
        int r = (int)(mix64(x++) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[r];
        order[r] = t;
      }
    } else {                                        /* another draw: resampled with replacement */
      for (int i = 0; i < mid; i++) order[i] = head + (int)(mix64(x++) % (uint64_t)mid);
    }
    /* other shapes: each iteration's shape-dependent tensors scaled by one factor drawn so
     * that their bytes stay within the range the recorded iterations span */
    for (int i = 0; i < mid; i++) {
      double w = weight[order[i]], u = (double)(mix64(x++) >> 11) / 9007199254740992.0;
      scale[i] = kind || w <= 0 || wmax <= wmin ? 1 : (wmin + (wmax - wmin) * u) / w;
    }
    double u = (double)(mix64(x++) >> 11) / 9007199254740992.0, hs = 1;
    if (!kind && head_weight > 0 && wmax > wmin)     /* the warm-up's step: another shape of the range */
      hs = (wmin + (wmax - wmin) * u) / head_weight;
    bd.out = &vs->v[v];
    vs->v[v].info = b->info;
    if (draw == VARIATION_REDRAWS) {                /* every draw asked for more: the recorded order */
      for (int i = 0; i < mid; i++) { order[i] = head + i; scale[i] = 1; }
      hs = 1;
      vs->stand_ins++;
    }
    rc = build_one(&bd, st, k, head, tail_first, order, scale, hs, mid);
    vs->n = v + 1;
    if (rc) break;
    vs->peak[v] = peak_of(&pt, &vs->v[v]);
    if (vs->peak[v] == UINT64_MAX) { rc = -1; break; }
    if ((double)vs->peak[v] <= (double)vs->peak[0] * (1 + VARIATION_EXCESS) || draw == VARIATION_REDRAWS) break;
    vs->redrawn++;
   }
   if (rc) break;
   inputs_slot(&vs->v[v]);                          /* the draw kept */
  }
  free(order);
  free(varies);
  free(weight);
  free(scale);
  free(bd.newid);
  free(bd.fixed_live);
  free(bd.pend);
  free(pt.keys);
  free(pt.sizes);
  lifetimes_free(&l);
  free(st);
  if (rc) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  return 0;
}

void variations_free(struct variation_set *vs) {
  for (int v = 1; v < vs->n; v++) free(vs->v[v].ev);
  free(vs->v);
  free(vs->peak);
  memset(vs, 0, sizeof *vs);
}
