/* validator.c - see validator.h. */
#include "validator.h"
#include <stdio.h>
#include <stdlib.h>

struct vblock { struct ordnode node; uint64_t addr, size; };

static inline int vcmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct vblock, node)->addr, y = ORD_ENTRY(b, struct vblock, node)->addr;
  return x < y ? -1 : x > y;
}
ORDSET_TYPED(vlive, vcmp)   /* vlive_insert, vlive_lower_bound, vlive_floor: vcmp inlined */

void validator_init(struct validator *v, const struct allocator_ops *ops, void *a, struct device *d) {
  ordset_init(&v->live, vcmp);
  v->ops = ops;
  v->a = a;
  v->d = d;
  v->ops_since_check = 0;
}

#define X(v) ((unsigned long long)(v))

int validator_alloc(struct validator *v, const struct block *b, uint64_t requested, char *err) {
  if (b->size < requested) {
    snprintf(err, FB_ERRLEN, "validator: block %#llx of %llu bytes is smaller than the %llu requested",
             X(b->addr), X(b->size), X(requested));
    return -1;
  }
  if (v->ops->alignment && b->addr % v->ops->alignment) {
    snprintf(err, FB_ERRLEN, "validator: block %#llx is not aligned to %llu", X(b->addr), X(v->ops->alignment));
    return -1;
  }
  if (!dev_holds(v->d, b->addr, b->size)) {
    snprintf(err, FB_ERRLEN, "validator: block %#llx+%llu lies outside the memory the strategy holds",
             X(b->addr), X(b->size));
    return -1;
  }
  struct vblock key = {.addr = b->addr};
  struct ordnode *prev = vlive_floor(&v->live, &key.node);
  if (prev) {
    struct vblock *p = ORD_ENTRY(prev, struct vblock, node);
    if (p->addr + p->size > b->addr) {
      snprintf(err, FB_ERRLEN, "validator: block %#llx+%llu overlaps live block %#llx+%llu",
               X(b->addr), X(b->size), X(p->addr), X(p->size));
      return -1;
    }
  }
  struct ordnode *next = vlive_lower_bound(&v->live, &key.node);
  if (next) {
    struct vblock *n = ORD_ENTRY(next, struct vblock, node);
    if (n->addr < b->addr + b->size) {
      snprintf(err, FB_ERRLEN, "validator: block %#llx+%llu overlaps live block %#llx+%llu",
               X(b->addr), X(b->size), X(n->addr), X(n->size));
      return -1;
    }
  }
  struct vblock *nb = malloc(sizeof *nb);
  if (!nb) { snprintf(err, FB_ERRLEN, "validator: out of host memory"); return -1; }
  nb->addr = b->addr;
  nb->size = b->size;
  vlive_insert(&v->live, &nb->node);
  return 0;
}

int validator_free(struct validator *v, const struct block *b, char *err) {
  struct vblock key = {.addr = b->addr};
  struct ordnode *n = vlive_lower_bound(&v->live, &key.node);
  struct vblock *vb = n ? ORD_ENTRY(n, struct vblock, node) : NULL;
  if (!vb || vb->addr != b->addr || vb->size != b->size) {
    snprintf(err, FB_ERRLEN, "validator: freeing block %#llx+%llu that is not live as handed out", X(b->addr), X(b->size));
    return -1;
  }
  ordset_erase_inline(&v->live, n);
  free(vb);
  return 0;
}

int validator_counts(struct validator *v, char *err) {
  struct alloc_stats st = {0};
  if (v->ops->stats) v->ops->stats(v->a, &st);
  if (st.held != v->d->reserved) {
    snprintf(err, FB_ERRLEN, "validator: %s says it holds %llu bytes, the device layer counts %llu reserved",
             v->ops->name, X(st.held), X(v->d->reserved));
    return -1;
  }
  if (v->ops->check && v->ops->check(v->a, err)) return -1;
  return 0;
}

int validator_final(struct validator *v, char *err) {
  if (v->d->reserved || dev_ranges_held(v->d)) {
    snprintf(err, FB_ERRLEN, "validator: after destroy() the device still holds %llu bytes in %llu ranges/handles",
             X(v->d->reserved), X(dev_ranges_held(v->d)));
    return -1;
  }
  return 0;
}

void validator_release(struct validator *v) {
  struct ordnode *n;
  while ((n = ordset_first(&v->live))) {
    ordset_erase(&v->live, n);
    free(ORD_ENTRY(n, struct vblock, node));
  }
}
