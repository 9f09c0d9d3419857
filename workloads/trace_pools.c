/* trace_pools.c - the pools of a PyTorch snapshot's addresses: rules R1-R6 in trace_pools.h. */
#include "trace_pools.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "event.h"

static int is_create(uint8_t a) { return a == TK_SEGMENT_ALLOC || a == TK_SEGMENT_MAP; }

int tp_scan_segment(struct trace_pools *tp, int device, uint8_t action, int64_t addr, int64_t size, uint64_t run) {
  if (tp->nsev == tp->sev_cap) {
    size_t nc = tp->sev_cap ? 2 * tp->sev_cap : 256;
    struct tp_sev *ns = realloc(tp->sev, nc * sizeof *ns);
    if (!ns) return -1;
    tp->sev = ns;
    tp->sev_cap = nc;
  }
  tp->sev[tp->nsev++] = (struct tp_sev){.addr = addr, .size = size, .run = run, .device = device, .action = action};
  return 0;
}

static int live_cmp(const void *a, const void *b) {
  uint64_t x = ((const struct tp_live *)a)->start, y = ((const struct tp_live *)b)->start;
  return x < y ? -1 : x > y;
}

/* the last interval of v[0..n) starting at or below addr, or -1 */
static long floor_at(const struct tp_live *v, size_t n, uint64_t addr) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (v[mid].start <= addr) lo = mid + 1; else hi = mid;
  }
  return (long)lo - 1;
}

static uint32_t listed_pool(const struct trace_pools *tp, uint64_t addr) {
  long i = floor_at(tp->listed, tp->nlisted, addr);
  return i >= 0 && addr < tp->listed[i].end ? tp->listed[i].pool : 0;
}

/* R1: the device's listed segments by address, their pools numbered */
static int number_pools(struct trace_pools *tp, const struct pk_seg *segs, size_t nsegs, int device) {
  size_t n = 0;
  for (size_t i = 0; i < nsegs; i++) n += segs[i].device == device;
  tp->listed = calloc(n ? n : 1, sizeof *tp->listed);
  int64_t *raw = calloc(n ? n : 1, sizeof *raw);
  if (!tp->listed || !raw) { free(raw); return -1; }
  for (size_t i = 0; i < nsegs; i++) {
    if (segs[i].device != device) continue;
    tp->listed[tp->nlisted] = (struct tp_live){(uint64_t)segs[i].addr, (uint64_t)segs[i].addr + (uint64_t)segs[i].size, 0};
    raw[tp->nlisted++] = segs[i].pool_id;
  }
  /* sort both by address: an index sort through the pool field */
  for (size_t i = 0; i < tp->nlisted; i++) tp->listed[i].pool = (uint32_t)i;
  qsort(tp->listed, tp->nlisted, sizeof *tp->listed, live_cmp);
  tp->pool_ids = calloc(tp->nlisted + 1, sizeof *tp->pool_ids);
  if (!tp->pool_ids) { free(raw); return -1; }
  for (size_t i = 0; i < tp->nlisted; i++) {
    int64_t id = raw[tp->listed[i].pool];
    uint32_t k = 0;
    if (id) {
      for (uint32_t j = 1; j <= tp->npools && !k; j++) if (tp->pool_ids[j] == id) k = j;
      if (!k) tp->pool_ids[k = ++tp->npools] = id;
    }
    tp->listed[i].pool = k;
  }
  free(raw);
  return 0;
}

struct addr_ix { int64_t addr; size_t ix; };
static int addr_ix_cmp(const void *a, const void *b) {
  const struct addr_ix *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* R6 bookkeeping: pool p freed something in release run `run` */
static int note_run(struct trace_pools *tp, uint64_t run, uint32_t pool, size_t *cap) {
  for (size_t i = tp->nruns; i-- > 0 && tp->runs[i].run == run;)
    if (tp->runs[i].pool == pool) return 0;
  if (tp->nruns == *cap) {
    size_t nc = *cap ? 2 * *cap : 16;
    struct tp_run *nr = realloc(tp->runs, nc * sizeof *nr);
    if (!nr) return -1;
    tp->runs = nr;
    *cap = nc;
  }
  tp->runs[tp->nruns++] = (struct tp_run){.run = run, .pool = pool, .general = pool == 0};
  return 0;
}

int tp_resolve(struct trace_pools *tp, const struct pk_seg *segs, size_t nsegs, int device) {
  if (number_pools(tp, segs, nsegs, device)) return -1;
  size_t ncreate = 0, nalloc_free = 0;
  for (size_t i = 0; i < tp->nsev; i++) {
    if (tp->sev[i].device != device) continue;
    ncreate += is_create(tp->sev[i].action);
    nalloc_free += tp->sev[i].action == TK_SEGMENT_ALLOC || tp->sev[i].action == TK_SEGMENT_FREE;
  }
  tp->create_pool = calloc(ncreate ? ncreate : 1, sizeof *tp->create_pool);
  tp->create_final = calloc(ncreate ? ncreate : 1, 1);
  struct addr_ix *ev = calloc(nalloc_free ? nalloc_free : 1, sizeof *ev);
  size_t *create_ix = calloc(tp->nsev ? tp->nsev : 1, sizeof *create_ix);
  if (!tp->create_pool || !tp->create_final || !ev || !create_ix) { free(ev); free(create_ix); return -1; }
  tp->ncreate = ncreate;
  size_t k = 0, m = 0;
  for (size_t i = 0; i < tp->nsev; i++) {
    const struct tp_sev *s = &tp->sev[i];
    if (s->device != device) continue;
    if (is_create(s->action)) create_ix[i] = k++;
    if (s->action == TK_SEGMENT_ALLOC || s->action == TK_SEGMENT_FREE) ev[m++] = (struct addr_ix){s->addr, i};
    if (s->action == TK_SEGMENT_MAP) tp->create_pool[create_ix[i]] = listed_pool(tp, (uint64_t)s->addr);   /* R3 */
  }
  /* R2: the last event at an address, when a segment_alloc, is the listed segment there */
  qsort(ev, m, sizeof *ev, addr_ix_cmp);
  for (size_t j = 0; j < m; j++) {
    if (j + 1 < m && ev[j + 1].addr == ev[j].addr) continue;
    const struct tp_sev *s = &tp->sev[ev[j].ix];
    if (s->action != TK_SEGMENT_ALLOC) continue;
    long li = floor_at(tp->listed, tp->nlisted, (uint64_t)s->addr);
    if (li >= 0 && tp->listed[li].start == (uint64_t)s->addr) {
      tp->create_pool[create_ix[ev[j].ix]] = tp->listed[li].pool;
      tp->create_final[create_ix[ev[j].ix]] = 1;
    }
  }
  free(ev);
  free(create_ix);
  tp->device = device;
  return 0;
}

int tp_finish(struct trace_pools *tp) {
  /* R6: replay the segment events once for the pools each release run frees */
  size_t runs_cap = 0;
  tp_rewind(tp);
  for (size_t i = 0; i < tp->nsev; i++) {
    const struct tp_sev *s = &tp->sev[i];
    if (s->device != tp->device) continue;
    int64_t p = tp_segment(tp, s->action, s->addr, s->size);
    if (p < 0) return -1;
    if (!is_create(s->action) && note_run(tp, s->run, (uint32_t)p, &runs_cap)) return -1;
  }
  tp_rewind(tp);
  return 0;
}

void tp_rewind(struct trace_pools *tp) {
  tp->nlive = 0;
  tp->create_no = 0;
}

static int live_insert(struct trace_pools *tp, uint64_t start, uint64_t end, uint32_t pool) {
  if (tp->nlive == tp->live_cap) {
    size_t nc = tp->live_cap ? 2 * tp->live_cap : 64;
    struct tp_live *nl = realloc(tp->live, nc * sizeof *nl);
    if (!nl) return -1;
    tp->live = nl;
    tp->live_cap = nc;
  }
  size_t at = (size_t)(floor_at(tp->live, tp->nlive, start) + 1);
  memmove(tp->live + at + 1, tp->live + at, (tp->nlive - at) * sizeof *tp->live);
  tp->live[at] = (struct tp_live){start, end, pool};
  tp->nlive++;
  return 0;
}

/* cut [start, end) out of the live intervals; the pool of the first piece cut (0 if none) */
static int64_t live_cut(struct trace_pools *tp, uint64_t start, uint64_t end) {
  int64_t pool = -2;
  long i = floor_at(tp->live, tp->nlive, start);
  if (i < 0 || tp->live[i].end <= start) i++;
  while ((size_t)i < tp->nlive && tp->live[i].start < end) {
    struct tp_live v = tp->live[i];
    if (pool == -2) pool = v.pool;
    if (v.start < start && v.end > end) {          /* a hole in the middle: two pieces */
      tp->live[i].end = start;
      return live_insert(tp, end, v.end, v.pool) ? -1 : pool;
    }
    if (v.start < start) { tp->live[i].end = start; i++; continue; }
    if (v.end > end) { tp->live[i].start = end; break; }
    memmove(tp->live + i, tp->live + i + 1, (tp->nlive - (size_t)i - 1) * sizeof *tp->live);
    tp->nlive--;
  }
  return pool == -2 ? 0 : pool;
}

int64_t tp_segment(struct trace_pools *tp, uint8_t action, int64_t addr, int64_t size) {
  uint64_t a = (uint64_t)addr, e = (uint64_t)addr + (uint64_t)size;
  if (is_create(action)) {
    uint32_t pool = tp->create_no < tp->ncreate ? tp->create_pool[tp->create_no] : 0;
    tp->create_no++;
    if (size <= 0) return 0;
    return live_insert(tp, a, e, pool) ? -1 : 0;
  }
  return size > 0 ? live_cut(tp, a, e) : 0;
}

uint32_t tp_pool_of(const struct trace_pools *tp, uint64_t addr) {
  long i = floor_at(tp->live, tp->nlive, addr);
  if (i >= 0 && addr < tp->live[i].end) return tp->live[i].pool;
  return listed_pool(tp, addr);   /* R5: a segment from before the trace */
}

size_t tp_run_pools(const struct trace_pools *tp, uint64_t run, size_t *count) {
  size_t lo = 0, hi = tp->nruns;   /* runs are in order */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (tp->runs[mid].run < run) lo = mid + 1; else hi = mid;
  }
  size_t n = 0;
  while (lo + n < tp->nruns && tp->runs[lo + n].run == run) n++;
  *count = n;
  return lo;
}

/* ---- R7 -------------------------------------------------------------------------------- */

int tp_survey_wanted(const struct trace_pools *tp) {
  for (size_t k = 0; k < tp->nsev; k++)
    if (tp->sev[k].device == tp->device && tp->sev[k].action == TK_SEGMENT_FREE) return 1;
  return 0;
}

static size_t own_slot(const struct trace_pools *tp, uint64_t addr) {
  return (size_t)((addr * 0x9E3779B97F4A7C15ULL) >> 20) & (tp->own_cap - 1);
}

static int own_put(struct trace_pools *tp, uint64_t addr, size_t seg) {
  if ((tp->own_n + 1) * 2 > tp->own_cap) {
    size_t oc = tp->own_cap, nc = oc ? 2 * oc : 1024;
    struct tp_owner *old = tp->own, *no = calloc(nc, sizeof *no);
    if (!no) return -1;
    tp->own = no;
    tp->own_cap = nc;
    tp->own_n = 0;
    for (size_t i = 0; i < oc; i++)
      if (old[i].seg && own_put(tp, old[i].addr, old[i].seg - 1)) { free(old); return -1; }
    free(old);
  }
  size_t i = own_slot(tp, addr);
  while (tp->own[i].seg && tp->own[i].addr != addr) i = (i + 1) & (tp->own_cap - 1);
  if (!tp->own[i].seg) tp->own_n++;
  tp->own[i] = (struct tp_owner){addr, seg + 1};
  return 0;
}

/* the segment index of live allocation addr, removed; SIZE_MAX if none */
static size_t own_take(struct trace_pools *tp, uint64_t addr) {
  if (!tp->own_cap) return SIZE_MAX;
  size_t i = own_slot(tp, addr);
  while (tp->own[i].seg && tp->own[i].addr != addr) i = (i + 1) & (tp->own_cap - 1);
  if (!tp->own[i].seg) return SIZE_MAX;
  size_t seg = tp->own[i].seg - 1, mask = tp->own_cap - 1, j = i;
  tp->own[i].seg = 0;
  for (;;) {                       /* backward-shift delete */
    j = (j + 1) & mask;
    if (!tp->own[j].seg) break;
    size_t k = own_slot(tp, tp->own[j].addr);
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;   /* j's home is after the hole: stays */
    tp->own[i] = tp->own[j];
    tp->own[j].seg = 0;
    i = j;
  }
  tp->own_n--;
  return seg;
}

static long sv_floor(const struct trace_pools *tp, uint64_t addr) {
  size_t lo = 0, hi = tp->nsv;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (tp->sv[mid].start <= addr) lo = mid + 1; else hi = mid;
  }
  return (long)lo - 1;
}

/* the end of a run: an empty_cache() run that left at least as many wholly free pool-0
 * segments as it freed pool-0 ones freed a private pool's (R7) */
static int sv_run_end(struct trace_pools *tp) {
  tp->sv_in_run = 0;
  uint64_t run = tp->sv_run;
  int ec = run < tp->nruns_ec && ((tp->ec[run / 8] >> (run & 7)) & 1);
  size_t freed0 = 0, left0 = 0, witness = 0;
  for (size_t i = 0; i < tp->nfreed; i++) freed0 += tp->create_pool[tp->freed[i]] == 0;
  if ((ec || !tp->subset_release) && freed0 && freed0 == tp->nfreed && run < tp->nruns_ec) {
    for (size_t i = 0; i < tp->nsv; i++) {
      if (tp->sv[i].live || tp->create_pool[tp->sv[i].create]) continue;
      left0++;
      witness += tp->create_final[tp->sv[i].create];
    }
    if ((witness || left0 >= freed0) && tp->npools < EV_POOL_MAX) {
      tp->ec[run / 8] |= (uint8_t)(1u << (run & 7));   /* emptyCache(P), whatever followed it */
      uint32_t id = ++tp->npools;
      int64_t *ni = realloc(tp->pool_ids, (id + 1) * sizeof *ni);
      if (!ni) return -1;
      tp->pool_ids = ni;
      ni[id] = -1;   /* not in the segments list */
      for (size_t i = 0; i < tp->nfreed; i++) tp->create_pool[tp->freed[i]] = id;
    }
  }
  tp->nfreed = 0;
  return 0;
}

int tp_survey_event(struct trace_pools *tp, const struct pk_rec *r) {
  uint8_t a = r->action;
  if (a == TK_SEGMENT_FREE || a == TK_SEGMENT_UNMAP) {
    if (!tp->sv_in_run) { tp->sv_in_run = 1; tp->nfreed = 0; }
    if (a == TK_SEGMENT_UNMAP) return 0;
    long i = sv_floor(tp, (uint64_t)r->addr);
    if (i < 0 || tp->sv[i].start != (uint64_t)r->addr) return 0;
    if (tp->nfreed == tp->freed_cap) {
      size_t nc = tp->freed_cap ? 2 * tp->freed_cap : 64;
      size_t *nf = realloc(tp->freed, nc * sizeof *nf);
      if (!nf) return -1;
      tp->freed = nf;
      tp->freed_cap = nc;
    }
    tp->freed[tp->nfreed++] = tp->sv[i].create;
    memmove(tp->sv + i, tp->sv + i + 1, (tp->nsv - (size_t)i - 1) * sizeof *tp->sv);
    tp->nsv--;
    return 0;
  }
  if (tp->sv_in_run) {
    if (sv_run_end(tp)) return -1;
    tp->sv_run++;
  }
  if (a == TK_SEGMENT_ALLOC || a == TK_SEGMENT_MAP) {
    size_t create = tp->sv_create++;
    if (a == TK_SEGMENT_MAP || r->size <= 0) return 0;
    if (tp->nsv == tp->sv_cap) {
      size_t nc = tp->sv_cap ? 2 * tp->sv_cap : 64;
      struct tp_seg *ns = realloc(tp->sv, nc * sizeof *ns);
      if (!ns) return -1;
      tp->sv = ns;
      tp->sv_cap = nc;
    }
    size_t at = (size_t)(sv_floor(tp, (uint64_t)r->addr) + 1);
    memmove(tp->sv + at + 1, tp->sv + at, (tp->nsv - at) * sizeof *tp->sv);
    tp->sv[at] = (struct tp_seg){(uint64_t)r->addr, (uint64_t)r->addr + (uint64_t)r->size, 0, create};
    tp->nsv++;
  } else if (a == TK_ALLOC) {
    long i = sv_floor(tp, (uint64_t)r->addr);
    if (i >= 0 && (uint64_t)r->addr < tp->sv[i].end) {
      tp->sv[i].live++;
      return own_put(tp, (uint64_t)r->addr, tp->sv[i].create);
    }
  } else if (a == TK_FREE_COMPLETED) {
    size_t create = own_take(tp, (uint64_t)r->addr);
    if (create == SIZE_MAX) return 0;
    for (size_t i = 0; i < tp->nsv; i++)   /* segments are few */
      if (tp->sv[i].create == create) { if (tp->sv[i].live) tp->sv[i].live--; break; }
  }
  return 0;
}

int tp_survey_end(struct trace_pools *tp) {
  int rc = tp->sv_in_run ? sv_run_end(tp) : 0;
  free(tp->sv); free(tp->own); free(tp->freed);
  tp->sv = NULL; tp->own = NULL; tp->freed = NULL;
  tp->nsv = tp->sv_cap = tp->own_cap = tp->own_n = tp->nfreed = tp->freed_cap = 0;
  return rc;
}

void tp_free(struct trace_pools *tp) {
  free(tp->create_final);
  free(tp->sv);
  free(tp->own);
  free(tp->freed);
  free(tp->listed);
  free(tp->pool_ids);
  free(tp->sev);
  free(tp->create_pool);
  free(tp->runs);
  free(tp->live);
  memset(tp, 0, sizeof *tp);
}
