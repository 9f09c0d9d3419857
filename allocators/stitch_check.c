/* stitch_check.c - the `stitch` strategy's internal consistency check (--validate):
 * blocks tile every range with no two free (or two unmapped) neighbours, the free sets
 * hold exactly the free blocks (views' blocks aside), every lent block has its borrower
 * and every borrower holding its pages its lent runs, mapped pages match the blocks, the
 * holding list follows the LRU list, and the counts (busy, free pages, views, held, live
 * bytes) agree with the structures. See
 * stitch.h for the invariants. */
#include <stdio.h>
#include <stdlib.h>
#include "stitch.h"

#define FAIL(...) do { snprintf(err, FB_ERRLEN, "stitch: " __VA_ARGS__); return -1; } while (0)

static const char *kind_name(int k) { return k == RK_PRIM ? "primitive" : k == RK_STITCH ? "stitched" : "small"; }

/* busy counts and heads against the blocks */
static int check_pages(const struct srange *r, char *err) {
  uint8_t *want = calloc(r->npages ? r->npages : 1, sizeof *want);
  if (!want) FAIL("out of host memory");
  int bad = 0;
  for (const struct sblock *b = r->first; b && !bad; b = b->next) {
    uint64_t lo = (b->addr - r->va) / ST_PAGE, hi = (b->addr + b->size - r->va + ST_PAGE - 1) / ST_PAGE;
    if (b->kind == BK_ALLOC || b->kind == BK_LENT)
      for (uint64_t i = lo; i < hi; i++) want[i]++;
    if (b->kind == BK_FREE && whole_pages(b->addr, b->size)) {
      uint64_t fw = (b->addr - r->va + ST_PAGE - 1) / ST_PAGE;
      if (r->head[fw] != b) bad = 1;
    }
  }
  for (uint64_t i = 0; i < r->npages && !bad; i++) {
    if (want[i] != r->busy[i]) bad = 2;
    if (r->head[i] && (r->head[i]->kind != BK_FREE || r->head[i]->r != r ||
                       (r->head[i]->addr - r->va + ST_PAGE - 1) / ST_PAGE != i)) bad = 3;
  }
  free(want);
  if (bad == 1) FAIL("primitive range %#llx: a free block's first whole page does not point at it", (unsigned long long)r->va);
  if (bad == 2) FAIL("primitive range %#llx: busy counts differ from the blocks on the pages", (unsigned long long)r->va);
  if (bad == 3) FAIL("primitive range %#llx: a page head points at a block that is not a free block starting its whole pages there", (unsigned long long)r->va);
  return 0;
}

static int check_range(const struct srange *r, uint64_t *free_blocks, uint64_t *lent, uint64_t *live, char *err) {
  uint64_t pos = r->va, busy = 0, holes = 0;
  const struct sblock *prev = NULL;
  if (!r->first) FAIL("%s range %#llx has no blocks", kind_name(r->kind), (unsigned long long)r->va);
  for (const struct sblock *b = r->first; b; prev = b, b = b->next) {
    if (b->r != r || b->prev != prev || b->addr != pos || b->size == 0)
      FAIL("%s range %#llx: block list broken at %#llx", kind_name(r->kind), (unsigned long long)r->va, (unsigned long long)b->addr);
    if (prev && prev->kind == b->kind && (b->kind == BK_FREE || b->kind == BK_UNMAPPED))
      FAIL("%s range %#llx: two neighbouring %s blocks at %#llx", kind_name(r->kind), (unsigned long long)r->va,
           b->kind == BK_FREE ? "free" : "unmapped", (unsigned long long)b->addr);
    if (r->kind != RK_PRIM && (b->kind == BK_LENT || b->kind == BK_UNMAPPED))
      FAIL("%s range %#llx holds a lent or unmapped block", kind_name(r->kind), (unsigned long long)r->va);
    if ((b->kind == BK_LENT && (b->addr + b->size - r->va) % ST_PAGE) ||
        (b->kind == BK_UNMAPPED && ((b->addr - r->va) % ST_PAGE || b->size % ST_PAGE)))
      FAIL("%s block %#llx+%llu does not end (lent) or lie (unmapped) on pages", b->kind == BK_LENT ? "lent" : "unmapped",
           (unsigned long long)b->addr, (unsigned long long)b->size);
    if (r->kind == RK_PRIM) {
      uint64_t lo = (b->addr - r->va) / ST_PAGE, hi = (b->addr + b->size - r->va + ST_PAGE - 1) / ST_PAGE;
      for (uint64_t i = lo; i < hi; i++)
        if (r->mapped[i] != (b->kind != BK_UNMAPPED))
          FAIL("primitive range %#llx: page %llu is %smapped under a %s block", (unsigned long long)r->va,
               (unsigned long long)i, r->mapped[i] ? "" : "un", b->kind == BK_UNMAPPED ? "unmapped" : "mapped");
    }
    switch (b->kind) {
    case BK_FREE: (*free_blocks)++; break;
    case BK_ALLOC: busy++; *live += b->size; break;
    case BK_LENT:
      busy++;
      (*lent)++;
      if (!b->borrower) FAIL("lent block %#llx has no borrower", (unsigned long long)b->addr);
      break;
    case BK_UNMAPPED: holes++; break;
    default: FAIL("block %#llx has kind %d", (unsigned long long)b->addr, b->kind);
    }
    pos += b->size;
  }
  if (pos != r->va + r->size) FAIL("%s range %#llx: blocks end at %#llx, not at its end", kind_name(r->kind), (unsigned long long)r->va, (unsigned long long)pos);
  if (busy != r->nbusy) FAIL("%s range %#llx: %llu busy blocks, counted %llu", kind_name(r->kind), (unsigned long long)r->va, (unsigned long long)busy, (unsigned long long)r->nbusy);
  if (r->kind == RK_PRIM) {
    uint64_t m = 0;
    for (uint64_t i = 0; i < r->npages; i++) m += r->mapped[i];
    if (check_pages(r, err)) return -1;
    if (m != r->nmapped) FAIL("primitive range %#llx: %llu pages mapped, counted %llu", (unsigned long long)r->va, (unsigned long long)m, (unsigned long long)r->nmapped);
    for (uint64_t i = 0; i < r->npages; i++)   /* a handle's pages lie side by side, at offsets 0, 1, ... */
      if (r->mapped[i] && (r->hoff[i] >= r->hlen[i] || (i + r->hlen[i] - r->hoff[i] > r->npages) ||
                           (r->hoff[i] && !(r->mapped[i - 1] && r->handle[i - 1] == r->handle[i] && r->hoff[i - 1] + 1 == r->hoff[i] &&
                                            r->hlen[i - 1] == r->hlen[i]))))
        FAIL("primitive range %#llx: page %llu at offset %u of handle %#llx does not follow that handle's page before it",
             (unsigned long long)r->va, (unsigned long long)i, r->hoff[i], (unsigned long long)r->handle[i]);
    if (holes != r->holes.count) FAIL("primitive range %#llx: %llu holes, set has %zu", (unsigned long long)r->va, (unsigned long long)holes, r->holes.count);
    return 0;
  }
  uint64_t pages = 0, lent_pages = 0;
  for (uint32_t j = 0; j < r->nruns; j++) {
    const struct srun *u = &r->runs[j];
    uint64_t in = (u->addr - u->home->va) % ST_PAGE, end = u->addr - in + u->npages * ST_PAGE;
    if (j < r->nlent && (!u->lent || u->lent->kind != BK_LENT || u->lent->borrower != r || u->lent->addr != u->addr ||
                         u->lent->addr + u->lent->size != end || u->lent->r != u->home))
      FAIL("%s range %#llx: run %u is not lent to it", kind_name(r->kind), (unsigned long long)r->va, j);
    if (j >= r->nlent && u->lent) FAIL("view %#llx: run %u, given back, still points at a lent block", (unsigned long long)r->va, j);
    if (u->home->kind != RK_PRIM || u->addr < u->home->va || end > u->home->va + u->home->size)
      FAIL("%s range %#llx: run %u is not inside a primitive range", kind_name(r->kind), (unsigned long long)r->va, j);
    if (in && (j || r->kind != RK_STITCH || in != r->va - r->vbase))
      FAIL("%s range %#llx: run %u starts %llu bytes into a page; only a stitched range's head may, by its lead", kind_name(r->kind),
           (unsigned long long)r->va, j, (unsigned long long)in);
    pages += u->npages;
    if (j < (r->cached ? r->nlent : r->nuse)) lent_pages += u->npages;
  }
  if (r->kind == RK_STITCH) {   /* its mappings (pieces) cover its pages, one after another */
    uint64_t q = 0;
    while (q < r->npages && r->plen[q]) q += r->plen[q];
    if (q != r->npages) FAIL("stitched range %#llx: its mappings cover %llu of its %llu pages", (unsigned long long)r->va,
                             (unsigned long long)q, (unsigned long long)r->npages);
  }
  uint64_t spans = r->cached ? pages : lent_pages;   /* in use, its blocks span the pages it uses */
  if (pages != r->npages || r->size != spans * ST_PAGE - (r->kind == RK_STITCH ? r->va - r->vbase : 0))
    FAIL("%s range %#llx: %llu pages in runs (%llu lent) for %llu bytes", kind_name(r->kind), (unsigned long long)r->va,
         (unsigned long long)pages, (unsigned long long)lent_pages, (unsigned long long)r->size);
  if (r->nlent > r->nruns) FAIL("%s range %#llx: %u runs lent of %u", kind_name(r->kind), (unsigned long long)r->va, r->nlent, r->nruns);
  if (r->kind == RK_SMALL && (r->va != r->runs[0].addr || r->nlent != 1)) FAIL("small range %#llx is not lent its page at home", (unsigned long long)r->va);
  if (r->nbusy && (r->nuse == 0 || r->nuse > r->nlent)) FAIL("%s range %#llx is in use with %u runs, %u of them lent", kind_name(r->kind), (unsigned long long)r->va, r->nuse, r->nlent);
  if (r->nlent == 0 && r->nruns && r->va != r->vbase && r->runs[0].npages < 2) FAIL("view %#llx gave back a lone head page", (unsigned long long)r->va);
  if (r->cached != (r->nbusy == 0)) FAIL("%s range %#llx: %s but %scached", kind_name(r->kind), (unsigned long long)r->va, r->nbusy ? "busy" : "wholly free", r->cached ? "" : "not ");
  if (r->cached && r->nlent < r->nruns && (r->first->next || r->first->kind != BK_FREE)) FAIL("view %#llx is not one free block", (unsigned long long)r->va);
  return 0;
}

static int check_set(const struct fset *s, const struct spool *p, int kind, uint64_t *whole, uint64_t *handles, char *err) {
  uint64_t n = 0;
  const struct sblock *prev = NULL;
  for (const struct sblock *b = stitch_fset_first(s); b; prev = b, b = stitch_fset_next(s, b), n++) {
    if (prev && stitch_blocks_cmp_size(&prev->node, &b->node) >= 0)
      FAIL("free set of stream %llu out of order at block %#llx", (unsigned long long)p->stream, (unsigned long long)b->addr);
    if (b->kind != BK_FREE || b->r->pool != p || b->r->kind != kind)
      FAIL("free set of stream %llu holds block %#llx (kind %d, %s range)", (unsigned long long)p->stream, (unsigned long long)b->addr, b->kind, kind_name(b->r->kind));
    *whole += whole_pages(b->addr, b->size);
    if (kind == RK_PRIM) *handles += handle_pages_in(b->r, b->addr, b->size);
  }
  if (n != s->count) FAIL("free set of stream %llu: %llu blocks, counted %zu", (unsigned long long)p->stream, (unsigned long long)n, s->count);
  return 0;
}

int stitch_check(void *a, char *err) {
  const struct stitch *st = a;
  uint64_t free_blocks = 0, lent = 0, runs = 0, live = 0, mapped = 0, views = 0, holding = 0, released = 0;
  uint64_t holders = 0, fronting = 0, fronts = 0, pinned = 0;
  for (const struct srange *r = st->all; r; r = r->all_next) {
    if (check_range(r, &free_blocks, &lent, &live, err)) return -1;
    if (r->kind == RK_PRIM) mapped += r->nmapped;
    else {
      runs += r->nlent;
      if (r->cached && r->nlent < r->nruns) free_blocks--;   /* a view that gave pages back: its block is in no free set */
    }
    if (r->kind == RK_STITCH && r->cached) {
      views++;
      for (uint32_t j = 0; j < r->nlent; j++) holding += r->runs[j].npages - (j == 0 && r->va != r->vbase);
      holders += r->nlent > 0;
      pinned += r->pinned;
    }
    if (r->kind == RK_STITCH && !r->cached) {
      for (uint32_t j = r->nuse; j < r->nlent; j++) holding += r->runs[j].npages;
      holders += r->nlent > r->nuse;
      fronting += r->nuse < r->nruns;
    }
  }
  uint64_t set_blocks = 0, view_sets = 0;
  for (int i = 0; i < st->npools; i++) {
    const struct spool *p = st->pools[i];
    uint64_t whole = 0, handles = 0, ignore = 0;
    if (check_set(&p->prim_free, p, RK_PRIM, &whole, &handles, err) || check_set(&p->stitch_free, p, RK_STITCH, &ignore, &ignore, err) ||
        check_set(&p->small_free, p, RK_SMALL, &ignore, &ignore, err)) return -1;
    if (handles != p->prim_handle_pages)
      FAIL("stream %llu: %llu pages of whole free handles in primitive blocks, counted %llu", (unsigned long long)p->stream, (unsigned long long)handles, (unsigned long long)p->prim_handle_pages);
    if (whole != p->prim_free_pages)
      FAIL("stream %llu: %llu whole free pages in primitive blocks, counted %llu", (unsigned long long)p->stream, (unsigned long long)whole, (unsigned long long)p->prim_free_pages);
    set_blocks += p->prim_free.count + p->stitch_free.count + p->small_free.count;
    for (struct ordnode *n = ordset_first(&p->views); n; n = ordset_next(n)) {
      const struct srange *v = ORD_ENTRY(n, struct srange, vnode);
      if (v->kind != RK_STITCH || v->pool != p || v->nlent == v->nruns || !v->cached) FAIL("stream %llu: the views that gave pages back hold a busy, whole or foreign range", (unsigned long long)p->stream);
      view_sets++;
    }
    for (struct ordnode *n = ordset_first(&p->fronts); n; n = ordset_next(n), fronts++) {
      const struct srange *v = ORD_ENTRY(n, struct srange, vnode);
      if (v->kind != RK_STITCH || v->pool != p || v->cached || v->nuse >= v->nruns) FAIL("stream %llu: the ranges serving from their front hold a cached, whole or foreign range", (unsigned long long)p->stream);
    }
    uint64_t small_cached = 0;
    for (const struct srange *r = p->small_cached.head; r; r = r->lru_next) {
      if (r->kind != RK_SMALL || r->pool != p || r->nbusy) FAIL("stream %llu: small cache holds a busy or foreign range", (unsigned long long)p->stream);
      small_cached++;
    }
    if (small_cached != p->small_cached.count || small_cached != p->small_cached.pages)
      FAIL("stream %llu: %llu cached small ranges, counted %llu", (unsigned long long)p->stream, (unsigned long long)small_cached, (unsigned long long)p->small_cached.count);
  }
  if (set_blocks != free_blocks) FAIL("%llu free blocks but %llu in the free sets", (unsigned long long)free_blocks, (unsigned long long)set_blocks);
  if (lent != runs) FAIL("%llu lent blocks but %llu runs lent to stitched and small ranges", (unsigned long long)lent, (unsigned long long)runs);
  uint64_t lru = 0, held_list = 0;
  for (const struct srange *v = st->views.head; v; v = v->lru_next) {
    lru++;
    released += v->nlent < v->nruns;
    if (v->holding != (v->nlent > 0)) FAIL("view %#llx: %u runs lent to it, %sin the holding list", (unsigned long long)v->va, v->nlent, v->holding ? "" : "not ");
  }
  for (const struct srange *v = st->hold_head; v; v = v->hold_next, held_list++)
    if (!v->holding || v->kind != RK_STITCH || (v->cached ? v->nlent == 0 : v->nlent <= v->nuse))
      FAIL("the holding list has range %#llx, which holds no idle pages", (unsigned long long)v->va);
  if (held_list != holders) FAIL("%llu ranges hold idle lent pages, %llu in the holding list", (unsigned long long)holders, (unsigned long long)held_list);
  if (pinned != st->pinned) FAIL("%llu views pin a lone head page, counted %llu", (unsigned long long)pinned, (unsigned long long)st->pinned);
  if (fronting != fronts) FAIL("%llu ranges serve from their front, %llu in the pools' sets", (unsigned long long)fronting, (unsigned long long)fronts);
  if (released != view_sets || views != lru || views != st->views.count)
    FAIL("%llu cached stitched ranges (%llu released, %llu in the pools' sets), %llu in the LRU list, counted %llu", (unsigned long long)views,
         (unsigned long long)released, (unsigned long long)view_sets, (unsigned long long)lru, (unsigned long long)st->views.count);
  if (holding != st->holding_pages) FAIL("%llu pages held by wholly free stitched ranges, counted %llu", (unsigned long long)holding, (unsigned long long)st->holding_pages);
  if (views > st->max_stitched) FAIL("%llu views kept, more than max_stitched=%llu", (unsigned long long)views, (unsigned long long)st->max_stitched);
  if (mapped * ST_PAGE != st->held) FAIL("%llu pages mapped in primitive ranges but %llu bytes held", (unsigned long long)mapped, (unsigned long long)st->held);
  if (live != st->live_bytes) FAIL("%llu bytes in live blocks, counted %llu", (unsigned long long)live, (unsigned long long)st->live_bytes);
  return 0;
}
