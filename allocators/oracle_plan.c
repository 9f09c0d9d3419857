/* oracle_plan.c - the `oracle` row's offline planner: one pass over the whole workload
 * records each allocation's lifetime [alloc event, free event) and its size (rounded to
 * 512 B), then greedy by size - as static memory planners in inference compilers do
 * (TFLite's ArenaPlanner; Pisarchyk & Lee, "Efficient Memory Management for Deep Neural
 * Net Inference", 2020) - gives each, largest first, the lowest offset (or the smallest
 * gap) where no already placed block with an overlapping lifetime lies.
 *
 * Placed blocks are found through a max-segment tree of their end events over the
 * allocation order (which is also start order): for a block [s, e), the candidates are
 * the allocations made before e; those made during [s, e) are scanned, and of those made
 * before s the tree finds each placed one whose end exceeds s from the one before it -
 * output-sensitive. Memory is proportional to the trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oracle.h"
#include "workload.h"

#define HUGE_REQUEST (1ull << 48)   /* the replay engine skips requests this large (replay.c) */

/* ---- id -> allocation index, open addressing with backward-shift deletion ---- */

struct idmap { uint64_t *key, *val; uint8_t *used; uint64_t mask, count; };

static uint64_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return x;
}

static int idmap_init(struct idmap *m, uint64_t cap) {
  m->mask = cap - 1;
  m->count = 0;
  m->key = malloc(cap * sizeof *m->key);
  m->val = malloc(cap * sizeof *m->val);
  m->used = calloc(cap, 1);
  return m->key && m->val && m->used ? 0 : -1;
}

static void idmap_free(struct idmap *m) { free(m->key); free(m->val); free(m->used); }

static int64_t idmap_find(const struct idmap *m, uint64_t id) {
  for (uint64_t i = mix(id) & m->mask;; i = (i + 1) & m->mask) {
    if (!m->used[i]) return -1;
    if (m->key[i] == id) return (int64_t)i;
  }
}

static int idmap_put(struct idmap *m, uint64_t id, uint64_t val) {
  if ((m->count + 1) * 2 > m->mask + 1) {
    struct idmap bigger;
    if (idmap_init(&bigger, 2 * (m->mask + 1))) { idmap_free(&bigger); return -1; }
    for (uint64_t i = 0; i <= m->mask; i++)
      if (m->used[i]) idmap_put(&bigger, m->key[i], m->val[i]);
    idmap_free(m);
    *m = bigger;
  }
  uint64_t i = mix(id) & m->mask;
  while (m->used[i]) i = (i + 1) & m->mask;
  m->used[i] = 1;
  m->key[i] = id;
  m->val[i] = val;
  m->count++;
  return 0;
}

static void idmap_del(struct idmap *m, uint64_t i) {
  m->used[i] = 0;
  m->count--;
  for (uint64_t j = (i + 1) & m->mask; m->used[j]; j = (j + 1) & m->mask) {
    uint64_t home = mix(m->key[j]) & m->mask;
    /* move j back to the hole i if its home is not in (i, j] (cyclically) */
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      m->key[i] = m->key[j];
      m->val[i] = m->val[j];
      m->used[i] = 1;
      m->used[j] = 0;
      i = j;
    }
  }
}

/* ---- recording ---- */

static int grow_arrays(struct oracle_plan *p, uint64_t *cap) {
  uint64_t n = *cap ? 2 * *cap : 1024;
  uint64_t **arr[] = {&p->start, &p->end, &p->size, &p->offset};
  for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
    uint64_t *q = realloc(*arr[i], n * sizeof **arr[i]);
    if (!q) return -1;
    *arr[i] = q;
  }
  *cap = n;
  return 0;
}

int oracle_plan_record(struct oracle_plan *p, struct workload *w, char *err) {
  struct idmap live;
  uint64_t cap = 0, t = 0, live_bytes = 0;
  if (idmap_init(&live, 1024)) { idmap_free(&live); snprintf(err, FB_ERRLEN, "oracle: out of host memory"); return -1; }
  struct event ev;
  int rc;
  while ((rc = workload_next(w, &ev, err)) == 1) {
    if (ev.op == OP_ALLOC && ev.size && ev.size < HUGE_REQUEST && idmap_find(&live, ev.id) < 0) {
      if (p->n == cap && grow_arrays(p, &cap)) goto nomem;
      uint64_t k = p->n++;
      p->start[k] = t;
      p->end[k] = ORACLE_NEVER;
      p->size[k] = (ev.size + ORACLE_ALIGN - 1) / ORACLE_ALIGN * ORACLE_ALIGN;
      p->offset[k] = 0;
      if (idmap_put(&live, ev.id, k)) goto nomem;
      live_bytes += p->size[k];
      if (live_bytes > p->peak_live) p->peak_live = live_bytes;
    } else if (ev.op == OP_FREE) {
      int64_t i = idmap_find(&live, ev.id);
      if (i >= 0) {
        uint64_t k = live.val[i];
        p->end[k] = t;
        live_bytes -= p->size[k];
        idmap_del(&live, (uint64_t)i);
      }
    }
    t++;
  }
  idmap_free(&live);
  if (rc < 0) return -1;
  p->events = t;
  for (uint64_t k = 0; k < p->n; k++)
    if (p->end[k] == ORACLE_NEVER) p->end[k] = t + 1;   /* never freed: lives to the end */
  return 0;
nomem:
  idmap_free(&live);
  snprintf(err, FB_ERRLEN, "oracle: out of host memory recording %llu allocations", (unsigned long long)p->n);
  return -1;
}

/* ---- the segment tree of placed ends ---- */

static void tree_set(struct oracle_plan *p, uint64_t k, uint64_t end) {
  uint64_t i = p->leaves + k;
  p->tree[i] = end;
  for (i /= 2; i; i /= 2) p->tree[i] = p->tree[2 * i] > p->tree[2 * i + 1] ? p->tree[2 * i] : p->tree[2 * i + 1];
}

/* first allocation index whose start is >= t (starts increase with the index) */
static uint64_t first_start_at(const struct oracle_plan *p, uint64_t t) {
  uint64_t lo = 0, hi = p->n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (p->start[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int push_hit(uint64_t **out, uint64_t *cap, uint64_t n, uint64_t k) {
  if (n == *cap) {
    uint64_t nc = *cap ? 2 * *cap : 256;
    uint64_t *q = realloc(*out, nc * sizeof *q);
    if (!q) return -1;
    *out = q;
    *cap = nc;
  }
  (*out)[n] = k;
  return 0;
}

/* the largest allocation index j <= k placed with an end past t (-1: none) */
static int64_t last_live_at(const struct oracle_plan *p, int64_t k, uint64_t t) {
  if (k < 0) return -1;
  uint64_t i = p->leaves + (uint64_t)k;
  if (p->tree[i] <= t) {
    for (;; i /= 2) {   /* up until a left sibling holds one */
      if (i == 1) return -1;
      if ((i & 1) && p->tree[i - 1] > t) { i--; break; }
    }
    while (i < p->leaves) i = p->tree[2 * i + 1] > t ? 2 * i + 1 : 2 * i;   /* down to its last */
  }
  return (int64_t)(i - p->leaves);
}

int64_t oracle_plan_overlapping(const struct oracle_plan *p, uint64_t t0, uint64_t t1, uint64_t limit, uint64_t **out, uint64_t *cap) {
  if (!p->tree) return 0;
  uint64_t mid = first_start_at(p, t0), lim = first_start_at(p, t1), n = 0;
  if (limit < lim) lim = limit;
  if (mid > lim) mid = lim;
  const uint64_t *leaf = p->tree + p->leaves;
  /* those made during [t0, t1): every placed one overlaps - a plain scan */
  for (uint64_t k = mid; k < lim; k++)
    if (leaf[k] && push_hit(out, cap, n++, k)) return -1;
  /* those made before t0 and still live at t0: from mid down, each the nearest placed
   * one whose end exceeds t0 (the tree walked up from the last, then down to it) - a
   * walk as long as the gap between two of them, not the tree's depth, and most of them
   * lie close together (allocations live at t0 were made recently) */
  for (int64_t k = last_live_at(p, (int64_t)mid - 1, t0); k >= 0; k = last_live_at(p, k - 1, t0))
    if (push_hit(out, cap, n++, (uint64_t)k)) return -1;
  return (int64_t)n;
}

/* ---- greedy by size ---- */

static int by_size_desc(const void *a, const void *b, void *ctx) {
  const struct oracle_plan *p = ctx;
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  if (p->size[x] != p->size[y]) return p->size[x] > p->size[y] ? -1 : 1;
  return x < y ? -1 : x > y;   /* equal sizes: earlier first */
}

struct span { uint64_t off, size; };

/* Sort spans by offset: insertion sort when few, else LSD radix on offset / 512 in 8-bit
 * digits (as many passes as the largest offset needs) - the planner's inner loop. */
static void sort_spans(struct span *a, struct span *tmp, uint64_t n) {
  if (n < 48) {
    for (uint64_t i = 1; i < n; i++) {
      struct span x = a[i];
      uint64_t j = i;
      for (; j && a[j - 1].off > x.off; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  uint64_t max = 0;
  for (uint64_t i = 0; i < n; i++) if (a[i].off > max) max = a[i].off;
  max /= ORACLE_ALIGN;
  struct span *src = a, *dst = tmp;
  for (unsigned shift = 0; shift < 64 && (max >> shift); shift += 8) {
    uint64_t count[257] = {0};
    for (uint64_t i = 0; i < n; i++) count[((src[i].off / ORACLE_ALIGN) >> shift & 255) + 1]++;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (uint64_t i = 0; i < n; i++) dst[count[(src[i].off / ORACLE_ALIGN) >> shift & 255]++] = src[i];
    struct span *t = src; src = dst; dst = t;
  }
  if (src != a) memcpy(a, src, n * sizeof *a);
}

int oracle_plan_place(struct oracle_plan *p, char *err) {
  p->arena = 0;
  if (!p->n) return 0;
  for (p->leaves = 1; p->leaves < p->n; p->leaves *= 2) {}
  p->tree = calloc(2 * p->leaves, sizeof *p->tree);
  uint64_t *order = malloc(p->n * sizeof *order), *hits = NULL, hits_cap = 0, spans_cap = 0;
  struct span *spans = NULL;
  if (!p->tree || !order) goto nomem;
  for (uint64_t k = 0; k < p->n; k++) order[k] = k;
  qsort_r(order, p->n, sizeof *order, by_size_desc, p);
  for (uint64_t j = 0; j < p->n; j++) {
    uint64_t b = order[j], size = p->size[b];
    int64_t cnt = oracle_plan_overlapping(p, p->start[b], p->end[b], p->n, &hits, &hits_cap);
    if (cnt < 0) goto nomem;
    if ((uint64_t)cnt > spans_cap) {
      struct span *q = realloc(spans, 2 * (uint64_t)cnt * sizeof *q);   /* and room to sort */
      if (!q) goto nomem;
      spans = q;
      spans_cap = (uint64_t)cnt;
    }
    for (int64_t i = 0; i < cnt; i++) spans[i] = (struct span){p->offset[hits[i]], p->size[hits[i]]};
    sort_spans(spans, spans + cnt, (uint64_t)cnt);
    uint64_t x = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (int64_t i = 0; i < cnt; i++) {
      if (spans[i].off >= x + size) {
        if (!p->best_gap) break;
        if (spans[i].off - x < best_gap) { best_gap = spans[i].off - x; best = x; }
      }
      if (spans[i].off + spans[i].size > x) x = spans[i].off + spans[i].size;
    }
    p->offset[b] = p->best_gap && best != UINT64_MAX ? best : x;
    if (p->offset[b] + size > p->arena) p->arena = p->offset[b] + size;
    tree_set(p, b, p->end[b]);
  }
  free(order);
  free(hits);
  free(spans);
  return 0;
nomem:
  free(order);
  free(hits);
  free(spans);
  snprintf(err, FB_ERRLEN, "oracle: out of host memory planning %llu allocations", (unsigned long long)p->n);
  return -1;
}

void oracle_plan_free(struct oracle_plan *p) {
  free(p->start);
  free(p->end);
  free(p->size);
  free(p->offset);
  free(p->tree);
  memset(p, 0, sizeof *p);
}
