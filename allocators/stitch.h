/* stitch.h - internal structures of the `stitch` strategy (allocators/stitch*.c), after
 * GMLake (ASPLOS'24): virtual memory stitching.
 *
 * Physical memory is a pool of 2 MiB pages, in physical handles of one page each (GMLake's
 * choice; handle_max= makes them up to that size, a growth's pages side by side in as few
 * handles as it allows: stitch_maps.c). The driver maps a handle only whole, so what is
 * stitched is whole free handles: larger handles cost fewer driver calls and stitch less.
 * Every page
 * has a home: a primitive range (PRIM), one large VA reservation per stream in which pages
 * are mapped on demand (as PyTorch's expandable segments do) and blocks are split and
 * merged at 512 B, so neighbouring blocks share pages and a request pays no 2 MiB
 * rounding. When no free block fits a request but enough whole free pages exist, those
 * pages are mapped a second time, at consecutive offsets of a new VA range: a stitched
 * range (STITCH) - before any new page is created. Where the request ends inside a page,
 * that part comes from the free end of a page a block at home has begun (a head run),
 * so a stitched block pays no rounding either. Its pages are lent to it (LENT at
 * home) while it holds a block and, once wholly free, until they are wanted elsewhere;
 * then they go back home and the range stays mapped as a view (GMLake's fused block):
 * it serves a request of its size again, without mapping, whenever all its pages are
 * free at home, or after remapping only those that are not. Wholly free stitched ranges
 * are an LRU cache bounded by max_stitched. Small requests (<= 1 MiB) are suballocated from single
 * lent pages (SMALL ranges, no new mapping) with best fit and splitting.
 *
 * Blocks (struct sblock) tile each range in address order:
 *   FREE      in its pool's free set (prim_free, stitch_free or small_free)
 *   ALLOC     handed out
 *   LENT      PRIM only: whole pages lent to a STITCH or SMALL range (the borrower)
 *   UNMAPPED  PRIM only: VA without pages (in the range's hole set)
 * Invariant: a page of a PRIM range that holds no ALLOC byte and is not lent is a whole
 * page inside one FREE block; so the free pages are exactly the whole pages of FREE
 * PRIM blocks (prim_free_pages), plus the pages of wholly free SMALL and STITCH ranges,
 * which are given back on demand. A PRIM range counts, per page, the ALLOC and LENT blocks on it
 * (busy) and points at each FREE block from its first whole page (head): a view's pages
 * are free when none is busy, and their FREE block is found by walking back to a head. */
#ifndef FB_STITCH_H
#define FB_STITCH_H
#include <stdint.h>
#include <string.h>
#include "allocator.h"
#include "ordset.h"

#define ST_PAGE DEV_PAGE
#define ST_SMALL_MAX (1ull << 20)   /* largest small request (PyTorch kSmallSize) */
#define ST_MIN_BLOCK 512ull         /* rounding and smallest split remainder (kMinBlockSize) */
#define ST_PIN_MIN_PAGES 32     /* a view keeps a lone head page lent only when it has this many pages */
#define ST_PARTIAL_RELEASE 16       /* pages a view gives back in part; asked for more, it gives all */

enum sblock_kind { BK_FREE, BK_ALLOC, BK_LENT, BK_UNMAPPED };
enum srange_kind { RK_PRIM, RK_STITCH, RK_SMALL };

struct srange;
struct spool;

struct sblock {
  struct ordnode node;        /* FREE: in its free set; UNMAPPED: in its range's holes */
  uint64_t addr, size;
  struct srange *r;
  struct sblock *prev, *next; /* address order within r */
  struct srange *borrower;    /* LENT: the range holding these pages */
  uint8_t kind;
  uint16_t bin;               /* FREE: its bin in its free set */
};

/* A set of free blocks in best-fit order, binned by size (stitch_fset.h, stitch_fset.c). */
#define FS_SUB_BITS 4
#define FS_SUB (1u << FS_SUB_BITS)
#define FS_NBINS (FS_SUB + (55 - FS_SUB_BITS) * FS_SUB)
#define FS_WORDS ((FS_NBINS + 63) / 64)
struct fset {
  size_t count;
  uint32_t words;             /* bit w: nonempty[w] has a bit set */
  uint64_t nonempty[FS_WORDS];
  struct ordset bins[FS_NBINS];
};

/* A run of a stitched or small range: the pages of a primitive range from addr; only a
 * stitched range's first run may start inside a page (its head: the free end of a page
 * whose start a block at home holds), the others are whole pages. */
struct srun {
  struct srange *home;
  uint64_t addr, npages;      /* first byte lent; pages it touches */
  struct sblock *lent;        /* the LENT block at home while the range holds its pages */
};

struct srange {
  uint8_t kind;
  struct spool *pool;         /* the stream it serves */
  struct fset *free;          /* where its FREE blocks are: its pool's prim_free, stitch_free or small_free */
  uint64_t va, size;          /* where its blocks lie: PRIM the VA reservation; STITCH the VA
                                 reservation from `lead` bytes into its first page (which it may
                                 share with a block at home); SMALL its page's home address */
  uint64_t vbase;             /* STITCH: the VA reservation (npages pages) */
  struct sblock *first;
  uint64_t nbusy;             /* ALLOC blocks, plus LENT blocks in a PRIM range */
  /* PRIM, by page index: the handles, which are mapped, how many ALLOC and LENT blocks
   * lie on each, and the FREE block whose first whole page it is */
  uint64_t *handle;
  uint32_t *hoff;             /* PRIM: the page's index in its handle (0: the handle's first page) */
  uint32_t *hlen;             /* PRIM: the pages of the page's handle */
  uint8_t *mapped;
  uint8_t *busy;
  struct sblock **head;
  uint64_t npages;            /* PRIM: pages the reservation spans; STITCH/SMALL: pages mapped */
  uint64_t nmapped;           /* PRIM: pages mapped */
  struct ordset holes;        /* PRIM: UNMAPPED blocks by address */
  struct srange *next_prim;   /* PRIM: the pool's list */
  /* STITCH/SMALL: where its pages live, in page order */
  uint32_t *plen;             /* STITCH: by slot, the length in pages of the mapping that starts there (0: none) */
  struct srun *runs;          /* &one_run when it has one run, else runs_mem */
  struct srun one_run;
  struct srun *runs_mem;      /* owned, runs_cap runs; kept when the range is recycled */
  uint32_t runs_cap;
  uint32_t nruns;
  uint32_t nlent;             /* runs [0, nlent) are lent to it: all but while a view has given
                                 some back (the last ones) */
  uint32_t nuse;              /* in use: runs [0, nuse) hold its blocks; fewer than nruns while it
                                 serves from its front (runs [nuse, nlent) then wait lent, idle,
                                 given back on demand) */
  /* wholly free (cached): SMALL in its pool's list; STITCH in the global LRU list, and
   * once it has given pages back, in its pool's views */
  struct ordnode vnode;
  struct srange *lru_prev, *lru_next;
  int cached;
  uint8_t keep_whole;         /* STITCH: wanted whole by a request of its size; not lent by its front */
  uint8_t pinned;             /* STITCH, cached: holds only a lone head page (counted in stitch.pinned) */
  /* STITCH, while in the LRU list with pages lent to it (nlent > 0): in the holding list,
   * which keeps the LRU order (reclaim walks it) */
  struct srange *hold_prev, *hold_next;
  int holding;
  /* every range, for destroy and check */
  struct srange *all_prev, *all_next;
};

struct rlist { struct srange *head, *tail; uint64_t count, pages; };

/* the whole free pages a wholly free stitched range gives back home (its head page, if it
 * has one, stays busy there) */
static inline uint64_t whole_pages_of(const struct srange *r) { return r->npages - (r->va != r->vbase); }

/* a stitched range's size with all its pages (its blocks span fewer while it serves from
 * its front), and the pages of it a block of r bytes at its start needs */
static inline uint64_t view_full_size(const struct srange *s) { return s->npages * ST_PAGE - (s->va - s->vbase); }
static inline uint64_t view_prefix_pages(const struct srange *s, uint64_t r) { return (s->va - s->vbase + r + ST_PAGE - 1) / ST_PAGE; }

struct spool {                /* one per stream */
  uint64_t stream;
  struct fset prim_free, stitch_free, small_free;     /* FREE blocks by (size, addr) */
  struct ordset views;        /* released stitched ranges by (size, va) */
  struct ordset fronts;       /* stitched ranges serving from their front, by (full size, va) */
  uint64_t prim_free_pages;   /* whole pages inside FREE blocks of PRIM ranges */
  uint64_t prim_handle_pages; /* of those, the pages of whole handles: what can be stitched */
  struct srange *prims;
  struct rlist small_cached;  /* wholly free SMALL ranges */
};

struct stitch {
  struct device *dev;
  struct spool **pools;
  int npools, cap_pools;
  struct spool *last_pool;
  struct rlist views;         /* wholly free stitched ranges, least recently used first */
  struct srange *hold_head, *hold_tail;   /* those of them still holding pages, in the same order */
  struct srange *spare_ranges;            /* recycled range records (linked by all_next) */
  uint64_t holding_pages;     /* whole pages lent to wholly free stitched ranges, and idle ones */
  uint64_t pinned;            /* views holding only a lone head page: at most 1% of held memory */
  struct srange *all;
  struct sblock *spare;       /* recycled block nodes: no malloc on cache hits */
  struct sb_slab *slabs;      /* where the nodes live (stitch_blocks.c) */
  struct srun *run_buf;       /* where a stitched range's runs are gathered (run_cap of them) */
  uint64_t run_cap;
  uint8_t *page_buf;          /* stitch_views_repair's marks, page_cap of them */
  uint64_t page_cap;
  uint64_t max_stitched, large_round, prim_va;
  uint64_t handle_pages;      /* most pages per physical handle (0: one handle per growth) */
  int grow_whole;             /* a growth is a whole number of handle_pages (grow_whole=1) */
  uint64_t held;              /* bytes of pages created and not released */
  uint64_t live_bytes;        /* bytes in ALLOC blocks */
  uint64_t cache_flushes;
  uint64_t stitched_built, stitched_reused, stitched_repaired;  /* diagnostics */
};

/* ---- shared functions, grouped by the file that defines them; each is named after that
 * file (stitch_<file>_...), as mimalloc's internal.h does. File-local helpers and this
 * header's inline helpers have no prefix, except the free sets' (stitch_fset_*, inline in
 * stitch_fset.h and finished in stitch_fset.c). ---- */

/* stitch_blocks.c: block nodes and the block orders (split and merge: inline, below) */
struct sblock *stitch_blocks_alloc_node(struct stitch *st);             /* a new (zeroed) node when none is spare */
void stitch_blocks_free_all(struct stitch *st);                         /* every node (destroy) */
void stitch_blocks_hole_coalesce_insert(struct stitch *st, struct sblock *b);  /* free_coalesce_insert for UNMAPPED */
int stitch_blocks_cmp_size(const struct ordnode *a, const struct ordnode *b);
int stitch_blocks_cmp_addr(const struct ordnode *a, const struct ordnode *b);

/* stitch_fset.c: free sets' setup and largest block (the rest inline in stitch_fset.h) */
void stitch_fset_init(struct fset *fs);
struct sblock *stitch_fset_last(const struct fset *fs);

/* stitch_maps.c: handles and mappings */
/* create and map pages [first, first+k) of PRIM r (in handles of at most handle_pages);
 * all or nothing */
int stitch_maps_prim_map_new(struct stitch *st, struct srange *r, uint64_t first, uint64_t k);
/* unmap and release the handles of pages [ha, hb) (whole handles) */
void stitch_maps_prim_unmap_release(struct stitch *st, struct srange *r, uint64_t ha, uint64_t hb);
/* map slots [from, to) of stitched range s (its runs' pages, whole handles) a handle per
 * call; on an error what this call mapped is unmapped again */
int stitch_maps_view_map_span(struct stitch *st, struct srange *s, uint64_t from, uint64_t to);
/* unmap the pieces that start in slots [from, to) */
void stitch_maps_view_unmap_span(struct stitch *st, struct srange *s, uint64_t from, uint64_t to);
/* unmap every piece holding a slot marked in fresh, and mark all its slots */
void stitch_maps_view_unmap_pieces_of(struct stitch *st, struct srange *s, uint8_t *fresh);

/* stitch_ranges.c: pools, ranges, pages, lending, stitching, small ranges, reclaim, release */
struct spool *stitch_ranges_pool_find(struct stitch *st, uint64_t stream);   /* pool_get's search; creates the pool if new */
uint64_t stitch_ranges_pages_free_total(const struct stitch *st);          /* prim_handle_pages over all pools: free pages that can be stitched */
uint64_t stitch_ranges_pages_avail_total(const struct stitch *st);         /* plus wholly free small and stitched ranges' */
int stitch_ranges_grow(struct stitch *st, struct spool *p, uint64_t want_bytes, uint64_t shortfall, int *extended);
struct sblock *stitch_ranges_head_fragment(struct spool *p, uint64_t h);   /* a free block whose first page's free end holds h bytes */
/* with head > 0, f = stitch_ranges_head_fragment(p, head) (not NULL) */
int stitch_ranges_build_stitched(struct stitch *st, struct spool *p, uint64_t npages, uint64_t head, struct sblock *f, struct srange **out);
int stitch_ranges_build_small(struct stitch *st, struct spool *p, struct srange **out);
uint64_t stitch_ranges_reclaim_one(struct stitch *st, struct spool *own, uint64_t k);
void stitch_ranges_release_free_pages(struct stitch *st);
void stitch_ranges_destroy(struct stitch *st);
/* stitch_ranges.c, for stitch_views.c: range records, scratch buffers, lending */
void stitch_ranges_free(struct stitch *st, struct srange *r);        /* its record is recycled */
void stitch_ranges_rlist_push(struct rlist *l, struct srange *r);
void stitch_ranges_rlist_remove(struct rlist *l, struct srange *r);
struct srun *stitch_ranges_run_scratch(struct stitch *st, uint64_t n);     /* a reused buffer of n runs */
uint8_t *stitch_ranges_page_scratch(struct stitch *st, uint64_t n);        /* a reused buffer of n zero bytes */
void stitch_ranges_runs_keep(struct srange *r);                            /* r's runs, gathered in stitch_ranges_run_scratch, kept in r */
struct sblock *stitch_ranges_lend_at(struct stitch *st, struct sblock *f, uint64_t addr, uint64_t bytes, struct srange *borrower);
void stitch_ranges_unlend(struct stitch *st, struct sblock *l);            /* a lent block's pages go back home */
void stitch_ranges_add_run(struct srange *s, struct sblock *lent);
uint64_t stitch_ranges_gather(struct stitch *st, struct spool *own, uint64_t npages, struct srange *s);  /* lend npages free pages to s */

/* stitch_views.c: views (wholly free stitched ranges, still mapped) and the small cache */
int stitch_views_cmp(const struct ordnode *a, const struct ordnode *b);   /* a pool's views: (size, va) */
int stitch_views_front_cmp(const struct ordnode *a, const struct ordnode *b);  /* a pool's fronts: (full size, va) */
void stitch_views_mark_wanted(struct spool *p, uint64_t r);         /* a view serving a front that r would fit whole is kept whole */
struct srange *stitch_views_find(struct spool *p, uint64_t r, int exact);  /* the smallest view that serves r without mapping */
void stitch_views_take(struct stitch *st, struct srange *s, uint64_t r);  /* the pages r needs lent to it, the rest given back; its block joins stitch_free */
struct srange *stitch_views_repairable(struct spool *p, uint64_t r, uint64_t free_pages);
int stitch_views_repair(struct stitch *st, struct srange *s, uint64_t r); /* remap its busy pages with free ones, then r takes its front */
void stitch_views_evict(struct stitch *st, struct srange *s);       /* unmapped, its pages back home */
uint64_t stitch_views_release(struct stitch *st, struct srange *r, uint64_t k);   /* a view gives back >= k pages */
void stitch_views_range_uncache(struct stitch *st, struct srange *r);   /* a cached range becomes busy (range_busy_inc) */
void stitch_views_range_cache(struct stitch *st, struct srange *r);     /* a small or stitched range becomes wholly free */

/* stitch_check.c: the consistency check (--validate) */
int stitch_check(void *a, char *err);

/* the block of a set's node (stitch_fset.h uses it) */
static inline struct sblock *sb_of(struct ordnode *n) { return n ? ORD_ENTRY(n, struct sblock, node) : NULL; }

#include "stitch_fset.h"

/* ---- hot block operations (stitch_blocks.c has the rest) ---- */

static inline struct sblock *sb_new(struct stitch *st) {
  struct sblock *b = st->spare;
  if (!b) return stitch_blocks_alloc_node(st);
  st->spare = b->next;
  *b = (struct sblock){0};
  return b;
}

static inline void sb_put(struct stitch *st, struct sblock *b) {
  b->next = st->spare;
  st->spare = b;
}

static inline uint64_t whole_pages(uint64_t addr, uint64_t size) {
  uint64_t lo = (addr + ST_PAGE - 1) / ST_PAGE, hi = (addr + size) / ST_PAGE;
  return hi > lo ? hi - lo : 0;
}

/* the whole handles inside [addr, addr+size) of PRIM range r (its pages mapped): pages
 * [*ha, *hb); a stitched range maps a handle only whole */
static inline void handle_span(const struct srange *r, uint64_t addr, uint64_t size, uint64_t *ha, uint64_t *hb) {
  uint64_t lo = (addr - r->va + ST_PAGE - 1) / ST_PAGE, hi = (addr + size - r->va) / ST_PAGE;
  if (hi > lo && r->hoff[lo]) lo += r->hlen[lo] - r->hoff[lo];
  if (hi > lo && r->hoff[hi - 1] + 1 != r->hlen[hi - 1]) hi -= r->hoff[hi - 1] + 1;
  *ha = lo;
  *hb = hi > lo ? hi : lo;
}

/* where whole handles of PRIM range r taken from page `from` (a handle's first page)
 * cover `want` pages, not passing page hb: the page index past the last one taken (the
 * last handle may bring more than wanted) */
static inline uint64_t handles_end(const struct srange *r, uint64_t from, uint64_t hb, uint64_t want) {
  uint64_t end = from;
  while (end < hb && end - from < want) end += r->hlen[end];
  return end;
}

static inline uint64_t handle_pages_in(const struct srange *r, uint64_t addr, uint64_t size) {
  uint64_t ha, hb;
  handle_span(r, addr, size, &ha, &hb);
  return hb - ha;
}

/* b becomes FREE and joins its set; in a PRIM range its whole pages count as free and
 * its first whole page points at it */
static inline __attribute__((always_inline)) void free_insert(struct sblock *b) {
  struct srange *r = b->r;
  b->kind = BK_FREE;
  stitch_fset_insert(r->free, b);
  if (r->kind != RK_PRIM) return;
  uint64_t w = whole_pages(b->addr, b->size);
  if (!w) return;
  r->pool->prim_free_pages += w;
  r->pool->prim_handle_pages += handle_pages_in(r, b->addr, b->size);
  r->head[(b->addr - r->va + ST_PAGE - 1) / ST_PAGE] = b;
}

/* b leaves its set (still FREE until changed) */
static inline __attribute__((always_inline)) void free_erase(struct sblock *b) {
  struct srange *r = b->r;
  stitch_fset_erase(r->free, b);
  if (r->kind != RK_PRIM) return;
  uint64_t w = whole_pages(b->addr, b->size);
  if (!w) return;
  r->pool->prim_free_pages -= w;
  r->pool->prim_handle_pages -= handle_pages_in(r, b->addr, b->size);
  r->head[(b->addr - r->va + ST_PAGE - 1) / ST_PAGE] = NULL;
}

/* Busy counts of the pages under a block of PRIM range r. Its whole pages are busy
 * through it alone (they were whole pages of a free block before, and no other block
 * touches them): set at once; its partial end pages, which neighbours may share, are
 * counted. */
static inline void prim_busy(struct srange *r, uint64_t addr, uint64_t size, int delta) {
  uint64_t off = addr - r->va, end = off + size;
  uint64_t lo = (off + ST_PAGE - 1) / ST_PAGE, hi = end / ST_PAGE;   /* whole pages [lo, hi) */
  if (hi > lo) memset(r->busy + lo, delta > 0, hi - lo);
  if (off % ST_PAGE) r->busy[off / ST_PAGE] = (uint8_t)(r->busy[off / ST_PAGE] + delta);
  if (end % ST_PAGE && (!(off % ST_PAGE) || end / ST_PAGE != off / ST_PAGE))   /* not the same page */
    r->busy[end / ST_PAGE] = (uint8_t)(r->busy[end / ST_PAGE] + delta);
}

static inline struct spool *pool_get(struct stitch *st, uint64_t stream) {
  if (st->last_pool && st->last_pool->stream == stream) return st->last_pool;
  return stitch_ranges_pool_find(st, stream);
}

/* an ALLOC block (or, in a PRIM range, a LENT one) more or fewer on r */
static inline void range_busy_inc(struct stitch *st, struct srange *r) {
  if (!r->nbusy++ && r->cached) stitch_views_range_uncache(st, r);
}

static inline void range_busy_dec(struct stitch *st, struct srange *r) {
  if (!--r->nbusy && r->kind != RK_PRIM) stitch_views_range_cache(st, r);
}

/* b keeps [addr, addr+at); the rest becomes a new block after it, of the same kind */
static inline struct sblock *sb_split(struct stitch *st, struct sblock *b, uint64_t at) {
  struct sblock *n = st->spare;   /* every field set below; node and bin when it joins a set */
  if (n) st->spare = n->next;
  else n = stitch_blocks_alloc_node(st);
  n->addr = b->addr + at;
  n->size = b->size - at;
  n->r = b->r;
  n->kind = b->kind;
  n->borrower = b->borrower;
  n->prev = b;
  n->next = b->next;
  if (b->next) b->next->prev = n;
  b->next = n;
  b->size = at;
  return n;
}


/* b takes over b->next */
static inline void sb_absorb_next(struct stitch *st, struct sblock *b) {
  struct sblock *n = b->next;
  b->size += n->size;
  b->next = n->next;
  if (n->next) n->next->prev = b;
  sb_put(st, n);
}

/* b (FREE, in no set) merges with FREE neighbours and joins its set */
static inline void free_coalesce_insert(struct stitch *st, struct sblock *b) {
  b->kind = BK_FREE;
  if (b->next && b->next->kind == BK_FREE) {
    free_erase(b->next);
    sb_absorb_next(st, b);
  }
  if (b->prev && b->prev->kind == BK_FREE) {
    struct sblock *p = b->prev;
    free_erase(p);
    sb_absorb_next(st, p);
    b = p;
  }
  free_insert(b);
}

#endif
