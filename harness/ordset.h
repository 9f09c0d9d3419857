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

#endif
