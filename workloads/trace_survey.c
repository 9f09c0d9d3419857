/* trace_survey.c - rules R7 and R8 of trace_pools.h: one pass over a snapshot's records of one
 * device that follows which cudaMalloc'd segments and which mapped pages of expandable
 * segments are wholly free, and at the end of each release run decides whether the run
 * was the general release_cached_blocks or emptyCache(P) of a private pool that went
 * away (its segments then get a new pool number, and the run is replayed as empty_cache(P)).
 * Pages: an expandable segment of the small pool maps one 2 MiB page per growth (its
 * requests are at most 1 MiB), of the large pool 20 MiB pages, counted from the segment's
 * start (every map and unmap begins on one); an allocation covers its
 * request rounded up to 512 bytes (expandable segments split off any larger rest). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "event.h"
#include "trace_pools.h"

#define SMALL_PAGE (2ull << 20)
#define LARGE_PAGE (20ull << 20)

/* ---- a u64 -> u64 map (open addressing, backward-shift delete; value 0 = absent) ---- */

static size_t slot(const struct tp_map *m, uint64_t k) { return (size_t)((k * 0x9E3779B97F4A7C15ULL) >> 20) & (m->cap - 1); }

static uint64_t map_get(const struct tp_map *m, uint64_t k) {
  if (!m->cap) return 0;
  for (size_t i = slot(m, k);; i = (i + 1) & (m->cap - 1)) {
    if (!m->e[i].v) return 0;
    if (m->e[i].k == k) return m->e[i].v;
  }
}

static void map_del(struct tp_map *m, uint64_t k) {
  if (!m->cap) return;
  size_t mask = m->cap - 1, i = slot(m, k);
  while (m->e[i].v && m->e[i].k != k) i = (i + 1) & mask;
  if (!m->e[i].v) return;
  m->e[i].v = 0;
  for (size_t j = i;;) {
    j = (j + 1) & mask;
    if (!m->e[j].v) break;
    size_t h = slot(m, m->e[j].k);
    if (i <= j ? (i < h && h <= j) : (i < h || h <= j)) continue;   /* its home is past the hole */
    m->e[i] = m->e[j];
    m->e[j].v = 0;
    i = j;
  }
  m->n--;
}

/* set k to v (v != 0); 0, or -1 out of memory */
static int map_set(struct tp_map *m, uint64_t k, uint64_t v) {
  if ((m->n + 1) * 2 > m->cap) {
    struct tp_map nm = {calloc(m->cap ? 2 * m->cap : 1024, sizeof *nm.e), m->cap ? 2 * m->cap : 1024, 0};
    if (!nm.e) return -1;
    for (size_t i = 0; i < m->cap; i++)
      if (m->e[i].v) map_set(&nm, m->e[i].k, m->e[i].v);
    free(m->e);
    *m = nm;
  }
  size_t i = slot(m, k);
  while (m->e[i].v && m->e[i].k != k) i = (i + 1) & (m->cap - 1);
  if (!m->e[i].v) m->n++;
  m->e[i] = (struct tp_kv){k, v};
  return 0;
}

/* ---- intervals ---- */

static long floor_in(const struct tp_seg *v, size_t n, uint64_t addr) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (v[mid].start <= addr) lo = mid + 1; else hi = mid;
  }
  return (long)lo - 1;
}

static int seg_insert(struct tp_seg **v, size_t *n, size_t *cap, struct tp_seg s) {
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 64;
    struct tp_seg *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
  }
  size_t at = (size_t)(floor_in(*v, *n, s.start) + 1);
  memmove(*v + at + 1, *v + at, (*n - at) * sizeof **v);
  (*v)[at] = s;
  (*n)++;
  return 0;
}

static int note_freed(struct trace_pools *tp, size_t create) {
  for (size_t i = 0; i < tp->nfreed; i++) if (tp->freed[i] == create) return 0;
  if (tp->nfreed == tp->freed_cap) {
    size_t nc = tp->freed_cap ? 2 * tp->freed_cap : 64;
    size_t *nf = realloc(tp->freed, nc * sizeof *nf);
    if (!nf) return -1;
    tp->freed = nf;
    tp->freed_cap = nc;
  }
  tp->freed[tp->nfreed++] = create;
  return 0;
}

/* cut [a, e) out of the mapped ranges; the pieces' creating events were released */
static int unmap_cut(struct trace_pools *tp, uint64_t a, uint64_t e) {
  long i = floor_in(tp->mv, tp->nmv, a);
  if (i < 0 || tp->mv[i].end <= a) i++;
  while ((size_t)i < tp->nmv && tp->mv[i].start < e) {
    struct tp_seg v = tp->mv[i];
    if (note_freed(tp, v.create)) return -1;
    if (v.start < a && v.end > e) {
      tp->mv[i].end = a;
      v.start = e;
      return seg_insert(&tp->mv, &tp->nmv, &tp->mv_cap, v);
    }
    if (v.start < a) { tp->mv[i].end = a; i++; continue; }
    if (v.end > e) { tp->mv[i].start = e; break; }
    memmove(tp->mv + i, tp->mv + i + 1, (tp->nmv - (size_t)i - 1) * sizeof *tp->mv);
    tp->nmv--;
  }
  return 0;
}

/* the pages of mapped range v that [a, e) touches get d live allocations more */
static int pages_add(struct trace_pools *tp, const struct tp_seg *v, uint64_t a, uint64_t e, int d) {
  uint64_t ps = v->live, base = v->start;   /* a mapped range starts on a page of its segment */
  for (uint64_t p = base + (a - base) / ps * ps; p < e; p += ps) {
    uint64_t c = map_get(&tp->pages, p);
    if (d > 0 ? map_set(&tp->pages, p, c + 1) : 0) return -1;
    if (d < 0 && c > 1 && map_set(&tp->pages, p, c - 1)) return -1;
    if (d < 0 && c == 1) map_del(&tp->pages, p);
  }
  return 0;
}

/* ---- the rule ---- */

/* a page at addr of a mapping on stream: inside a listed (0, 0) segment of that stream (a
 * virtual range freed and reserved again may come back on another stream, for another pool) */
static int listed_general(const struct trace_pools *tp, uint64_t addr, uint64_t stream) {
  size_t lo = 0, hi = tp->nlisted;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (tp->listed[mid].start <= addr) lo = mid + 1; else hi = mid;
  }
  return lo > 0 && addr < tp->listed[lo - 1].end && tp->listed[lo - 1].pool == 0 && tp->listed[lo - 1].stream == stream;
}

/* a pool gone before the snapshot that R7 or R8 made up (not in the segments list) */
static int made_up(const struct trace_pools *tp, uint32_t pool) { return pool && tp->pool_ids[pool] == -1; }

/* an expandable segment grows contiguously: pool-0 mappings touching one of pool id on the
 * same stream are the same segment's, so id's too */
static void spread(struct trace_pools *tp, uint32_t id) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t i = 0; i + 1 < tp->nmv; i++) {
      struct tp_seg *a = &tp->mv[i], *b = &tp->mv[i + 1];
      if (a->end != b->start || a->stream != b->stream) continue;
      uint32_t pa = tp->create_pool[a->create], pb = tp->create_pool[b->create];
      if (pa == id && pb == 0) { tp->create_pool[b->create] = id; changed = 1; }
      if (pb == id && pa == 0) { tp->create_pool[a->create] = id; changed = 1; }
    }
  }
}

/* a new pool number for segments R7 or R8 found private; 0 when out of numbers */
static uint32_t new_pool(struct trace_pools *tp) {
  if (tp->npools >= EV_POOL_MAX) return 0;
  uint32_t id = ++tp->npools;
  int64_t *ni = realloc(tp->pool_ids, (id + 1) * sizeof *ni);
  if (!ni) { tp->npools--; return UINT32_MAX; }
  tp->pool_ids = ni;
  ni[id] = -1;   /* not in the segments list */
  return id;
}

static int run_end(struct trace_pools *tp) {
  tp->sv_in_run = 0;
  uint64_t run = tp->sv_run++;
  if (run >= tp->nruns_ec) { tp->nfreed = 0; return 0; }
  int ec = (tp->ec[run / 8] >> (run & 7)) & 1;
  size_t freed0 = 0, left0 = 0, witness = 0;
  uint32_t known = 0;   /* a made-up pool among the freed: theirs */
  for (size_t i = 0; i < tp->nfreed; i++) {
    uint32_t p = tp->create_pool[tp->freed[i]];
    freed0 += p == 0 || made_up(tp, p);
    if (made_up(tp, p)) known = p;
  }
  if ((ec || !tp->subset_release) && freed0 && freed0 == tp->nfreed) {
    for (size_t i = 0; i < tp->nsv; i++) {
      if (tp->sv[i].live || tp->create_pool[tp->sv[i].create]) continue;
      left0++;
      witness += tp->create_final[tp->sv[i].create];
    }
    for (size_t i = 0; tp->plain_round && i < tp->nmv; i++) {
      const struct tp_seg *v = &tp->mv[i];
      if (tp->create_pool[v->create]) continue;
      for (uint64_t p = v->start; p + v->live <= v->end; p += v->live)
        if (!map_get(&tp->pages, p)) { left0++; witness += listed_general(tp, p, v->stream); }
    }
    if (witness || (tp->nlisted_pools && left0 >= freed0)) {
      uint32_t id = known ? known : new_pool(tp);
      if (id == UINT32_MAX) return -1;
      if (id) {
        for (size_t i = 0; i < tp->nfreed; i++) tp->create_pool[tp->freed[i]] = id;
        known = id;
        spread(tp, id);
      }
    }
  }
  /* a run that frees a pool gone before the snapshot is its emptyCache(P), or a general
   * release after its releasePool: replayed as the one or the other, never as a retry
   * the uncapped replay would not make */
  if (known) tp->ec[run / 8] |= (uint8_t)(1u << (run & 7));
  tp->nfreed = 0;
  return 0;
}

/* R8: the request that followed a segment_alloc the segments list shows as general */
static int growth_check(struct trace_pools *tp, size_t create, uint64_t addr, uint64_t size, uint64_t stream) {
  long g = floor_in(tp->sv, tp->nsv, addr);
  if (g < 0 || tp->sv[g].create != create || tp->sv[g].start != addr) return 0;   /* served elsewhere */
  if (!tp->create_final[create] || tp->create_pool[create]) return 0;            /* not surely general */
  uint64_t rounded = size < 512 ? 512 : (size + 511) & ~511ull;
  int small = rounded <= (1ull << 20);
  uint32_t id = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < tp->nsv; i++) {
      struct tp_seg *v = &tp->sv[i];
      uint32_t p = tp->create_pool[v->create];
      if ((long)i == g || v->live || v->stream != stream || (p && !made_up(tp, p))) continue;
      if ((v->end - v->start == (2ull << 20)) != small || v->end - v->start < rounded) continue;
      if (pass == 0) { if (p) id = p; continue; }   /* one of them already has a made-up pool: it */
      if (!id && (id = new_pool(tp)) == UINT32_MAX) return -1;
      if (!id) return 0;
      tp->create_pool[v->create] = id;
    }
  return 0;
}

/* R8 for expandable segments: a map inside a listed (0, 0) segment of its stream, for the
 * request that followed it, while a pool-0 mapping of that stream and page size had enough
 * consecutive wholly free pages for the request (a free block that large: best fit would
 * have used it before growing) */
static int growth_check_mapped(struct trace_pools *tp, size_t create, uint64_t addr, uint64_t size, uint64_t stream) {
  if (tp->grow_stream != stream || tp->create_pool[create] || !listed_general(tp, tp->grow_start, stream)) return 0;
  uint64_t rounded = size < 512 ? 512 : (size + 511) & ~511ull;
  if (addr + rounded <= tp->grow_start || addr >= tp->grow_end) return 0;   /* not served by the growth */
  uint64_t ps = rounded <= (1ull << 20) ? SMALL_PAGE : LARGE_PAGE;
  uint32_t id = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < tp->nmv; i++) {
      const struct tp_seg *v = &tp->mv[i];
      uint32_t p = tp->create_pool[v->create];
      if (v->create == create || v->stream != stream || v->live != ps || (p && !made_up(tp, p))) continue;
      uint64_t run = 0, best = 0;
      for (uint64_t q = v->start; q + ps <= v->end; q += ps) {
        run = map_get(&tp->pages, q) ? 0 : run + ps;
        if (run > best) best = run;
      }
      if (best < rounded) continue;
      if (pass == 0) { if (p) id = p; continue; }
      if (!id && (id = new_pool(tp)) == UINT32_MAX) return -1;
      if (!id) return 0;
      tp->create_pool[v->create] = id;
    }
  if (id) spread(tp, id);
  return 0;
}

int tp_survey_wanted(const struct trace_pools *tp) {
  for (size_t k = 0; k < tp->nsev; k++)
    if (tp->sev[k].device == tp->device && (tp->sev[k].action == TK_SEGMENT_FREE || tp->sev[k].action == TK_SEGMENT_UNMAP))
      return 1;
  return 0;
}

#define OWN_MAPPED (1ull << 63)   /* own's value: create + 1 (cudaMalloc'd), or the rounded size | OWN_MAPPED */

int tp_survey_event(struct trace_pools *tp, const struct pk_rec *r) {
  uint8_t a = r->action;
  uint64_t addr = (uint64_t)r->addr, size = r->size > 0 ? (uint64_t)r->size : 0;
  if (a == TK_SEGMENT_FREE || a == TK_SEGMENT_UNMAP) {
    tp->sv_in_run = 1;
    if (a == TK_SEGMENT_UNMAP) return size ? unmap_cut(tp, addr, addr + size) : 0;
    long i = floor_in(tp->sv, tp->nsv, addr);
    if (i < 0 || tp->sv[i].start != addr) return 0;
    if (note_freed(tp, tp->sv[i].create)) return -1;
    memmove(tp->sv + i, tp->sv + i + 1, (tp->nsv - (size_t)i - 1) * sizeof *tp->sv);
    tp->nsv--;
    return 0;
  }
  if (tp->sv_in_run && run_end(tp)) return -1;
  if (a == TK_SEGMENT_ALLOC || a == TK_SEGMENT_MAP) {
    size_t create = tp->sv_create++;
    if (!size) return 0;
    if (a == TK_SEGMENT_MAP) {
      tp->grow_pending = create + 1;
      tp->grow_map = 1;
      tp->grow_start = addr;
      tp->grow_end = addr + size;
      tp->grow_stream = (uint64_t)r->stream;
      return seg_insert(&tp->mv, &tp->nmv, &tp->mv_cap, (struct tp_seg){addr, addr + size, size == SMALL_PAGE ? SMALL_PAGE : LARGE_PAGE, create,
                                                                         (uint64_t)r->stream});
    }
    tp->grow_pending = create + 1;
    tp->grow_map = 0;
    return seg_insert(&tp->sv, &tp->nsv, &tp->sv_cap, (struct tp_seg){addr, addr + size, 0, create, (uint64_t)r->stream});
  }
  if (a == TK_ALLOC) {
    uint64_t rounded = size < 512 ? 512 : (size + 511) & ~511ull;
    if (tp->grow_pending) {
      size_t create = tp->grow_pending - 1;
      tp->grow_pending = 0;
      if (tp->plain_fit && (tp->grow_map ? growth_check_mapped(tp, create, addr, size, (uint64_t)r->stream)
                                         : growth_check(tp, create, addr, size, (uint64_t)r->stream)))
        return -1;
    }
    long i = floor_in(tp->sv, tp->nsv, addr);
    if (i >= 0 && addr < tp->sv[i].end) {
      tp->sv[i].live++;
      return map_set(&tp->own, addr, tp->sv[i].create + 1);
    }
    i = floor_in(tp->mv, tp->nmv, addr);
    if (i >= 0 && addr < tp->mv[i].end) {
      if (pages_add(tp, &tp->mv[i], addr, addr + rounded, 1)) return -1;
      return map_set(&tp->own, addr, rounded | OWN_MAPPED);
    }
    return 0;
  }
  if (a == TK_FREE_COMPLETED) {
    uint64_t v = map_get(&tp->own, addr);
    if (!v) return 0;
    map_del(&tp->own, addr);
    if (v & OWN_MAPPED) {
      long i = floor_in(tp->mv, tp->nmv, addr);
      if (i >= 0 && addr < tp->mv[i].end) return pages_add(tp, &tp->mv[i], addr, addr + (v & ~OWN_MAPPED), -1);
      return 0;
    }
    for (size_t i = 0; i < tp->nsv; i++)   /* segments are few */
      if (tp->sv[i].create == v - 1) { if (tp->sv[i].live) tp->sv[i].live--; break; }
  }
  return 0;
}

int tp_survey_end(struct trace_pools *tp) {
  int rc = tp->sv_in_run ? run_end(tp) : 0;
  free(tp->sv); free(tp->mv); free(tp->own.e); free(tp->pages.e); free(tp->freed);
  tp->sv = tp->mv = NULL;
  tp->own = tp->pages = (struct tp_map){NULL, 0, 0};
  tp->freed = NULL;
  tp->nsv = tp->sv_cap = tp->nmv = tp->mv_cap = tp->nfreed = tp->freed_cap = 0;
  tp->sv_in_run = 0;
  tp->grow_pending = 0;
  return rc;
}
