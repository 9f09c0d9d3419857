/* stitch_views.c - the `stitch` strategy's views: wholly free stitched ranges kept mapped
 * (GMLake's fused blocks). They wait in an LRU list (max_stitched of them), holding their
 * pages until those are wanted elsewhere; one that gave pages back waits in its pool's
 * views, to be taken again once those pages are free at home, or repaired (busy pages
 * remapped with free ones). Also the cache of wholly free small ranges, which shares the
 * busy-count transitions. See stitch.h. */
#include <stdio.h>
#include <string.h>
#include "stitch.h"

/* a pool's views that gave pages back, by (size, va); inlined into their descents */
static inline int view_order(const struct ordnode *a, const struct ordnode *b) {
  const struct srange *x = ORD_ENTRY(a, struct srange, vnode), *y = ORD_ENTRY(b, struct srange, vnode);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->va < y->va ? -1 : x->va > y->va;
}

ORDSET_TYPED(viewset, view_order)

int view_cmp(const struct ordnode *a, const struct ordnode *b) { return view_order(a, b); }

/* the holding list: views in the LRU list with pages lent to them, in LRU order */
static void hold_push(struct stitch *st, struct srange *r) {
  r->hold_prev = st->hold_tail;
  r->hold_next = NULL;
  if (st->hold_tail) st->hold_tail->hold_next = r;
  else st->hold_head = r;
  st->hold_tail = r;
  r->holding = 1;
}

static void hold_remove(struct stitch *st, struct srange *r) {
  if (!r->holding) return;
  if (r->hold_prev) r->hold_prev->hold_next = r->hold_next;
  else st->hold_head = r->hold_next;
  if (r->hold_next) r->hold_next->hold_prev = r->hold_prev;
  else st->hold_tail = r->hold_prev;
  r->hold_prev = r->hold_next = NULL;
  r->holding = 0;
}


/* whole pages of run j of stitched or small range r (a head run's first page is shared) */
static uint64_t run_whole(const struct srange *r, uint32_t j) {
  return r->runs[j].npages - (j == 0 && r->kind == RK_STITCH && r->va != r->vbase);
}

void range_uncache(struct stitch *st, struct srange *r) {
  if (r->kind == RK_SMALL) { rlist_remove(&r->pool->small_cached, r); return; }
  rlist_remove(&st->views, r);            /* a holding view, taken by best fit */
  hold_remove(st, r);
  st->holding_pages -= whole_pages_of(r);
}

/* A wholly free small range is cached with its page. A wholly free stitched range keeps
 * its pages (holding) until they are wanted elsewhere; either way it stays mapped, in an
 * LRU list of views, the least recently used beyond max_stitched unmapped. */
void range_cache(struct stitch *st, struct srange *r) {
  if (r->kind == RK_SMALL) { rlist_push(&r->pool->small_cached, r); return; }
  rlist_push(&st->views, r);
  hold_push(st, r);
  st->holding_pages += whole_pages_of(r);
  while (st->views.count > st->max_stitched) view_evict(st, st->views.head);
}

/* A holding view gives back the pages of its last runs (at least k whole pages; all when
 * k is more than ST_PARTIAL_RELEASE, so that they merge into large free blocks at home
 * that a large request can take without stitching) to their homes; it stays mapped and, with any run given back, waits in its pool's
 * views to be taken again (once those pages are free) or repaired. A head run is never
 * given back alone: a view would have to give it back is unmapped instead. Returns the
 * whole pages given back. */
uint64_t view_release(struct stitch *st, struct srange *r, uint64_t k) {
  uint64_t got = 0;
  if (k > ST_PARTIAL_RELEASE) k = r->npages;   /* asked for much: all, to merge into large free blocks */
  if (r->nlent == r->nruns) {
    free_erase(r->first);
    viewset_insert(&r->pool->views, &r->vnode);
  }
  while (r->nlent && got < k) {
    uint32_t j = r->nlent - 1;
    if (j == 0 && r->va != r->vbase) {
      got += run_whole(r, 0);
      view_evict(st, r);
      return got;
    }
    unlend(st, r->runs[j].lent);
    r->runs[j].lent = NULL;
    if (!--r->nlent) hold_remove(st, r);
    got += run_whole(r, j);
    st->holding_pages -= run_whole(r, j);
  }
  return got;
}

/* The free primitive block holding all of run u, or NULL: none of its pages is busy or
 * unmapped, and walking back over free pages reaches the block's first whole page. */
static struct sblock *run_home_block(const struct srun *u) {
  const struct srange *h = u->home;
  uint64_t p0 = (u->addr - h->va) / ST_PAGE;
  for (uint64_t i = p0; i < p0 + u->npages; i++)
    if (h->busy[i] || !h->mapped[i]) return NULL;
  for (uint64_t q = p0;; q--) {
    if (h->head[q]) return h->head[q];
    if (q == 0 || h->busy[q - 1] || !h->mapped[q - 1]) return NULL;   /* not reached: free pages lie in a FREE block */
  }
}

/* its given-back runs' pages all free at home (the others are still lent to it) */
static int view_available(const struct srange *s) {
  for (uint32_t j = s->nlent; j < s->nruns; j++)
    if (!run_home_block(&s->runs[j])) return 0;
  return 1;
}

/* The smallest view that r fills to within its last page and whose pages are all free,
 * if it is a better fit than `better` (a free block found elsewhere; may be NULL). */
struct srange *view_find(struct spool *p, uint64_t r, const struct sblock *better) {
  struct srange key = {.size = r};
  for (struct ordnode *n = viewset_lower_bound(&p->views, &key.vnode); n; n = ordset_next_inline(n)) {
    struct srange *s = ORD_ENTRY(n, struct srange, vnode);
    if (s->size - r >= ST_PAGE) break;
    if (better && (better->size < s->size || (better->size == s->size && better->addr < s->va))) break;
    if (view_available(s)) return s;
  }
  return NULL;
}

/* A view leaves the cache to be used: its still-lent pages stop counting as held. */
static void view_unlist(struct stitch *st, struct srange *s) {
  ordset_erase_inline(&s->pool->views, &s->vnode);
  rlist_remove(&st->views, s);
  hold_remove(st, s);
  for (uint32_t j = 0; j < s->nlent; j++) st->holding_pages -= run_whole(s, j);
}

void view_take(struct stitch *st, struct srange *s) {
  view_unlist(st, s);
  for (uint32_t j = s->nlent; j < s->nruns; j++) {
    struct srun *u = &s->runs[j];
    u->lent = lend_at(st, run_home_block(u), u->addr, u->npages * ST_PAGE, s);
  }
  s->nlent = s->nruns;
  free_insert(s->first);
}

void view_evict(struct stitch *st, struct srange *s) {
  if (s->nlent == s->nruns) free_erase(s->first);
  else ordset_erase_inline(&s->pool->views, &s->vnode);
  rlist_remove(&st->views, s);
  hold_remove(st, s);
  for (uint32_t j = 0; j < s->nlent; j++) {
    st->holding_pages -= run_whole(s, j);
    unlend(st, s->runs[j].lent);
  }
  for (uint64_t i = 0; i < s->npages; i++) dev_unmap(st->dev, s->vbase + i * ST_PAGE, ST_PAGE);
  dev_va_release(st->dev, s->vbase, s->npages * ST_PAGE);
  range_free(st, s);
}

static int page_free(const struct srange *h, uint64_t i) { return h->mapped[i] && !h->busy[i]; }

/* pages of the runs a view gave back that are busy at home now */
static uint64_t view_busy_pages(const struct srange *s, uint64_t stop) {
  uint64_t busy = 0;
  for (uint32_t j = s->nlent; j < s->nruns && busy < stop; j++) {
    uint64_t p0 = (s->runs[j].addr - s->runs[j].home->va) / ST_PAGE;
    for (uint64_t i = 0; i < s->runs[j].npages; i++) busy += !page_free(s->runs[j].home, p0 + i);
  }
  return busy;
}

/* The view of exactly npages pages with the fewest pages busy at home, if remapping
 * those (an unmap and a map each) costs fewer calls than stitching anew (npages maps). */
struct srange *view_repairable(struct spool *p, uint64_t npages) {
  struct srange key = {.size = npages * ST_PAGE}, *best = NULL;
  uint64_t best_busy = npages / 2;
  for (struct ordnode *n = viewset_lower_bound(&p->views, &key.vnode); n; n = ordset_next_inline(n)) {
    struct srange *s = ORD_ENTRY(n, struct srange, vnode);
    if (s->size != key.size) break;
    uint64_t busy = view_busy_pages(s, best_busy);
    if (busy < best_busy) { best_busy = busy; best = s; }
  }
  return best;
}

/* Serve view s again: the pages of the runs it gave back are lent to it again where they
 * are free, and replaced where busy by other free pages (gathered as for a new stitch),
 * unmapped and mapped at their offsets. Precondition: pages_free_total() >= the pages it
 * gave back. On a device error s is evicted. */
int view_repair(struct stitch *st, struct srange *s) {
  view_unlist(st, s);
  struct srun *old = s->runs;
  uint32_t nold = s->nruns, kept = s->nlent;
  uint8_t *fresh = page_scratch(st, s->npages);
  s->runs = run_scratch(st, s->npages);
  memcpy(s->runs, old, kept * sizeof *old);
  s->nruns = kept;
  uint64_t slot = 0;
  for (uint32_t j = 0; j < kept; j++) slot += old[j].npages;
  for (uint32_t j = kept; j < nold; j++) {
    const struct srange *h = old[j].home;
    uint64_t p0 = (old[j].addr - h->va) / ST_PAGE;
    for (uint64_t i = 0, len; i < old[j].npages; i += len, slot += len) {
      int f = page_free(h, p0 + i);
      for (len = 1; i + len < old[j].npages && page_free(h, p0 + i + len) == f; len++) {}
      if (f) {
        struct srun sub = {.home = old[j].home, .addr = old[j].addr + i * ST_PAGE, .npages = len};
        add_run(s, lend_at(st, run_home_block(&sub), sub.addr, len * ST_PAGE, s));
      } else {
        memset(fresh + slot, 1, len);
        gather(st, s->pool, len, s);
      }
    }
  }
  s->nlent = s->nruns;
  int rc = slot == s->npages ? 0 : -1;
  for (uint64_t q = 0; q < s->npages; q++)
    if (fresh[q]) dev_unmap(st->dev, s->vbase + q * ST_PAGE, ST_PAGE);
  uint64_t q = 0;
  for (uint32_t j = 0; j < s->nruns && !rc; j++)
    for (uint64_t i = 0; i < s->runs[j].npages && !rc; i++, q++)
      if (fresh[q] && (rc = dev_map(st->dev, s->vbase + q * ST_PAGE, ST_PAGE, run_handles(&s->runs[j])[i]))) fresh[q] = 2;
  if (rc || q != s->npages) {   /* unmap what is mapped (kept pages, remapped ones), give everything back */
    if (!rc) snprintf(st->dev->err, FB_ERRLEN, "stitch: found %llu of %llu free pages to repair a view",
                      (unsigned long long)q, (unsigned long long)s->npages);
    for (uint64_t k = 0; k < s->npages; k++)
      if (!fresh[k] || (fresh[k] == 1 && k < q)) dev_unmap(st->dev, s->vbase + k * ST_PAGE, ST_PAGE);
    dev_va_release(st->dev, s->vbase, s->npages * ST_PAGE);
    for (uint32_t j = 0; j < s->nruns; j++) unlend(st, s->runs[j].lent);
    s->runs = NULL;
    range_free(st, s);
    return rc < 0 ? rc : -1;
  }
  runs_keep(s);
  free_insert(s->first);
  return 0;
}
