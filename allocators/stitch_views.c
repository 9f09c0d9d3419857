/* stitch_views.c - the `stitch` strategy's views: wholly free stitched ranges kept mapped
 * (GMLake's fused blocks). They wait in an LRU list (max_stitched of them), holding their
 * pages until those are wanted elsewhere; one that gave pages back waits in its pool's
 * views, to be taken again once those pages are free at home, or repaired (busy pages
 * remapped with free ones). A view also serves a smaller request from its front: only the
 * pages that request needs are in use, the others wait lent to it, idle, given back on
 * demand like a cached view's (so a view built for a long batch serves the shorter ones
 * after it without mapping, and is whole again when freed); a view a request of its own
 * size found busy that way is kept whole from then on. Also the cache of wholly free
 * small ranges, which shares the busy-count transitions. See stitch.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stitch.h"

/* a pool's views that gave pages back, by (size, va); inlined into their descents */
static inline int view_order(const struct ordnode *a, const struct ordnode *b) {
  const struct srange *x = ORD_ENTRY(a, struct srange, vnode), *y = ORD_ENTRY(b, struct srange, vnode);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->va < y->va ? -1 : x->va > y->va;
}

ORDSET_TYPED(viewset, view_order)

/* a pool's stitched ranges serving from their front, by (full size, va) */
static inline int front_order(const struct ordnode *a, const struct ordnode *b) {
  const struct srange *x = ORD_ENTRY(a, struct srange, vnode), *y = ORD_ENTRY(b, struct srange, vnode);
  uint64_t sx = view_full_size(x), sy = view_full_size(y);
  if (sx != sy) return sx < sy ? -1 : 1;
  return x->va < y->va ? -1 : x->va > y->va;
}

ORDSET_TYPED(frontset, front_order)

int stitch_views_front_cmp(const struct ordnode *a, const struct ordnode *b) { return front_order(a, b); }

/* A request of r bytes is about to stitch or repair: a view that fits it whole but is
 * serving a smaller one from its front is wanted whole, and from now on is not lent by
 * its front (in a training loop the same request comes again next iteration). */
void stitch_views_mark_wanted(struct spool *p, uint64_t r) {
  uint64_t pages = (r + ST_PAGE - 1) / ST_PAGE;
  struct srange key = {.npages = pages, .vbase = 0, .va = pages * ST_PAGE - r};   /* full size exactly r, lowest va */
  for (struct ordnode *o = frontset_lower_bound(&p->fronts, &key.vnode); o; o = ordset_next_inline(o)) {
    struct srange *s = ORD_ENTRY(o, struct srange, vnode);
    if (view_full_size(s) - r >= ST_PAGE) break;
    s->keep_whole = 1;
  }
}

int stitch_views_cmp(const struct ordnode *a, const struct ordnode *b) { return view_order(a, b); }

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

/* a view taken or unmapped no longer pins a head page */
static void unpin(struct stitch *st, struct srange *r) {
  if (!r->pinned) return;
  r->pinned = 0;
  st->pinned--;
}

void stitch_views_range_uncache(struct stitch *st, struct srange *r) {
  if (r->kind == RK_SMALL) { stitch_ranges_rlist_remove(&r->pool->small_cached, r); return; }
  unpin(st, r);
  stitch_ranges_rlist_remove(&st->views, r);            /* a holding view, taken by best fit */
  hold_remove(st, r);
  st->holding_pages -= whole_pages_of(r);
  r->nuse = r->nruns;
}

/* A wholly free small range is cached with its page. A wholly free stitched range keeps
 * its pages (holding) until they are wanted elsewhere; either way it stays mapped, in an
 * LRU list of views, the least recently used beyond max_stitched unmapped. One that served
 * a request from its front (its last runs not lent) becomes whole again, a view that gave
 * those pages back. */
void stitch_views_range_cache(struct stitch *st, struct srange *r) {
  if (r->kind == RK_SMALL) { stitch_ranges_rlist_push(&r->pool->small_cached, r); return; }
  if (r->nuse < r->nruns) {   /* it served from its front: whole again */
    ordset_erase_inline(&r->pool->fronts, &r->vnode);
    hold_remove(st, r);
    for (uint32_t j = r->nuse; j < r->nlent; j++) st->holding_pages -= run_whole(r, j);
    free_erase(r->first);
    r->size = view_full_size(r);
    r->first->size = r->size;
    if (r->nlent < r->nruns) viewset_insert(&r->pool->views, &r->vnode);
    else free_insert(r->first);
  }
  stitch_ranges_rlist_push(&st->views, r);
  hold_push(st, r);
  for (uint32_t j = 0; j < r->nlent; j++) st->holding_pages += run_whole(r, j);
  while (st->views.count > st->max_stitched) stitch_views_evict(st, st->views.head);
}

/* A holding view gives back the pages of its last runs (at least k whole pages; all when
 * k is more than ST_PARTIAL_RELEASE, so that they merge into large free blocks at home
 * that a large request can take without stitching) to their homes; it stays mapped and, with any run given back, waits in its pool's
 * views to be taken again (once those pages are free) or repaired. A head run (its first
 * page shared with a block at home) is given back like the others when it has a whole
 * page besides, and found again through that page; a lone head page (no whole page to
 * give) stays lent, so the view stays whole enough to be taken again rather than being
 * unmapped and built anew. A range in use (serving from its front) gives back only its
 * idle runs. Returns the whole pages given back. */
uint64_t stitch_views_release(struct stitch *st, struct srange *r, uint64_t k) {
  uint64_t got = 0;
  uint32_t keep = r->cached ? 0 : r->nuse;   /* a range in use keeps the runs it uses */
  if (k > ST_PARTIAL_RELEASE) k = r->npages;   /* asked for much: all, to merge into large free blocks */
  if (r->cached && r->nlent == r->nruns) {
    free_erase(r->first);
    viewset_insert(&r->pool->views, &r->vnode);
  }
  while (r->nlent > keep && got < k) {
    uint32_t j = r->nlent - 1;
    if (j == 0 && r->va != r->vbase && !run_whole(r, 0)) {   /* a lone head page */
      if (r->pinned) break;
      /* kept when the page is at most 1/32 of the view and views pin at most 1% of held memory */
      if (r->npages < ST_PIN_MIN_PAGES || (st->pinned + 1) * ST_PAGE > st->held / 100) {
        stitch_views_evict(st, r);
        return got;
      }
      r->pinned = 1;   /* stays lent: the view stays mapped, to be taken again */
      st->pinned++;
      break;
    }
    stitch_ranges_unlend(st, r->runs[j].lent);
    r->runs[j].lent = NULL;
    if (--r->nlent == keep) hold_remove(st, r);
    got += run_whole(r, j);
    st->holding_pages -= run_whole(r, j);
  }
  return got;
}

/* The free primitive block holding all of run u, or NULL: none of its whole pages is
 * busy or unmapped, walking back over free pages reaches the block's first whole page,
 * and for a head run (from inside a page) that block starts at or before it. A lone head
 * page is not looked for. */
static struct sblock *run_home_block(const struct srun *u) {
  const struct srange *h = u->home;
  uint64_t in = (u->addr - h->va) % ST_PAGE, p0 = (u->addr - h->va) / ST_PAGE, first = p0 + (in != 0);
  if (first >= p0 + u->npages) return NULL;
  for (uint64_t i = first; i < p0 + u->npages; i++)
    if (h->busy[i] || !h->mapped[i]) return NULL;
  for (uint64_t q = first;; q--) {
    if (h->head[q]) return h->head[q]->addr <= u->addr ? h->head[q] : NULL;
    if (q == 0 || h->busy[q - 1] || !h->mapped[q - 1]) return NULL;   /* not reached: free pages lie in a FREE block */
  }
}

/* bytes of run u (a head run's first page from inside it) */
static uint64_t run_bytes(const struct srun *u) { return u->npages * ST_PAGE - (u->addr - u->home->va) % ST_PAGE; }

/* Pages [0, k) of view s lent to it or free at home: the runs it gave back, as far as
 * they lie in the first k pages, each held whole by a free block. */
static int prefix_available(const struct srange *s, uint64_t k) {
  uint64_t at = 0;
  for (uint32_t j = 0; j < s->nruns && at < k; at += s->runs[j].npages, j++) {
    if (j < s->nlent) continue;
    struct srun u = s->runs[j];
    if (u.npages > k - at) u.npages = k - at;
    if (!run_home_block(&u)) return 0;
  }
  return 1;
}

/* r may take view s: all of it, or its front unless s is wanted whole */
static int prefix_ok(const struct srange *s, uint64_t r) {
  uint64_t k = view_prefix_pages(s, r);
  return !s->keep_whole || k >= s->npages;
}

#define VIEW_SCAN 16   /* views looked at per search, smallest first */

/* The smallest view that can serve r now, mapped as it is: r fills it to within its
 * last page, or (unless exact) takes its front (the pages it needs lent to it, the rest
 * given back) - a view built for a longer batch serves the shorter ones after it. Wholly
 * lent views wait among the stitched free blocks (stitch_free), views that gave pages
 * back in the pool's views; a few of each are looked at, smallest first. */
struct srange *stitch_views_find(struct spool *p, uint64_t r, int exact) {
  struct srange *best = NULL;
  if (!exact) {
    struct sblock *b = stitch_fset_lower_bound(&p->stitch_free, r);
    for (int n = 0; b && n < VIEW_SCAN; n++, b = stitch_fset_next(&p->stitch_free, b))
      if (b->r->cached) { if (prefix_ok(b->r, r)) best = b->r; break; }
  }
  struct srange key = {.size = r};
  struct ordnode *o = viewset_lower_bound(&p->views, &key.vnode);
  for (int n = 0; o && n < VIEW_SCAN; n++, o = ordset_next_inline(o)) {
    struct srange *s = ORD_ENTRY(o, struct srange, vnode);
    if (exact && s->size - r >= ST_PAGE) break;
    if (best && (best->size < s->size || (best->size == s->size && best->va < s->va))) break;
    if (prefix_ok(s, r) && prefix_available(s, view_prefix_pages(s, r))) return s;
  }
  return best;
}

/* the runs' storage of s with room for one more */
static void runs_room(struct srange *s) {
  if (s->runs == s->runs_mem && s->runs_cap > s->nruns) return;
  uint32_t cap = 2 * (s->nruns + 1) < 8 ? 8 : 2 * (s->nruns + 1);
  struct srun *n = malloc(cap * sizeof *n);
  if (!n) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
  memcpy(n, s->runs, s->nruns * sizeof *n);
  free(s->runs_mem);
  s->runs = s->runs_mem = n;
  s->runs_cap = cap;
}

/* The number of runs of s that cover its first k pages, a run split in two at page k
 * where it straddles it (and its lent block at home with it). */
static uint32_t runs_split_at(struct stitch *st, struct srange *s, uint64_t k) {
  uint64_t at = 0;
  uint32_t j = 0;
  for (; j < s->nruns && at + s->runs[j].npages <= k; j++) at += s->runs[j].npages;
  if (j == s->nruns || at == k) return j;
  runs_room(s);
  memmove(s->runs + j + 2, s->runs + j + 1, (s->nruns - j - 1) * sizeof *s->runs);
  struct srun *u = &s->runs[j], *v = &s->runs[j + 1];
  uint64_t in = (u->addr - u->home->va) % ST_PAGE, front = k - at;
  *v = (struct srun){.home = u->home, .addr = u->addr - in + front * ST_PAGE, .npages = u->npages - front};
  u->npages = front;
  if (u->lent) {
    v->lent = sb_split(st, u->lent, v->addr - u->lent->addr);
    u->home->nbusy++;
  }
  s->nruns++;
  if (j < s->nlent) s->nlent++;
  return j + 1;
}

/* A view leaves the cache to be used: out of the LRU and holding lists and of the set it
 * waits in; its still-lent pages stop counting as held. */
static void view_unlist(struct stitch *st, struct srange *s) {
  unpin(st, s);
  if (s->nlent == s->nruns) free_erase(s->first);
  else ordset_erase_inline(&s->pool->views, &s->vnode);
  stitch_ranges_rlist_remove(&st->views, s);
  hold_remove(st, s);
  for (uint32_t j = 0; j < s->nlent; j++) st->holding_pages -= run_whole(s, j);
}

/* s serves from its first k pages: those lent to it (given back runs lent again), the
 * runs after them given back home; its one free block spans them, in stitch_free. */
static void view_front(struct stitch *st, struct srange *s, uint64_t k) {
  uint32_t m = runs_split_at(st, s, k);
  for (uint32_t j = s->nlent; j < m; j++) {
    struct srun *u = &s->runs[j];
    u->lent = stitch_ranges_lend_at(st, run_home_block(u), u->addr, run_bytes(u), s);
  }
  if (s->nlent < m) s->nlent = m;
  s->nuse = m;
  s->size = k * ST_PAGE - (s->va - s->vbase);
  s->first->size = s->size;
  free_insert(s->first);
  if (m == s->nruns) return;
  frontset_insert(&s->pool->fronts, &s->vnode);
  if (s->nlent == m) return;
  hold_push(st, s);   /* its idle lent runs wait to be given back on demand, as a view's do */
  for (uint32_t j = m; j < s->nlent; j++) st->holding_pages += run_whole(s, j);
}

void stitch_views_take(struct stitch *st, struct srange *s, uint64_t r) {
  view_unlist(st, s);
  view_front(st, s, view_prefix_pages(s, r));
}

void stitch_views_evict(struct stitch *st, struct srange *s) {
  unpin(st, s);
  if (s->nlent == s->nruns) free_erase(s->first);
  else ordset_erase_inline(&s->pool->views, &s->vnode);
  stitch_ranges_rlist_remove(&st->views, s);
  hold_remove(st, s);
  for (uint32_t j = 0; j < s->nlent; j++) {
    st->holding_pages -= run_whole(s, j);
    stitch_ranges_unlend(st, s->runs[j].lent);
  }
  stitch_maps_view_unmap_span(st, s, 0, s->npages);
  dev_va_release(st->dev, s->vbase, s->npages * ST_PAGE);
  stitch_ranges_free(st, s);
}

static int page_free(const struct srange *h, uint64_t i) { return h->mapped[i] && !h->busy[i]; }

/* pages of the runs view s gave back that are busy at home now (counted up to stop) */
static uint64_t view_busy_pages(const struct srange *s, uint64_t stop) {
  uint64_t busy = 0;
  for (uint32_t j = s->nlent; j < s->nruns && busy < stop; j++) {
    uint64_t p0 = (s->runs[j].addr - s->runs[j].home->va) / ST_PAGE;
    for (uint64_t i = 0; i < s->runs[j].npages; i++) busy += !page_free(s->runs[j].home, p0 + i);
  }
  return busy;
}

/* pages of the runs view s gave back */
static uint64_t view_given_back(const struct srange *s) {
  uint64_t n = 0;
  for (uint32_t j = s->nlent; j < s->nruns; j++) n += s->runs[j].npages;
  return n;
}

/* The view r fits in (exactly, or in its front) with the fewest pages busy at home, if
 * remapping those (an unmap and a map each) costs fewer calls than stitching the pages r
 * needs anew (a map each, and an unmap when evicted), and the free pages (free_pages)
 * can lend it all it gave back. A repaired view has all its pages lent again; those r
 * does not use wait idle, given back on demand. */
struct srange *stitch_views_repairable(struct spool *p, uint64_t r, uint64_t free_pages) {
  struct srange key = {.size = r}, *best = NULL;
  uint64_t best_busy = UINT64_MAX;
  int n = 0;
  for (struct ordnode *o = viewset_lower_bound(&p->views, &key.vnode); o && n < VIEW_SCAN; o = ordset_next_inline(o), n++) {
    struct srange *s = ORD_ENTRY(o, struct srange, vnode);
    if (!prefix_ok(s, r) || (!s->nlent && s->va != s->vbase)) continue;   /* its head run given back: taken again only where free */
    if (view_given_back(s) > free_pages) continue;
    uint64_t limit = view_prefix_pages(s, r) / 2;
    if (best_busy < limit) limit = best_busy;
    uint64_t busy = view_busy_pages(s, limit);
    if (busy < limit) { best_busy = busy; best = s; }
  }
  return best;
}

/* Serve r from view s again: the pages of the runs it gave back are lent to it again
 * where they are free, and replaced where busy by other free pages (gathered as for a new
 * stitch); the pieces holding replaced pages are unmapped and mapped anew (in pieces
 * again); then r takes its front. Precondition:
 * stitch_ranges_pages_free_total() >= the pages it gave back. On a device error s is evicted. */
int stitch_views_repair(struct stitch *st, struct srange *s, uint64_t r) {
  view_unlist(st, s);
  struct srun *old = s->runs;
  uint32_t nold = s->nruns, kept = s->nlent;
  uint8_t *fresh = stitch_ranges_page_scratch(st, s->npages);
  s->runs = stitch_ranges_run_scratch(st, s->npages);
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
        stitch_ranges_add_run(s, stitch_ranges_lend_at(st, run_home_block(&sub), sub.addr, run_bytes(&sub), s));
      } else {
        memset(fresh + slot, 1, len);
        stitch_ranges_gather(st, s->pool, len, s);
      }
    }
  }
  s->nlent = s->nruns;
  uint64_t got = 0;
  for (uint32_t j = 0; j < s->nruns; j++) got += s->runs[j].npages;
  int rc = slot == s->npages && got == s->npages ? 0 : -1;
  if (!rc) {
    stitch_maps_view_unmap_pieces_of(st, s, fresh);   /* a piece holding a busy page is mapped anew, whole */
    for (uint64_t q = 0, e; q < s->npages && !rc; q = e) {
      for (e = q; e < s->npages && fresh[e] == fresh[q]; e++) {}
      if (fresh[q]) rc = stitch_maps_view_map_span(st, s, q, e);
    }
  }
  if (rc) {   /* unmap what is mapped, give everything back */
    if (got != s->npages) snprintf(st->dev->err, FB_ERRLEN, "stitch: found %llu of %llu free pages to repair a view",
                                   (unsigned long long)got, (unsigned long long)s->npages);
    stitch_maps_view_unmap_span(st, s, 0, s->npages);
    dev_va_release(st->dev, s->vbase, s->npages * ST_PAGE);
    for (uint32_t j = 0; j < s->nruns; j++) stitch_ranges_unlend(st, s->runs[j].lent);
    s->runs = NULL;
    stitch_ranges_free(st, s);
    return rc < 0 ? rc : -1;
  }
  stitch_ranges_runs_keep(s);
  view_front(st, s, view_prefix_pages(s, r));
  return 0;
}
