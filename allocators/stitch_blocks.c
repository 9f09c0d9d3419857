/* stitch_blocks.c - the `stitch` strategy's block mechanics: recycled block nodes, the
 * per-pool free sets with their whole-page counts and page heads, busy counts of pages,
 * and splitting and merging of neighbouring blocks (the hot ones inline in stitch.h). No
 * policy here; see stitch.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stitch.h"

/* Block nodes come in slabs of SB_SLAB (zeroed), freed together at destroy: one calloc
 * per SB_SLAB nodes instead of one per node. */
#define SB_SLAB 256
struct sb_slab {
  struct sb_slab *next;
  struct sblock nodes[SB_SLAB];
};

struct sblock *stitch_blocks_alloc_node(struct stitch *st) {
  struct sb_slab *s = calloc(1, sizeof *s);
  if (!s) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
  s->next = st->slabs;
  st->slabs = s;
  for (int i = SB_SLAB - 1; i >= 1; i--) sb_put(st, &s->nodes[i]);   /* handed out from nodes[1] up */
  return &s->nodes[0];
}

void stitch_blocks_free_all(struct stitch *st) {
  for (struct sb_slab *s = st->slabs, *n; s; s = n) {
    n = s->next;
    free(s);
  }
  st->slabs = NULL;
  st->spare = NULL;
}

int stitch_blocks_cmp_size(const struct ordnode *a, const struct ordnode *b) {
  const struct sblock *x = ORD_ENTRY(a, struct sblock, node), *y = ORD_ENTRY(b, struct sblock, node);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int stitch_blocks_cmp_addr(const struct ordnode *a, const struct ordnode *b) {
  const struct sblock *x = ORD_ENTRY(a, struct sblock, node), *y = ORD_ENTRY(b, struct sblock, node);
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void stitch_blocks_hole_coalesce_insert(struct stitch *st, struct sblock *b) {
  struct ordset *holes = &b->r->holes;
  b->kind = BK_UNMAPPED;
  if (b->next && b->next->kind == BK_UNMAPPED) {
    ordset_erase(holes, &b->next->node);
    sb_absorb_next(st, b);
  }
  if (b->prev && b->prev->kind == BK_UNMAPPED) {
    struct sblock *p = b->prev;
    ordset_erase(holes, &p->node);
    sb_absorb_next(st, p);
    b = p;
  }
  ordset_insert(holes, &b->node);
}
