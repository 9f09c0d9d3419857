/* trace_pools.c - the pools of a PyTorch snapshot's addresses: rules R1-R6 in trace_pools.h
 * (R7's pass is trace_survey.c). */
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
    tp->listed[tp->nlisted] = (struct tp_live){(uint64_t)segs[i].addr, (uint64_t)segs[i].addr + (uint64_t)segs[i].size, 0,
                                               (uint64_t)segs[i].stream};
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
  tp->nlisted_pools = tp->npools;
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
  tp->live[at] = (struct tp_live){start, end, pool, 0};
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

void tp_free(struct trace_pools *tp) {
  tp_survey_end(tp);
  free(tp->create_final);
  free(tp->listed);
  free(tp->pool_ids);
  free(tp->sev);
  free(tp->create_pool);
  free(tp->runs);
  free(tp->live);
  memset(tp, 0, sizeof *tp);
}
