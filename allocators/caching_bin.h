/* caching_bin.h - one size bin of a stream's free blocks (caching_pool.h), in (size,
 * address) order. A bin holds few blocks - none at most inserts, one or two at the rest,
 * on the bundled traces - so up to CBIN_LIST blocks are an unordered list (linked through
 * the blocks' own tree nodes: right = next, left = back): an insert is a push, an erase an
 * unlink, and the queries scan the few there are for the order's least. A bin that grows
 * past the list becomes a treap (ordset) and goes back to a list once it holds CBIN_BACK
 * blocks or fewer. Which of the two a bin is never changes what a query answers: every
 * query picks by (size, address), a total order. */
#ifndef FB_CACHING_BIN_H
#define FB_CACHING_BIN_H
#include <stdint.h>
#include "caching_policy.h"

#define CBIN_LIST 16
#define CBIN_BACK 8

struct cbin {
  struct ordset t;   /* tree: the treap by block_cmp; list: t.root the first node, t.count the blocks */
  uint32_t tree;
};

/* (size, address); the stream is the bin's */
static inline int block_cmp(const struct ordnode *x, const struct ordnode *y) {
  const struct cblock *a = ORD_ENTRY(x, struct cblock, node), *b = ORD_ENTRY(y, struct cblock, node);
  if (a->size != b->size) return a->size < b->size ? -1 : 1;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  return 0;
}

/* a before b in (size, address) */
static inline int cbin_before(const struct cblock *a, const struct cblock *b) {
  return a->size < b->size || (a->size == b->size && a->addr < b->addr);
}

ORDSET_TYPED(bin, block_cmp)        /* bin_lower_bound: block_cmp inlined */

static inline struct cblock *cbin_entry(struct ordnode *n) { return n ? ORD_ENTRY(n, struct cblock, node) : NULL; }

/* the tree's insert with the node's treap priority taken from the block's address
 * (Fibonacci hashing: blocks in one pool never share an address) instead of the set's
 * xorshift stream: as random for the treap's balance, and deterministic */
static inline void cbin_tree_put(struct ordset *s, struct cblock *b) {
  struct ordnode *n = &b->node, *p = NULL, **link = &s->root;
  while (*link) {
    p = *link;
    link = block_cmp(n, p) < 0 ? &p->left : &p->right;
  }
  uint32_t x = (uint32_t)((b->addr * 0x9E3779B97F4A7C15ull) >> 32);
  n->prio = x;
  n->left = n->right = NULL;
  n->parent = p;
  *link = n;
  s->count++;
  if (p && p->prio > x) ordset_insert_rotations(s, n);
}

/* out of line (caching_pool.c): a full list and b into a tree; a tree of CBIN_BACK blocks
 * or fewer back to a list */
void cbin_to_tree(struct cbin *bin, struct cblock *b);
void cbin_to_list(struct cbin *bin);

static inline void cbin_init(struct cbin *bin) {
  ordset_init(&bin->t, block_cmp);
  bin->tree = 0;
}

static inline size_t cbin_count(const struct cbin *bin) { return bin->t.count; }

/* a list bin: node n (a block's) at its head */
static inline __attribute__((always_inline)) void cbin_push(struct cbin *bin, struct ordnode *n) {
  struct ordnode *head = bin->t.root;
  n->right = head;
  n->left = NULL;
  if (head) head->left = n;
  bin->t.root = n;
  bin->t.count++;
}

static inline __attribute__((always_inline)) void cbin_insert(struct cbin *bin, struct cblock *b) {
  if (__builtin_expect(bin->tree, 0)) {
    cbin_tree_put(&bin->t, b);
    return;
  }
  if (__builtin_expect(bin->t.count == CBIN_LIST, 0)) {
    cbin_to_tree(bin, b);
    return;
  }
  cbin_push(bin, &b->node);
}

static inline __attribute__((always_inline)) void cbin_erase(struct cbin *bin, struct cblock *b) {
  if (__builtin_expect(bin->tree, 0)) {
    ordset_erase_inline(&bin->t, &b->node);
    if (bin->t.count <= CBIN_BACK) cbin_to_list(bin);
    return;
  }
  struct ordnode *n = &b->node, *back = n->left, *next = n->right;
  if (back) back->right = next;
  else bin->t.root = next;
  if (next) next->left = back;
  bin->t.count--;
}

/* the first block of at least size bytes (lowest address among equals), or NULL */
static inline __attribute__((always_inline)) struct cblock *cbin_lower_bound(const struct cbin *bin, uint64_t size) {
  if (__builtin_expect(bin->tree, 0)) {
    struct cblock key = {.size = size, .addr = 0};
    return cbin_entry(bin_lower_bound(&bin->t, &key.node));
  }
  struct cblock *best = NULL;
  for (struct ordnode *n = bin->t.root; n; n = n->right) {
    struct cblock *x = cbin_entry(n);
    if (x->size >= size && (!best || cbin_before(x, best))) best = x;
  }
  return best;
}

/* first and last of a non-empty bin */
static inline struct cblock *cbin_first(const struct cbin *bin) {
  if (bin->tree) return cbin_entry(ordset_first_inline(&bin->t));
  struct cblock *best = NULL;
  for (struct ordnode *n = bin->t.root; n; n = n->right)
    if (!best || cbin_before(cbin_entry(n), best)) best = cbin_entry(n);
  return best;
}
static inline struct cblock *cbin_last(const struct cbin *bin) {
  if (bin->tree) return cbin_entry(ordset_last_inline(&bin->t));
  struct cblock *best = NULL;
  for (struct ordnode *n = bin->t.root; n; n = n->right)
    if (!best || cbin_before(best, cbin_entry(n))) best = cbin_entry(n);
  return best;
}

/* the block beside b in this bin - the next one (after = 1) or the one before - or NULL */
static inline struct cblock *cbin_beside(const struct cbin *bin, const struct cblock *b, int after) {
  if (bin->tree) return cbin_entry(after ? ordset_next_inline(&b->node) : ordset_prev_inline(&b->node));
  struct cblock *best = NULL;
  for (struct ordnode *n = bin->t.root; n; n = n->right) {
    struct cblock *x = cbin_entry(n);
    int beyond = after ? cbin_before(b, x) : cbin_before(x, b), closer = !best || (after ? cbin_before(x, best) : cbin_before(best, x));
    if (beyond && closer) best = x;
  }
  return best;
}
static inline struct cblock *cbin_next(const struct cbin *bin, const struct cblock *b) { return cbin_beside(bin, b, 1); }
static inline struct cblock *cbin_prev(const struct cbin *bin, const struct cblock *b) { return cbin_beside(bin, b, 0); }

#endif
