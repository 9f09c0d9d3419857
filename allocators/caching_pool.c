/* caching_pool.c - PyTorch's BlockPool and Block mechanics (see caching_policy.h): the
 * free-block set ordered by (stream, size, address), best fit with the oversize rules,
 * splitting a block's front off, coalescing free neighbours, and the Block free list.
 * The set is kept per stream in size bins (caching_bin.h: a short list, a treap past it;
 * see struct cpool); the hot operations are inline in caching_pool.h, wrapped here for the
 * strategies' other paths. */
#include <stdlib.h>
#include <string.h>
#include "caching_policy.h"
#include "caching_pool.h"

#define SLAB_BLOCKS 256

struct cblock_slab {
  struct cblock_slab *next;
  struct cblock blocks[SLAB_BLOCKS];
};

/* a full list and b into a tree */
void cbin_to_tree(struct cbin *bin, struct cblock *b) {
  struct ordnode *n = bin->t.root;
  ordset_init(&bin->t, block_cmp);
  bin->tree = 1;
  while (n) {
    struct ordnode *next = n->right;
    cbin_tree_put(&bin->t, ORD_ENTRY(n, struct cblock, node));
    n = next;
  }
  cbin_tree_put(&bin->t, b);
}

/* a tree of CBIN_BACK blocks or fewer back to a list (in the tree's order) */
void cbin_to_list(struct cbin *bin) {
  struct ordnode *v[CBIN_BACK];
  size_t k = 0;
  for (struct ordnode *n = ordset_first_inline(&bin->t); n && k < CBIN_BACK; n = ordset_next_inline(n)) v[k++] = n;
  ordset_init(&bin->t, block_cmp);
  bin->tree = 0;
  for (size_t j = k; j-- > 0;) {   /* pushed last first: the list in the tree's order */
    v[j]->parent = NULL;
    cbin_push(bin, v[j]);
  }
}

void cblock_store_init(struct cblock_store *s) {
  s->free_list = NULL;
  s->slabs = NULL;
  s->nfree = 0;
}

void cblock_store_destroy(struct cblock_store *s) {
  while (s->slabs) {
    struct cblock_slab *n = s->slabs->next;
    free(s->slabs);
    s->slabs = n;
  }
  s->free_list = NULL;
  s->nfree = 0;
}

int cblock_store_grow(struct cblock_store *s) {
  struct cblock_slab *sl = malloc(sizeof *sl);
  if (!sl) return -1;
  sl->next = s->slabs;
  s->slabs = sl;
  for (int i = SLAB_BLOCKS - 1; i >= 0; i--) {
    sl->blocks[i].next = s->free_list;
    s->free_list = &sl->blocks[i];
  }
  s->nfree += SLAB_BLOCKS;
  return 0;
}


void cpool_init(struct cpool *p, int is_small) {
  ordset_init(&p->streams, stream_cmp);
  ordset_init(&p->largest, largest_cmp);
  p->stale = NULL;
  p->last = NULL;
  p->free_bytes = 0;
  p->get_free_calls = 0;
  p->is_small = is_small;
  p->owner = 0;
}

int cpool_prepare(struct cblock_store *s, struct cpool *small, struct cpool *large) {
  if (!cpool_stream(small, 0, 1) || !cpool_stream(large, 0, 1)) return -1;
  return cblock_store_reserve(s, 1);
}

void cpool_destroy(struct cpool *p) {
  struct ordnode *n;
  while ((n = ordset_first_inline(&p->streams))) {
    ordset_erase_inline(&p->streams, n);
    free(stream_entry(n));
  }
  ordset_init(&p->largest, largest_cmp);
  p->stale = NULL;
  p->last = NULL;
}

struct cstream *cpool_stream(struct cpool *p, uint64_t stream, int create) {
  if (p->last && p->last->stream == stream) return p->last;
  struct cstream *cs = NULL;
  for (struct ordnode *n = p->streams.root; n;) {   /* the streams' set by stream id (no 52 KB key on the stack) */
    struct cstream *at = stream_entry(n);
    if (at->stream == stream) { cs = at; break; }
    n = stream < at->stream ? n->left : n->right;
  }
  if (!cs) {
    if (!create) return NULL;
    cs = malloc(sizeof *cs);
    if (!cs) return NULL;
    memset(cs->nonempty, 0, sizeof cs->nonempty);
    for (unsigned i = 0; i < NBINS; i++) cbin_init(&cs->bins[i]);
    cs->stream = stream;
    cs->pool = p;
    cs->count = 0;
    cs->largest = 0;
    cs->stale = 0;
    cs->next_stale = NULL;
    streams_insert(&p->streams, &cs->node);
  }
  p->last = cs;
  return cs;
}


/* cs's place in pool->largest for its largest free block now (out when it has none) */
static void largest_update(struct cpool *p, struct cstream *cs) {
  if (cs->largest) ordset_erase_inline(&p->largest, &cs->lnode);
  unsigned i = cs->count ? bin_prev(cs, NBINS - 1) : NBINS;
  cs->largest = i < NBINS ? bin_last(cs, i)->size : 0;
  if (cs->largest) ordset_insert(&p->largest, &cs->lnode);
}


void cpool_insert(struct cpool *p, struct cblock *b) { pool_insert(p, b); }
void cpool_erase(struct cpool *p, struct cblock *b) { pool_erase(p, b); }


struct cblock *cpool_lower_bound(struct cpool *p, uint64_t stream, uint64_t size) { return pool_lower_bound(p, stream, size); }

struct cblock *cpool_stream_last(struct cpool *p, uint64_t stream) {
  struct cstream *cs = cpool_stream(p, stream, 0);
  if (!cs || !cs->count) return NULL;
  return bin_last(cs, bin_prev(cs, NBINS - 1));
}

struct cblock *cpool_prev_in_stream(const struct cblock *b) {
  struct cblock *prev = cbin_prev(&b->cs->bins[b->bin], b);
  if (prev) return prev;
  unsigned i = b->bin;
  if (i == 0) return NULL;
  i = bin_prev(b->cs, i - 1);
  return i < NBINS ? bin_last(b->cs, i) : NULL;
}


struct cblock *cpool_first(const struct cpool *p) { return first_from(stream_entry(ordset_first_inline(&p->streams))); }


struct cblock *cpool_next(const struct cblock *b) { return pool_next(b); }

size_t cpool_count(const struct cpool *p) {
  size_t n = 0;
  for (struct ordnode *s = ordset_first_inline(&p->streams); s; s = ordset_next_inline(s)) n += stream_entry(s)->count;
  return n;
}

uint64_t cpool_largest(struct cpool *p) {
  while (p->stale) {
    struct cstream *cs = p->stale;
    p->stale = cs->next_stale;
    cs->stale = 0;
    largest_update(p, cs);
  }
  struct ordnode *n = ordset_last_inline(&p->largest);
  return n ? ORD_ENTRY(n, struct cstream, lnode)->largest : 0;
}


struct cblock *caching_take_best_fit(const struct caching_config *c, struct cpool *p, uint64_t stream, uint64_t rounded) {
  return take_best_fit(c, p, stream, rounded);
}


struct cblock *cblock_split_front(struct cblock_store *s, struct cblock *b, uint64_t size, struct cblock **seg_head) {
  return split_front(s, b, size, seg_head);
}




int cblock_coalesce(struct cblock_store *s, struct cblock *b, struct cblock **seg_head) {
  struct cblock *prev = b->prev, *next = b->next;
  return merge(s, b, prev, seg_head) + merge(s, b, next, seg_head);
}

void cblock_free_to_pool(struct cblock_store *s, struct cblock *b, struct cblock **seg_head) { cpool_free_block(s, b, seg_head); }

void cblock_chain_report(const struct cblock *head, uint64_t seg_addr, uint64_t seg_size, int small_pool, int pool_live,
                         void (*fn)(void *ctx, const struct seg_block *b), void *ctx) {
  int split = head && head->next;
  uint32_t pool = head ? head->pool->owner : 0;
  for (const struct cblock *b = head; b; b = b->next) {
    struct seg_block sb = {.seg_addr = seg_addr, .seg_size = seg_size, .addr = b->addr, .size = b->size,
                           .requested = b->allocated ? b->requested : 0, .stream = b->stream, .small_pool = small_pool,
                           .pool = pool, .pool_live = pool && pool_live};
    sb.state = !b->mapped ? SEG_UNMAPPED : b->allocated ? SEG_ALLOCATED : split ? SEG_INACTIVE_SPLIT : SEG_FREE;
    fn(ctx, &sb);
  }
}
