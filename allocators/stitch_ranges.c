/* stitch_ranges.c - the `stitch` strategy's ranges and pages: per-stream pools, range
 * records, primitive ranges and the pages mapped into them, lending whole free pages to
 * stitched and small ranges, building them, reclaiming pages from wholly free ones, and
 * the release pass (EMPTY_CACHE). Views (wholly free stitched ranges kept mapped) are in
 * stitch_views.c; policy lives in stitch.c; see stitch.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "stitch.h"

static void *xcalloc(size_t n, size_t sz) {
  void *p = calloc(n ? n : 1, sz);
  if (!p) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
  return p;
}

/* ---- pools (one per stream) ---- */

/* A pool (three free sets of FS_NBINS bins: tens of KiB) is an anonymous mapping, zero
 * until written. */
struct spool *stitch_ranges_pool_find(struct stitch *st, uint64_t stream) {
  for (int i = 0; i < st->npools; i++)
    if (st->pools[i]->stream == stream) return st->last_pool = st->pools[i];
  if (st->npools == st->cap_pools) {
    int cap = st->cap_pools ? 2 * st->cap_pools : 4;
    struct spool **np = realloc(st->pools, (size_t)cap * sizeof *np);
    if (!np) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
    st->pools = np;
    st->cap_pools = cap;
  }
  struct spool *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);   /* zero */
  if (p == MAP_FAILED) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
  p->stream = stream;
  stitch_fset_init(&p->prim_free);
  stitch_fset_init(&p->stitch_free);
  stitch_fset_init(&p->small_free);
  ordset_init(&p->views, stitch_views_cmp);
  ordset_init(&p->fronts, stitch_views_front_cmp);
  st->pools[st->npools++] = p;
  return st->last_pool = p;
}

uint64_t stitch_ranges_pages_free_total(const struct stitch *st) {
  uint64_t n = 0;
  for (int i = 0; i < st->npools; i++) n += st->pools[i]->prim_handle_pages;
  return n;
}

uint64_t stitch_ranges_pages_avail_total(const struct stitch *st) {
  uint64_t n = st->holding_pages;
  for (int i = 0; i < st->npools; i++) n += st->pools[i]->prim_handle_pages + st->pools[i]->small_cached.pages;
  return n;
}

/* ---- ranges ---- */

/* A primitive range's per-page arrays (handle, head, hoff, hlen, mapped, busy) in one
 * anonymous mapping: zero until written, so a reservation spanning the whole device costs
 * no clearing up front. */
static size_t page_arrays_bytes(uint64_t npages) { return npages * (sizeof(uint64_t) + sizeof(struct sblock *) + 2 * sizeof(uint32_t) + 2); }

static void page_arrays_new(struct srange *r) {
  void *p = mmap(NULL, page_arrays_bytes(r->npages), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
  r->handle = p;
  r->head = (struct sblock **)(r->handle + r->npages);
  r->hoff = (uint32_t *)(r->head + r->npages);
  r->hlen = r->hoff + r->npages;
  r->mapped = (uint8_t *)(r->hlen + r->npages);
  r->busy = r->mapped + r->npages;
}

static struct srange *range_new(struct stitch *st, int kind, struct spool *p) {
  struct srange *r = st->spare_ranges;
  if (r) {
    struct srun *mem = r->runs_mem;
    uint32_t cap = r->runs_cap;
    st->spare_ranges = r->all_next;
    memset(r, 0, sizeof *r);
    r->runs_mem = mem;
    r->runs_cap = cap;
  } else r = xcalloc(1, sizeof *r);
  r->kind = (uint8_t)kind;
  r->pool = p;
  r->free = kind == RK_PRIM ? &p->prim_free : kind == RK_STITCH ? &p->stitch_free : &p->small_free;
  r->all_next = st->all;
  if (st->all) st->all->all_prev = r;
  st->all = r;
  return r;
}

/* r's record goes to the spare list (with its runs memory) */
void stitch_ranges_free(struct stitch *st, struct srange *r) {
  if (r->all_prev) r->all_prev->all_next = r->all_next;
  else st->all = r->all_next;
  if (r->all_next) r->all_next->all_prev = r->all_prev;
  for (struct sblock *b = r->first, *n; b; b = n) { n = b->next; sb_put(st, b); }
  if (r->handle) munmap(r->handle, page_arrays_bytes(r->npages));
  free(r->plen);
  r->plen = NULL;
  r->all_next = st->spare_ranges;
  st->spare_ranges = r;
}

/* st's scratch buffers, grown to hold n runs (pages) */
struct srun *stitch_ranges_run_scratch(struct stitch *st, uint64_t n) {
  if (st->run_cap < n) {
    free(st->run_buf);
    st->run_cap = n > 2 * st->run_cap ? n : 2 * st->run_cap;
    st->run_buf = xcalloc(st->run_cap, sizeof *st->run_buf);
  }
  return st->run_buf;
}

uint8_t *stitch_ranges_page_scratch(struct stitch *st, uint64_t n) {
  if (st->page_cap < n) {
    free(st->page_buf);
    st->page_cap = n > 2 * st->page_cap ? n : 2 * st->page_cap;
    st->page_buf = xcalloc(st->page_cap, 1);
  }
  memset(st->page_buf, 0, n);
  return st->page_buf;
}

/* r's runs, gathered in st's scratch buffer, moved into r (its own one_run if only one) */
void stitch_ranges_runs_keep(struct srange *r) {
  struct srun *runs = &r->one_run;
  if (r->nruns > 1) {
    if (r->runs_cap < r->nruns) {
      free(r->runs_mem);
      r->runs_cap = r->nruns < 8 ? 8 : r->nruns;
      r->runs_mem = xcalloc(r->runs_cap, sizeof *runs);
    }
    runs = r->runs_mem;
  }
  memcpy(runs, r->runs, r->nruns * sizeof *runs);
  r->runs = runs;
}

void stitch_ranges_rlist_push(struct rlist *l, struct srange *r) {
  r->lru_prev = l->tail;
  r->lru_next = NULL;
  if (l->tail) l->tail->lru_next = r;
  else l->head = r;
  l->tail = r;
  l->count++;
  l->pages += r->npages;
  r->cached = 1;
}

void stitch_ranges_rlist_remove(struct rlist *l, struct srange *r) {
  if (r->lru_prev) r->lru_prev->lru_next = r->lru_next;
  else l->head = r->lru_next;
  if (r->lru_next) r->lru_next->lru_prev = r->lru_prev;
  else l->tail = r->lru_prev;
  l->count--;
  l->pages -= r->npages;
  r->cached = 0;
  r->lru_prev = r->lru_next = NULL;
}

/* ---- primitive ranges: a VA reservation per stream, pages mapped on demand ---- */

static int prim_create(struct stitch *st, struct spool *p, uint64_t min_pages, struct srange **out) {
  uint64_t npages = st->prim_va / ST_PAGE;
  if (npages < min_pages) npages = min_pages;
  uint64_t va;
  int rc = dev_va_reserve(st->dev, npages * ST_PAGE, &va);
  if (rc) return rc;
  struct srange *r = range_new(st, RK_PRIM, p);
  r->va = va;
  r->size = npages * ST_PAGE;
  r->npages = npages;
  page_arrays_new(r);
  ordset_init(&r->holes, stitch_blocks_cmp_addr);
  struct sblock *b = sb_new(st);
  b->addr = va;
  b->size = r->size;
  b->r = r;
  b->kind = BK_UNMAPPED;
  r->first = b;
  ordset_insert(&r->holes, &b->node);
  struct srange **tail = &p->prims;
  while (*tail) tail = &(*tail)->next_prim;
  *tail = r;
  *out = r;
  return 0;
}

/* Create and map k pages at the start of hole h; they become FREE (merging with a free
 * block before it). All or nothing. */
static int map_pages(struct stitch *st, struct sblock *h, uint64_t k) {
  struct srange *r = h->r;
  int rc = stitch_maps_prim_map_new(st, r, (h->addr - r->va) / ST_PAGE, k);
  if (rc) return rc;
  ordset_erase(&r->holes, &h->node);
  if (h->size > k * ST_PAGE) {
    struct sblock *rest = sb_split(st, h, k * ST_PAGE);
    ordset_insert(&r->holes, &rest->node);
  }
  free_coalesce_insert(st, h);
  return 0;
}

/* Which hole to grow into: the one where the fewest new pages make a free block of
 * want_bytes (the free block before the hole counts, as expandable segments' best fit
 * counts the unmapped tail), if that is no more than shortfall pages; else shortfall
 * pages (to be stitched with the free pages already held) at that hole or the first
 * that has room. Returns 0 when no hole has room. */
static int pick_hole(struct spool *p, uint64_t want, uint64_t shortfall, struct sblock **hole, uint64_t *k, int *extended) {
  struct sblock *best = NULL, *first_fit = NULL;
  uint64_t best_k = UINT64_MAX;
  for (struct srange *r = p->prims; r; r = r->next_prim)
    for (struct ordnode *n = ordset_first(&r->holes); n; n = ordset_next(n)) {
      struct sblock *h = sb_of(n);
      uint64_t f = h->prev && h->prev->kind == BK_FREE ? h->prev->size : 0;
      uint64_t kk = f >= want ? 1 : (want - f + ST_PAGE - 1) / ST_PAGE;
      uint64_t room = h->size / ST_PAGE;
      if (kk <= room && kk < best_k) { best_k = kk; best = h; }
      if (!first_fit && room >= shortfall) first_fit = h;
    }
  if (best && best_k <= shortfall) { *hole = best; *k = best_k; *extended = 1; return 1; }
  *extended = 0;
  *k = shortfall;
  *hole = best ? best : first_fit;
  return *hole != NULL;
}

/* Map new pages for a request of want_bytes that free pages fall `shortfall` short of:
 * where pick_hole says (a new reservation when no hole has room), rounded up to whole
 * handles with grow_whole. */
int stitch_ranges_grow(struct stitch *st, struct spool *p, uint64_t want_bytes, uint64_t shortfall, int *extended) {
  struct sblock *h;
  uint64_t k;
  if (shortfall == 0) shortfall = 1;
  if (!pick_hole(p, want_bytes, shortfall, &h, &k, extended)) {
    uint64_t need = (want_bytes + ST_PAGE - 1) / ST_PAGE;
    struct srange *r;
    int rc = prim_create(st, p, need > shortfall ? need : shortfall, &r);
    if (rc) return rc;
    pick_hole(p, want_bytes, shortfall, &h, &k, extended);
  }
  if (st->grow_whole) {   /* whole handles, as far as the hole has room */
    uint64_t whole = (k + st->handle_pages - 1) / st->handle_pages * st->handle_pages;
    if (whole * ST_PAGE <= h->size) k = whole;
  }
  return map_pages(st, h, k);
}

/* ---- lending whole free pages to stitched and small ranges ---- */

/* Carve [addr, addr+bytes) out of FREE block f (which holds it) as a LENT block. */
struct sblock *stitch_ranges_lend_at(struct stitch *st, struct sblock *f, uint64_t addr, uint64_t bytes, struct srange *borrower) {
  free_erase(f);
  if (addr > f->addr) {
    struct sblock *left = f;
    f = sb_split(st, f, addr - f->addr);
    free_insert(left);
  }
  if (f->size > bytes) free_insert(sb_split(st, f, bytes));
  f->kind = BK_LENT;
  f->borrower = borrower;
  f->r->nbusy++;
  prim_busy(f->r, f->addr, f->size, 1);
  return f;
}

void stitch_ranges_unlend(struct stitch *st, struct sblock *l) {
  l->borrower = NULL;
  l->r->nbusy--;
  prim_busy(l->r, l->addr, l->size, -1);
  free_coalesce_insert(st, l);
}

void stitch_ranges_add_run(struct srange *s, struct sblock *lent) {
  uint64_t first = (lent->addr - lent->r->va) / ST_PAGE * ST_PAGE + lent->r->va;
  s->runs[s->nruns++] = (struct srun){.home = lent->r, .addr = lent->addr,
                                      .npages = (lent->addr + lent->size - first) / ST_PAGE, .lent = lent};
}

/* pages of whole handles in free PRIM block f (what a stitched range can map) */
static uint64_t block_handle_pages(const struct sblock *f) { return handle_pages_in(f->r, f->addr, f->size); }

/* The free block of pool p whose whole handles hold the fewest pages >= need (looking at
 * a few blocks past the size bound, as alignment may cost a page), else the largest one
 * with any (or, where the largest holds no whole handle, the first that holds one). */
static struct sblock *pick_pages(struct spool *p, uint64_t need) {
  struct sblock *f = stitch_fset_lower_bound(&p->prim_free, need * ST_PAGE);
  for (int k = 0; f && k < 8; k++, f = stitch_fset_next(&p->prim_free, f))
    if (block_handle_pages(f) >= need) return f;
  if ((f = stitch_fset_last(&p->prim_free)) && block_handle_pages(f)) return f;
  for (f = stitch_fset_lower_bound(&p->prim_free, ST_PAGE); f; f = stitch_fset_next(&p->prim_free, f))
    if (block_handle_pages(f)) return f;
  return NULL;
}

/* Lend s the whole handles of free block f from page index ha, enough for `want` pages
 * (the last handle may bring more); returns the pages lent. */
static uint64_t lend_handles(struct stitch *st, struct sblock *f, uint64_t ha, uint64_t hb, uint64_t want, struct srange *s) {
  const struct srange *r = f->r;
  uint64_t end = handles_end(r, ha, hb, want);
  if (end == ha) return 0;
  stitch_ranges_add_run(s, stitch_ranges_lend_at(st, f, r->va + ha * ST_PAGE, (end - ha) * ST_PAGE, s));
  return end - ha;
}

/* Lend at least npages free pages (whole handles) to s in few runs: while no free block
 * holds all that is still needed, the largest one's, then the best fitting one's; s's own
 * stream first, then the others (standing for a device synchronize, as PyTorch's release
 * of cached blocks does before memory changes streams). Returns the pages lent, which
 * may pass npages by part of a handle. */
uint64_t stitch_ranges_gather(struct stitch *st, struct spool *own, uint64_t npages, struct srange *s) {
  uint64_t got = 0;
  for (int pass = -1; pass < st->npools && got < npages; pass++) {
    struct spool *p = pass < 0 ? own : st->pools[pass];
    if (pass >= 0 && p == own) continue;
    struct sblock *f;
    while (got < npages && (f = pick_pages(p, npages - got))) {
      uint64_t ha, hb;
      handle_span(f->r, f->addr, f->size, &ha, &hb);
      got += lend_handles(st, f, ha, hb, npages - got, s);
    }
  }
  return got;
}

static void range_set_single_free(struct stitch *st, struct srange *r) {
  struct sblock *b = sb_new(st);
  b->addr = r->va;
  b->size = r->size;
  b->r = r;
  r->first = b;
  free_insert(b);
}

/* A free primitive block of pool p that starts inside a page and reaches that page's
 * end with at least h bytes: the free end of a page a block at home has begun. The
 * smallest of the first few that fit, fragments before whole free pages. */
struct sblock *stitch_ranges_head_fragment(struct spool *p, uint64_t h) {
  struct sblock *f = stitch_fset_lower_bound(&p->prim_free, h);
  for (int k = 0; f && k < 16; k++, f = stitch_fset_next(&p->prim_free, f)) {
    uint64_t in = (f->addr - f->r->va) % ST_PAGE, room = ST_PAGE - in;
    if (in && room >= h && f->size >= room && f->r->hlen[(f->addr - f->r->va) / ST_PAGE] == 1) return f;   /* its page a handle alone */
  }
  return NULL;
}

/* A new stitched range of npages pages: with head > 0, its first page is the free end
 * (head bytes) of a page begun at home, followed there by as many free whole pages as
 * that block has; the rest gathered. Its block then starts `lead` = 2 MiB - head bytes
 * into the first page; f is that block (stitch_ranges_head_fragment(p, head)). Precondition: enough
 * whole free pages besides. */
int stitch_ranges_build_stitched(struct stitch *st, struct spool *p, uint64_t npages, uint64_t head, struct sblock *f, struct srange **out) {
  uint64_t va = 0, lead = 0;
  struct srange *s = range_new(st, RK_STITCH, p);
  s->runs = stitch_ranges_run_scratch(st, npages);
  uint64_t got = 0;
  if (f) {
    const struct srange *h = f->r;
    uint64_t pg = (f->addr - h->va) / ST_PAGE, ha, hb;
    handle_span(h, f->addr, f->size, &ha, &hb);
    uint64_t end = handles_end(h, pg + 1, hb, npages - 1);   /* the whole handles after the head page */
    stitch_ranges_add_run(s, stitch_ranges_lend_at(st, f, h->va + pg * ST_PAGE + ST_PAGE - head, head + (end - pg - 1) * ST_PAGE, s));
    lead = ST_PAGE - head;
    got = end - pg;
  }
  if (got < npages) got += stitch_ranges_gather(st, p, npages - got, s);
  int rc = got < npages ? -1 : dev_va_reserve(st->dev, got * ST_PAGE, &va);
  if (!rc) {
    s->vbase = va;
    s->npages = got;
    s->plen = xcalloc(got, sizeof *s->plen);
    rc = stitch_maps_view_map_span(st, s, 0, got);
    if (rc) dev_va_release(st->dev, va, got * ST_PAGE);
  }
  if (rc) {   /* a device error, or a broken precondition */
    if (got < npages) snprintf(st->dev->err, FB_ERRLEN, "stitch: found %llu of %llu free pages to stitch",
                               (unsigned long long)got, (unsigned long long)npages);
    for (uint32_t j = 0; j < s->nruns; j++) stitch_ranges_unlend(st, s->runs[j].lent);
    s->runs = NULL;
    stitch_ranges_free(st, s);
    return rc < 0 ? rc : -1;
  }
  stitch_ranges_runs_keep(s);
  s->nlent = s->nuse = s->nruns;
  s->va = va + lead;
  s->size = got * ST_PAGE - lead;
  range_set_single_free(st, s);
  *out = s;
  return 0;
}

/* ---- small ranges: one whole free page, lent in place (no new mapping) ---- */

int stitch_ranges_build_small(struct stitch *st, struct spool *p, struct srange **out) {
  for (int pass = -1; pass < st->npools; pass++) {
    struct spool *q = pass < 0 ? p : st->pools[pass];
    if (pass >= 0 && q == p) continue;
    for (struct sblock *f = stitch_fset_lower_bound(&q->prim_free, ST_PAGE); f; f = stitch_fset_next(&q->prim_free, f)) {
      if (!whole_pages(f->addr, f->size)) continue;
      struct srange *s = range_new(st, RK_SMALL, p);
      s->npages = 1;
      s->runs = &s->one_run;
      stitch_ranges_add_run(s, stitch_ranges_lend_at(st, f, (f->addr + ST_PAGE - 1) / ST_PAGE * ST_PAGE, ST_PAGE, s));
      s->nlent = s->nuse = 1;
      s->va = s->runs[0].addr;
      s->size = ST_PAGE;
      range_set_single_free(st, s);
      *out = s;
      return 0;
    }
  }
  snprintf(st->dev->err, FB_ERRLEN, "stitch: no whole free page for a small range");
  return -1;
}

static void small_dissolve(struct stitch *st, struct srange *s) {
  stitch_ranges_rlist_remove(&s->pool->small_cached, s);
  free_erase(s->first);
  stitch_ranges_unlend(st, s->runs[0].lent);
  stitch_ranges_free(st, s);
}

/* Give back pages of wholly free ranges, about k: a small one of the own stream, else
 * the last runs of the least recently used view still holding pages, else another
 * stream's small one. Returns the whole pages given back (0: nothing left to give). */
uint64_t stitch_ranges_reclaim_one(struct stitch *st, struct spool *own, uint64_t k) {
  if (own->small_cached.head) { small_dissolve(st, own->small_cached.head); return 1; }
  for (struct srange *v = st->hold_head, *next; v; v = next) {
    next = v->hold_next;
    uint64_t got = stitch_views_release(st, v, k);   /* 0: it only held a head page (now unmapped) */
    if (got) return got;
  }
  for (int i = 0; i < st->npools; i++)
    if (st->pools[i]->small_cached.head) { small_dissolve(st, st->pools[i]->small_cached.head); return 1; }
  return 0;
}

/* EMPTY_CACHE: unmap every view, give back every wholly free small range, then unmap and
 * release every whole free page; the VA reservations stay (holes are refilled later). */
void stitch_ranges_release_free_pages(struct stitch *st) {
  while (st->views.head) stitch_views_evict(st, st->views.head);
  for (struct srange *v = st->hold_head, *next; v; v = next) {   /* idle runs of ranges serving from their front */
    next = v->hold_next;
    stitch_views_release(st, v, UINT64_MAX);
  }
  for (int i = 0; i < st->npools; i++)
    while (st->pools[i]->small_cached.head) small_dissolve(st, st->pools[i]->small_cached.head);
  for (int i = 0; i < st->npools; i++)
    for (struct srange *r = st->pools[i]->prims; r; r = r->next_prim) {
      size_t n = 0, cap = 16;
      struct sblock **todo = xcalloc(cap, sizeof *todo);
      for (struct sblock *b = r->first; b; b = b->next)
        if (b->kind == BK_FREE && whole_pages(b->addr, b->size)) {
          if (n == cap) {
            cap *= 2;
            struct sblock **nt = realloc(todo, cap * sizeof *nt);
            if (!nt) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
            todo = nt;
          }
          todo[n++] = b;
        }
      for (size_t j = 0; j < n; j++) {
        struct sblock *b = todo[j], *mid = b;
        free_erase(b);
        uint64_t ha, hb;
        handle_span(r, b->addr, b->size, &ha, &hb);   /* a handle goes back whole */
        if (ha == hb) { free_insert(b); continue; }
        uint64_t pa = r->va + ha * ST_PAGE, pb = r->va + hb * ST_PAGE;
        if (pa > b->addr) { mid = sb_split(st, b, pa - b->addr); free_insert(b); }
        if (mid->addr + mid->size > pb) free_insert(sb_split(st, mid, pb - mid->addr));
        stitch_maps_prim_unmap_release(st, r, ha, hb);
        stitch_blocks_hole_coalesce_insert(st, mid);
      }
      free(todo);
    }
}

/* destroy: every mapping, page and reservation goes back to the device. */
void stitch_ranges_destroy(struct stitch *st) {
  for (struct srange *r = st->all; r; r = r->all_next)
    if (r->kind == RK_STITCH) {
      stitch_maps_view_unmap_span(st, r, 0, r->npages);
      dev_va_release(st->dev, r->vbase, r->npages * ST_PAGE);
    }
  for (struct srange *r = st->all; r; r = r->all_next)
    if (r->kind == RK_PRIM) {
      for (uint64_t i = 0; i < r->npages; i++)
        if (r->mapped[i] && !r->hoff[i]) stitch_maps_prim_unmap_release(st, r, i, i + r->hlen[i]);   /* a handle, from its first page */
      dev_va_release(st->dev, r->va, r->size);
    }
  while (st->all) stitch_ranges_free(st, st->all);
  for (struct srange *r = st->spare_ranges, *n; r; r = n) {
    n = r->all_next;
    free(r->runs_mem);
    free(r);
  }
  st->spare_ranges = NULL;
  stitch_blocks_free_all(st);
  free(st->run_buf);
  free(st->page_buf);
  st->run_buf = NULL;
  st->page_buf = NULL;
  st->run_cap = st->page_cap = 0;
  for (int i = 0; i < st->npools; i++) munmap(st->pools[i], sizeof *st->pools[i]);
  free(st->pools);
  st->pools = NULL;
  st->npools = st->cap_pools = 0;
}
