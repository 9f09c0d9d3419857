/* ordset.h - an intrusive ordered set (treap with parent links): O(log n) insert, erase,
 * lower bound, and O(1) amortized next/prev. Nodes live inside the caller's structs, so
 * a set operation never allocates. Used for best-fit free lists (caching, bfc, pool,
 * expandable, stitch), the device layer's held ranges and the validator's live blocks. */
#ifndef FB_ORDSET_H
#define FB_ORDSET_H
#include <stddef.h>
#include <stdint.h>

struct ordnode {
  struct ordnode *left, *right, *parent;
  uint32_t prio;
};

/* <0, 0, >0 as a is before, equal to, after b */
typedef int (*ord_cmp)(const struct ordnode *a, const struct ordnode *b);

struct ordset {
  struct ordnode *root;
  ord_cmp cmp;
  uint32_t rng;     /* deterministic priority stream */
  size_t count;
};

#define ORD_ENTRY(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

void ordset_init(struct ordset *s, ord_cmp cmp);
void ordset_insert(struct ordset *s, struct ordnode *n);   /* equal keys go after existing ones */
void ordset_erase(struct ordset *s, struct ordnode *n);
struct ordnode *ordset_first(const struct ordset *s);
struct ordnode *ordset_last(const struct ordset *s);
struct ordnode *ordset_next(const struct ordnode *n);
struct ordnode *ordset_prev(const struct ordnode *n);
/* first node n with cmp(n, key) >= 0; key is a node built on the stack */
struct ordnode *ordset_lower_bound(const struct ordset *s, const struct ordnode *key);
/* last node n with cmp(n, key) <= 0 */
struct ordnode *ordset_floor(const struct ordset *s, const struct ordnode *key);

/* ---- inline variants for hot paths -------------------------------------------------
 * The functions above call cmp through a pointer at every step of a descent. A strategy
 * that wants the comparison inlined generates typed variants for its own cmp:
 *
 *   static inline int chunk_cmp(const struct ordnode *a, const struct ordnode *b) {...}
 *   ORDSET_TYPED(chunks, chunk_cmp)   -> chunks_insert, chunks_lower_bound, chunks_floor
 *
 * and may use ordset_erase_inline / _first_inline / _last_inline / _next_inline /
 * _prev_inline. They do exactly what the functions above do on a set initialised with
 * that cmp (same priorities drawn, same shape, same results), so both can be mixed on
 * one set. */

/* the slow parts, out of line: rotations after a link, rotating a node with two
 * children down until it has at most one */
void ordset_insert_rotations(struct ordset *s, struct ordnode *n);
void ordset_erase_rotations(struct ordset *s, struct ordnode *n);

/* insert's second half: n becomes *link's node under parent, with the set's next
 * priority (xorshift32: a deterministic stream; drawn after the descent, which never
 * reads it) */
static inline void ordset_link(struct ordset *s, struct ordnode *n, struct ordnode *parent, struct ordnode **link) {
  uint32_t x = s->rng;
  x ^= x << 13; x ^= x >> 17; x ^= x << 5;
  s->rng = x;
  n->prio = x;
  n->left = n->right = NULL;
  n->parent = parent;
  *link = n;
  s->count++;
  if (parent && parent->prio > x) ordset_insert_rotations(s, n);
}

static inline void ordset_erase_inline(struct ordset *s, struct ordnode *n) {
  if (n->left && n->right) ordset_erase_rotations(s, n);
  struct ordnode *child = n->left ? n->left : n->right, *p = n->parent;
  if (!p) s->root = child;
  else if (p->left == n) p->left = child;
  else p->right = child;
  if (child) child->parent = p;
  n->left = n->right = n->parent = NULL;
  s->count--;
}

static inline struct ordnode *ordset_first_inline(const struct ordset *s) {
  struct ordnode *n = s->root;
  if (n) while (n->left) n = n->left;
  return n;
}

static inline struct ordnode *ordset_last_inline(const struct ordset *s) {
  struct ordnode *n = s->root;
  if (n) while (n->right) n = n->right;
  return n;
}

static inline struct ordnode *ordset_next_inline(const struct ordnode *n) {
  if (n->right) {
    n = n->right;
    while (n->left) n = n->left;
    return (struct ordnode *)n;
  }
  while (n->parent && n->parent->right == n) n = n->parent;
  return n->parent;
}

static inline struct ordnode *ordset_prev_inline(const struct ordnode *n) {
  if (n->left) {
    n = n->left;
    while (n->right) n = n->right;
    return (struct ordnode *)n;
  }
  while (n->parent && n->parent->left == n) n = n->parent;
  return n->parent;
}

/* prefix_insert / prefix_lower_bound / prefix_floor with cmp called directly */
#define ORDSET_TYPED(prefix, cmp)                                                                   \
  static inline __attribute__((unused)) void prefix##_insert(struct ordset *s, struct ordnode *n) { \
    struct ordnode *p_ = NULL, **link_ = &s->root;                                                 \
    while (*link_) {                                                                               \
      p_ = *link_;                                                                                 \
      link_ = cmp(n, p_) < 0 ? &p_->left : &p_->right;                                             \
    }                                                                                              \
    ordset_link(s, n, p_, link_);                                                                  \
  }                                                                                                \
  static inline __attribute__((unused)) struct ordnode *prefix##_lower_bound(const struct ordset *s, \
                                                                             const struct ordnode *key) { \
    struct ordnode *n_ = s->root, *best_ = NULL;                                                   \
    while (n_) {                                                                                   \
      if (cmp(n_, key) >= 0) { best_ = n_; n_ = n_->left; }                                        \
      else n_ = n_->right;                                                                         \
    }                                                                                              \
    return best_;                                                                                  \
  }                                                                                                \
  static inline __attribute__((unused)) struct ordnode *prefix##_floor(const struct ordset *s,     \
                                                                       const struct ordnode *key) { \
    struct ordnode *n_ = s->root, *best_ = NULL;                                                   \
    while (n_) {                                                                                   \
      if (cmp(n_, key) <= 0) { best_ = n_; n_ = n_->right; }                                       \
      else n_ = n_->left;                                                                          \
    }                                                                                              \
    return best_;                                                                                  \
  }

#endif
