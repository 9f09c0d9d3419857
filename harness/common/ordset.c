/* ordset.c - treap with parent links; see ordset.h. Priorities come from a per-set
 * xorshift stream, so the shape (and the cost) is the same on every run. The generic
 * functions are the inline variants of ordset.h with cmp called through the pointer. */
#include "ordset.h"

void ordset_init(struct ordset *s, ord_cmp cmp) {
  s->root = NULL;
  s->cmp = cmp;
  s->rng = 2463534242u;
  s->count = 0;
}

static void replace_child(struct ordset *s, struct ordnode *p, struct ordnode *old, struct ordnode *nw) {
  if (!p) s->root = nw;
  else if (p->left == old) p->left = nw;
  else p->right = nw;
  if (nw) nw->parent = p;
}

/* rotate n up above its parent */
static void rotate_up(struct ordset *s, struct ordnode *n) {
  struct ordnode *p = n->parent, *g = p->parent;
  if (p->left == n) {
    p->left = n->right;
    if (n->right) n->right->parent = p;
    n->right = p;
  } else {
    p->right = n->left;
    if (n->left) n->left->parent = p;
    n->left = p;
  }
  p->parent = n;
  replace_child(s, g, p, n);
}

static inline void insert_rotations(struct ordset *s, struct ordnode *n) {
  while (n->parent && n->parent->prio > n->prio) rotate_up(s, n);
}

static inline void erase_rotations(struct ordset *s, struct ordnode *n) {
  while (n->left && n->right) {
    struct ordnode *c = n->left->prio < n->right->prio ? n->left : n->right;
    rotate_up(s, c);
  }
}

void ordset_insert_rotations(struct ordset *s, struct ordnode *n) { insert_rotations(s, n); }
void ordset_erase_rotations(struct ordset *s, struct ordnode *n) { erase_rotations(s, n); }

/* The generic insert and erase: ordset_link and ordset_erase_inline with the rotations
 * inlined here too (the sets the generic callers keep are the larger ones). */
void ordset_insert(struct ordset *s, struct ordnode *n) {   /* equal keys go after existing ones */
  uint32_t x = s->rng;
  x ^= x << 13; x ^= x >> 17; x ^= x << 5;
  s->rng = x;
  n->prio = x;
  n->left = n->right = NULL;
  struct ordnode *p = NULL, **link = &s->root;
  while (*link) {
    p = *link;
    link = s->cmp(n, p) < 0 ? &p->left : &p->right;
  }
  *link = n;
  n->parent = p;
  insert_rotations(s, n);
  s->count++;
}

void ordset_erase(struct ordset *s, struct ordnode *n) {
  erase_rotations(s, n);
  struct ordnode *child = n->left ? n->left : n->right;
  replace_child(s, n->parent, n, child);
  n->left = n->right = n->parent = NULL;
  s->count--;
}
struct ordnode *ordset_first(const struct ordset *s) { return ordset_first_inline(s); }
struct ordnode *ordset_last(const struct ordset *s) { return ordset_last_inline(s); }
struct ordnode *ordset_next(const struct ordnode *n) { return ordset_next_inline(n); }
struct ordnode *ordset_prev(const struct ordnode *n) { return ordset_prev_inline(n); }

struct ordnode *ordset_lower_bound(const struct ordset *s, const struct ordnode *key) {
  struct ordnode *n = s->root, *best = NULL;
  while (n) {
    if (s->cmp(n, key) >= 0) { best = n; n = n->left; }
    else n = n->right;
  }
  return best;
}

struct ordnode *ordset_floor(const struct ordset *s, const struct ordnode *key) {
  struct ordnode *n = s->root, *best = NULL;
  while (n) {
    if (s->cmp(n, key) <= 0) { best = n; n = n->right; }
    else n = n->left;
  }
  return best;
}
