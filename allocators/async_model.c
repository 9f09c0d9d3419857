/* async_model.c - the model of the driver's stream-ordered pool behind `async` on sim
 * (rules and their probes: async_model.h, docs/async-pool.md). Free ranges are kept twice:
 * in one address-ordered set (coalescing, the last range at the top, trimming) and in a
 * size-class index per owner stream (a bitmap of non-empty classes and, per class, a set
 * ordered by address), so a request costs two bitmap scans and a few treap steps. */
#include "async_model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ordset.h"

#define MIN_LEVEL 9u                   /* 512 B: the smallest range */
#define LEVELS 40u                     /* 2^9 .. 2^48 */
#define MAX_SUB 16u
#define NCLS (LEVELS * MAX_SUB)
#define NWORDS ((NCLS + 63) / 64)

struct owner;

struct frange {
  struct ordnode by_addr, by_class;
  uint64_t addr, size;
  struct owner *own;
  unsigned cls;
};

struct owner {
  uint64_t stream;
  int shared;                          /* ranges every stream may take (after a sync) */
  uint64_t bits[NWORDS];               /* classes with a range */
  struct ordset cls[NCLS];             /* per class, by address */
};

struct amodel {
  struct device *dev;
  struct amodel_config cfg;
  uint64_t base, va_size, top;         /* top: end of the used part of the range */
  uint64_t nchunks, chunks_hw;         /* chunks in the range; one past the highest mapped */
  uint64_t *handle;
  unsigned char *present;
  uint64_t mapped;                     /* chunks mapped now */
  uint64_t live;                       /* bytes in blocks (rounded) */
  struct ordset by_addr;
  struct owner **owners;               /* owners[0] is the shared one */
  size_t nowners;
  struct owner *last;
  struct frange *spare;
};

static inline int addr_cmp(const struct ordnode *x, const struct ordnode *y) {
  uint64_t a = ORD_ENTRY(x, struct frange, by_addr)->addr, b = ORD_ENTRY(y, struct frange, by_addr)->addr;
  return a < b ? -1 : a > b;
}
static inline int cls_cmp(const struct ordnode *x, const struct ordnode *y) {
  uint64_t a = ORD_ENTRY(x, struct frange, by_class)->addr, b = ORD_ENTRY(y, struct frange, by_class)->addr;
  return a < b ? -1 : a > b;
}
ORDSET_TYPED(raddr, addr_cmp)
ORDSET_TYPED(rcls, cls_cmp)

static inline uint64_t round_req(uint64_t size) {
  if (!size) size = 1;
  return (size + AMODEL_ALIGN - 1) & ~(AMODEL_ALIGN - 1);
}

static inline unsigned log2u(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }

unsigned amodel_class_of(uint64_t len, unsigned subclasses) {
  unsigned fl = log2u(len ? len : 1), sh = log2u(subclasses);
  if (fl < MIN_LEVEL) return 0;
  if (fl >= MIN_LEVEL + LEVELS) return LEVELS * subclasses - 1;
  return (fl - MIN_LEVEL) * subclasses + (unsigned)((len >> (fl - sh)) & (subclasses - 1));
}

unsigned amodel_class_needed(uint64_t sz, unsigned subclasses) {
  unsigned fl = log2u(sz ? sz : 1);
  uint64_t step = (1ull << fl) >> log2u(subclasses);
  if (!step) step = 1;
  return amodel_class_of((sz + step - 1) / step * step, subclasses);
}

/* ---- records and owners --------------------------------------------------------------- */

static struct frange *range_new(struct amodel *m) {
  struct frange *r = m->spare;
  if (r) m->spare = (struct frange *)r->by_addr.left;
  else if (!(r = malloc(sizeof *r))) return NULL;
  memset(r, 0, sizeof *r);
  return r;
}

static void range_drop(struct amodel *m, struct frange *r) {
  r->by_addr.left = (struct ordnode *)m->spare;
  m->spare = r;
}

static struct owner *owner_new(uint64_t stream, int shared) {
  struct owner *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->stream = stream;
  o->shared = shared;
  for (unsigned i = 0; i < NCLS; i++) ordset_init(&o->cls[i], cls_cmp);
  return o;
}

/* the owner of ranges freed on this stream (NULL: out of host memory) */
static struct owner *owner_for(struct amodel *m, uint64_t stream) {
  if (m->last && m->last->stream == stream) return m->last;
  for (size_t i = 1; i < m->nowners; i++)
    if (m->owners[i]->stream == stream) return m->last = m->owners[i];
  struct owner **grown = realloc(m->owners, (m->nowners + 1) * sizeof *grown);
  if (!grown) return NULL;
  m->owners = grown;
  if (!(grown[m->nowners] = owner_new(stream, 0))) return NULL;
  return m->last = grown[m->nowners++];
}

static void index_add(struct amodel *m, struct frange *r) {
  r->cls = amodel_class_of(r->size, m->cfg.subclasses);
  rcls_insert(&r->own->cls[r->cls], &r->by_class);
  r->own->bits[r->cls >> 6] |= 1ull << (r->cls & 63);
}

static void index_del(struct frange *r) {
  struct ordset *s = &r->own->cls[r->cls];
  ordset_erase_inline(s, &r->by_class);
  if (!s->count) r->own->bits[r->cls >> 6] &= ~(1ull << (r->cls & 63));
}

/* the lowest-addressed range of the first non-empty class >= need */
static struct frange *owner_search(const struct owner *o, unsigned need) {
  unsigned w = need >> 6;
  uint64_t word = o->bits[w] & (~0ull << (need & 63));
  while (!word) {
    if (++w >= NWORDS) return NULL;
    word = o->bits[w];
  }
  unsigned c = w * 64 + (unsigned)__builtin_ctzll(word);
  return ORD_ENTRY(ordset_first_inline(&o->cls[c]), struct frange, by_class);
}

/* the lowest-addressed range of class c that holds sz bytes: the ranges of a request's own
 * class may be smaller than it, so they are walked in address order */
static struct frange *class_fit(const struct owner *o, unsigned c, uint64_t sz) {
  if (!(o->bits[c >> 6] & (1ull << (c & 63)))) return NULL;
  for (struct ordnode *n = ordset_first_inline(&o->cls[c]); n; n = ordset_next_inline(n)) {
    struct frange *r = ORD_ENTRY(n, struct frange, by_class);
    if (r->size >= sz) return r;
  }
  return NULL;
}

static int chunk_free(const struct amodel *m, uint64_t c);

/* ---- chunks --------------------------------------------------------------------------- */

static int map_chunk(struct amodel *m, uint64_t c) {
  uint64_t g = m->cfg.granule, h;
  int rc = dev_phys_create(m->dev, g, &h);
  if (rc) return rc;
  if ((rc = dev_map(m->dev, m->base + c * g, g, h))) { dev_phys_release(m->dev, h); return rc; }
  m->handle[c] = h;
  m->present[c] = 1;
  m->mapped++;
  if (c + 1 > m->chunks_hw) m->chunks_hw = c + 1;
  return 0;
}

static void unmap_chunk(struct amodel *m, uint64_t c) {
  dev_unmap(m->dev, m->base + c * m->cfg.granule, m->cfg.granule);
  dev_phys_release(m->dev, m->handle[c]);
  m->present[c] = 0;
  m->mapped--;
}

/* every chunk [lo, hi) touches is mapped; on failure none that this call mapped stays */
static int ensure_mapped(struct amodel *m, uint64_t lo, uint64_t hi) {
  uint64_t first = (lo - m->base) / m->cfg.granule, last = (hi - 1 - m->base) / m->cfg.granule;
  for (uint64_t c = first; c <= last; c++) {
    if (m->present[c]) continue;
    if (m->cfg.recycle)   /* the highest wholly free chunk outside [first, last] gives its page */
      for (uint64_t k = m->chunks_hw; k-- > 0;)
        if (m->present[k] == 1 && (k < first || k > last) && chunk_free(m, k)) { unmap_chunk(m, k); break; }
    int rc = map_chunk(m, c);
    if (rc) {
      /* the chunks mapped by this call are marked 2 below; undo them */
      for (uint64_t k = first; k < c; k++)
        if (m->present[k] == 2) unmap_chunk(m, k);
      return rc;
    }
    m->present[c] = 2;
  }
  for (uint64_t c = first; c <= last; c++) m->present[c] = 1;
  return 0;
}

/* ---- allocation ----------------------------------------------------------------------- */

static void take_front(struct amodel *m, struct frange *r, uint64_t sz) {
  index_del(r);
  if (r->size == sz) {
    ordset_erase_inline(&m->by_addr, &r->by_addr);
    range_drop(m, r);
    return;
  }
  r->addr += sz;          /* stays between its neighbours: the address order holds */
  r->size -= sz;
  index_add(m, r);
}

int amodel_alloc(struct amodel *m, uint64_t size, uint64_t stream, uint64_t *addr) {
  uint64_t sz = round_req(size), g = m->cfg.granule;
  unsigned sub = m->cfg.subclasses, need = amodel_class_needed(sz, sub);
  struct owner *o = owner_for(m, stream), *sh = m->owners[0];
  if (!o) { snprintf(m->dev->err, FB_ERRLEN, "async: out of host memory"); return -1; }
  struct frange *best = owner_search(o, need), *other = owner_search(sh, need);
  if (other && (!best || other->cls < best->cls || (other->cls == best->cls && other->addr < best->addr))) best = other;
  /* none surely fits: a range of the request's own class may (probe async_place,
   * place_coalesce: 13 MiB took a 13 MiB hole with a 256 MiB tail free beyond it) */
  unsigned own = amodel_class_of(sz, sub);
  if (!best && m->cfg.own_class && own < need) {
    struct frange *f = class_fit(o, own, sz), *s = class_fit(sh, own, sz);
    best = s && (!f || s->addr < f->addr) ? s : f;
  }
  /* the unused end of the last mapped chunk competes as a range of its own class */
  uint64_t tail = (m->top - m->base + g - 1) / g * g + m->base - m->top;
  int at_top = !best;
  if (best && tail >= sz) {
    unsigned tc = amodel_class_of(tail, sub);
    if (tc >= need && tc < best->cls) at_top = 1;
  }
  int rc;
  if (!at_top) {
    if ((rc = ensure_mapped(m, best->addr, best->addr + sz))) return rc;
    *addr = best->addr;
    take_front(m, best, sz);
  } else {
    /* grow: from the last free range when it reaches the top and this stream may take it */
    struct ordnode *ln = ordset_last_inline(&m->by_addr);
    struct frange *last = ln ? ORD_ENTRY(ln, struct frange, by_addr) : NULL;
    if (last && (last->addr + last->size != m->top || (last->own != o && !last->own->shared))) last = NULL;
    uint64_t a = last ? last->addr : m->top;
    if (a + sz > m->base + m->va_size || a + sz < a) return FB_OOM;
    if ((rc = ensure_mapped(m, a, a + sz))) return rc;
    if (last) {
      index_del(last);
      ordset_erase_inline(&m->by_addr, &last->by_addr);
      range_drop(m, last);
    }
    m->top = a + sz;      /* may be below the old top: what lay beyond is unused again */
    *addr = a;
  }
  m->live += sz;
  return 0;
}

/* ---- free, sync, trim ----------------------------------------------------------------- */

static struct frange *next_range(struct frange *r) {
  struct ordnode *n = ordset_next_inline(&r->by_addr);
  return n ? ORD_ENTRY(n, struct frange, by_addr) : NULL;
}

static struct frange *range_floor(const struct amodel *m, uint64_t addr) {
  struct frange k = {.addr = addr};
  struct ordnode *n = raddr_floor(&m->by_addr, &k.by_addr);
  return n ? ORD_ENTRY(n, struct frange, by_addr) : NULL;
}

void amodel_free(struct amodel *m, uint64_t addr, uint64_t size, uint64_t stream) {
  uint64_t sz = round_req(size);
  m->live -= sz;
  /* a block other streams used too (record_stream) goes back on PyTorch's unifying stream,
   * on which nothing allocates: it is reusable by the driver's opportunistic reuse alone,
   * i.e. by every stream once the GPU has passed the streams' work, which it has when the
   * trace's free comes (the native allocator's free_completed) */
  struct owner *o = stream & DEV_STREAM_RECORDED ? m->owners[0] : owner_for(m, stream);
  if (!o) o = m->owners[0];      /* no host memory for a new owner: reusable by all */
  struct frange *prev = range_floor(m, addr);
  struct frange *next = prev ? next_range(prev) : NULL;
  if (!prev) {
    struct ordnode *f = ordset_first_inline(&m->by_addr);
    next = f ? ORD_ENTRY(f, struct frange, by_addr) : NULL;
  }
  int join_prev = prev && prev->own == o && prev->addr + prev->size == addr;
  int join_next = next && next->own == o && addr + sz == next->addr;
  if (join_prev) {
    index_del(prev);
    prev->size += sz;
    if (join_next) {
      index_del(next);
      prev->size += next->size;
      ordset_erase_inline(&m->by_addr, &next->by_addr);
      range_drop(m, next);
    }
    index_add(m, prev);
  } else if (join_next) {
    index_del(next);
    next->addr = addr;    /* still after prev: the address order holds */
    next->size += sz;
    index_add(m, next);
  } else {
    struct frange *r = range_new(m);
    if (!r) { fprintf(stderr, "fragbench: async: out of host memory\n"); exit(1); }
    r->addr = addr;
    r->size = sz;
    r->own = o;
    raddr_insert(&m->by_addr, &r->by_addr);
    index_add(m, r);
  }
  if (m->cfg.release_threshold != UINT64_MAX && m->mapped * m->cfg.granule > m->cfg.release_threshold)
    amodel_trim(m, m->cfg.release_threshold);
}

/* a synchronization: every pending free has completed, so every range is shared and
 * coalesces with its neighbours; the range that reaches the top becomes unused space */
static void synchronize(struct amodel *m) {
  struct owner *sh = m->owners[0];
  struct frange *prev = NULL;
  for (struct ordnode *n = ordset_first_inline(&m->by_addr); n;) {
    struct frange *r = ORD_ENTRY(n, struct frange, by_addr);
    n = ordset_next_inline(n);
    index_del(r);
    r->own = sh;
    if (prev && prev->addr + prev->size == r->addr) {
      prev->size += r->size;
      ordset_erase_inline(&m->by_addr, &r->by_addr);
      range_drop(m, r);
      continue;
    }
    if (prev) index_add(m, prev);
    prev = r;
  }
  if (!prev) return;
  if (prev->addr + prev->size == m->top) {
    m->top = prev->addr;
    ordset_erase_inline(&m->by_addr, &prev->by_addr);
    range_drop(m, prev);
  } else {
    index_add(m, prev);
  }
}

static int chunk_free(const struct amodel *m, uint64_t c) {
  uint64_t lo = m->base + c * m->cfg.granule, hi = lo + m->cfg.granule;
  if (lo >= m->top) return 1;
  const struct frange *r = range_floor(m, lo);
  return r && r->addr + r->size >= hi;
}

void amodel_trim(struct amodel *m, uint64_t keep) {
  synchronize(m);
  for (uint64_t c = m->chunks_hw; c-- > 0 && m->mapped * m->cfg.granule > keep;)
    if (m->present[c] && chunk_free(m, c)) unmap_chunk(m, c);
  while (m->chunks_hw && !m->present[m->chunks_hw - 1]) m->chunks_hw--;
}

/* ---- queries, check, lifetime ---------------------------------------------------------- */

uint64_t amodel_reserved(const struct amodel *m) { return m->mapped * m->cfg.granule; }

/* the longest run of mapped bytes in [lo, hi): free space is reserved only where its chunk
 * is mapped (a trim unmaps wholly free chunks, and their ranges stay free) */
static uint64_t mapped_run(const struct amodel *m, uint64_t lo, uint64_t hi) {
  uint64_t g = m->cfg.granule, best = 0, run = 0;
  for (uint64_t at = lo; at < hi;) {
    uint64_t c = (at - m->base) / g, end = m->base + (c + 1) * g;
    if (end > hi) end = hi;
    if (c < m->chunks_hw && m->present[c]) { run += end - at; if (run > best) best = run; }
    else run = 0;
    at = end;
  }
  return best;
}

void amodel_query(const struct amodel *m, uint64_t *largest_free, uint64_t *free_inside) {
  uint64_t g = m->cfg.granule, largest = m->chunks_hw * g + m->base > m->top ? mapped_run(m, m->top, m->chunks_hw * g + m->base) : 0;
  for (struct ordnode *n = ordset_first_inline(&m->by_addr); n; n = ordset_next_inline(n)) {
    const struct frange *r = ORD_ENTRY(n, struct frange, by_addr);
    if (r->size > largest) {
      uint64_t run = mapped_run(m, r->addr, r->addr + r->size);
      if (run > largest) largest = run;
    }
  }
  uint64_t res = amodel_reserved(m);
  *largest_free = largest;
  *free_inside = res > m->live ? res - m->live : 0;
}

int amodel_check(const struct amodel *m, char *err) {
  const struct frange *prev = NULL;
  size_t indexed = 0;
  for (size_t i = 0; i < m->nowners; i++)
    for (unsigned c = 0; c < NCLS; c++) {
      indexed += m->owners[i]->cls[c].count;
      if (!!m->owners[i]->cls[c].count != !!(m->owners[i]->bits[c >> 6] & (1ull << (c & 63)))) {
        snprintf(err, FB_ERRLEN, "async model: class %u of stream %llu: bitmap disagrees with the set", c,
                 (unsigned long long)m->owners[i]->stream);
        return -1;
      }
    }
  if (indexed != m->by_addr.count) {
    snprintf(err, FB_ERRLEN, "async model: %zu ranges by address, %zu in the class index", m->by_addr.count, indexed);
    return -1;
  }
  for (struct ordnode *n = ordset_first_inline(&m->by_addr); n; n = ordset_next_inline(n)) {
    const struct frange *r = ORD_ENTRY(n, struct frange, by_addr);
    if (!r->size || r->addr % AMODEL_ALIGN || r->size % AMODEL_ALIGN || r->addr < m->base || r->addr + r->size > m->top
        || r->cls != amodel_class_of(r->size, m->cfg.subclasses)
        || (prev && (prev->addr + prev->size > r->addr || (prev->addr + prev->size == r->addr && prev->own == r->own)))) {
      snprintf(err, FB_ERRLEN, "async model: free range %#llx+%llu is misplaced (top %#llx)", (unsigned long long)r->addr,
               (unsigned long long)r->size, (unsigned long long)m->top);
      return -1;
    }
    prev = r;
  }
  return 0;
}

int amodel_create(struct amodel **out, struct device *d, const struct amodel_config *cfg, char *err) {
  unsigned sub = cfg->subclasses;
  if (!cfg->granule || cfg->granule % DEV_PAGE) {
    snprintf(err, FB_ERRLEN, "async: granule=%llu is not a multiple of 2 MiB", (unsigned long long)cfg->granule);
    return -1;
  }
  if (sub < 1 || sub > MAX_SUB || (sub & (sub - 1))) {
    snprintf(err, FB_ERRLEN, "async: subclasses=%u: expected 1, 2, 4, 8 or 16", sub);
    return -1;
  }
  struct amodel *m = calloc(1, sizeof *m);
  if (!m) { snprintf(err, FB_ERRLEN, "async: out of host memory"); return -1; }
  m->dev = d;
  m->cfg = *cfg;
  ordset_init(&m->by_addr, addr_cmp);
  uint64_t want = d->total + d->total / 8;
  m->nchunks = (want + cfg->granule - 1) / cfg->granule;
  m->va_size = m->nchunks * cfg->granule;
  m->handle = calloc(m->nchunks, sizeof *m->handle);
  m->present = calloc(m->nchunks, 1);
  m->owners = calloc(1, sizeof *m->owners);
  if (m->owners) { m->owners[0] = owner_new(UINT64_MAX, 1); m->nowners = m->owners[0] ? 1 : 0; }
  if (!m->handle || !m->present || !m->nowners) {
    amodel_destroy(m);
    snprintf(err, FB_ERRLEN, "async: out of host memory");
    return -1;
  }
  int rc = dev_va_reserve(d, m->va_size, &m->base);
  if (rc) {
    snprintf(err, FB_ERRLEN, "async: cannot reserve %llu bytes of address space: %.400s", (unsigned long long)m->va_size, d->err);
    m->va_size = 0;
    amodel_destroy(m);
    return -1;
  }
  m->top = m->base;
  *out = m;
  return 0;
}

void amodel_destroy(struct amodel *m) {
  if (!m) return;
  for (uint64_t c = 0; c < m->chunks_hw; c++)
    if (m->present[c]) unmap_chunk(m, c);
  if (m->va_size) dev_va_release(m->dev, m->base, m->va_size);
  for (struct ordnode *n; (n = ordset_first_inline(&m->by_addr));) {
    ordset_erase_inline(&m->by_addr, n);
    free(ORD_ENTRY(n, struct frange, by_addr));
  }
  while (m->spare) {
    struct frange *r = m->spare;
    m->spare = (struct frange *)r->by_addr.left;
    free(r);
  }
  for (size_t i = 0; i < m->nowners; i++) free(m->owners[i]);
  free(m->owners);
  free(m->handle);
  free(m->present);
  free(m);
}
