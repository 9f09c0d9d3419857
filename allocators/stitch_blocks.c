/* stitch_blocks.c - the `stitch` strategy's block mechanics: recycled block nodes, the
 * per-pool free sets with their whole-page counts and page heads, busy counts of pages,
 * and splitting and merging of neighbouring blocks. No policy here; see stitch.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stitch.h"

struct sblock *sb_new(struct stitch *st) {
  struct sblock *b = st->spare;
  if (b) st->spare = b->next;
  else {
    b = malloc(sizeof *b);
    if (!b) { fprintf(stderr, "fragbench: stitch: out of host memory\n"); exit(1); }
  }
  *b = (struct sblock){0};
  return b;
}

void sb_put(struct stitch *st, struct sblock *b) {
  b->next = st->spare;
  st->spare = b;
}

uint64_t whole_pages(uint64_t addr, uint64_t size) {
  uint64_t lo = (addr + ST_PAGE - 1) / ST_PAGE, hi = (addr + size) / ST_PAGE;
  return hi > lo ? hi - lo : 0;
}

int sb_cmp_size(const struct ordnode *a, const struct ordnode *b) {
  const struct sblock *x = ORD_ENTRY(a, struct sblock, node), *y = ORD_ENTRY(b, struct sblock, node);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int sb_cmp_addr(const struct ordnode *a, const struct ordnode *b) {
  const struct sblock *x = ORD_ENTRY(a, struct sblock, node), *y = ORD_ENTRY(b, struct sblock, node);
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct fset *free_set_of(struct srange *r) {
  switch (r->kind) {
  case RK_PRIM: return &r->pool->prim_free;
  case RK_STITCH: return &r->pool->stitch_free;
  default: return &r->pool->small_free;
  }
}

static uint64_t first_whole_page(const struct sblock *b) {
  return (b->addr - b->r->va + ST_PAGE - 1) / ST_PAGE;
}

void free_insert(struct sblock *b) {
  b->kind = BK_FREE;
  fset_insert(free_set_of(b->r), b);
  if (b->r->kind != RK_PRIM) return;
  uint64_t w = whole_pages(b->addr, b->size);
  if (!w) return;
  b->r->pool->prim_free_pages += w;
  b->r->head[first_whole_page(b)] = b;
}

void free_erase(struct sblock *b) {
  fset_erase(free_set_of(b->r), b);
  if (b->r->kind != RK_PRIM) return;
  uint64_t w = whole_pages(b->addr, b->size);
  if (!w) return;
  b->r->pool->prim_free_pages -= w;
  b->r->head[first_whole_page(b)] = NULL;
}

/* A block's whole pages are busy through it alone (they were whole pages of a free block
 * before, and no other block touches them): set at once; its partial end pages, which
 * neighbours may share, are counted. */
void prim_busy(struct srange *r, uint64_t addr, uint64_t size, int delta) {
  uint64_t off = addr - r->va, end = off + size;
  uint64_t lo = (off + ST_PAGE - 1) / ST_PAGE, hi = end / ST_PAGE;   /* whole pages [lo, hi) */
  if (hi > lo) memset(r->busy + lo, delta > 0, hi - lo);
  if (off % ST_PAGE) r->busy[off / ST_PAGE] = (uint8_t)(r->busy[off / ST_PAGE] + delta);
  if (end % ST_PAGE && (!(off % ST_PAGE) || end / ST_PAGE != off / ST_PAGE))   /* not the same page */
    r->busy[end / ST_PAGE] = (uint8_t)(r->busy[end / ST_PAGE] + delta);
}

struct sblock *sb_split(struct stitch *st, struct sblock *b, uint64_t at) {
  struct sblock *n = sb_new(st);
  n->addr = b->addr + at;
  n->size = b->size - at;
  n->r = b->r;
  n->kind = b->kind;
  n->borrower = b->borrower;
  n->prev = b;
  n->next = b->next;
  if (b->next) b->next->prev = n;
  b->next = n;
  b->size = at;
  return n;
}

void sb_absorb_next(struct stitch *st, struct sblock *b) {
  struct sblock *n = b->next;
  b->size += n->size;
  b->next = n->next;
  if (n->next) n->next->prev = b;
  sb_put(st, n);
}

void free_coalesce_insert(struct stitch *st, struct sblock *b) {
  b->kind = BK_FREE;
  if (b->next && b->next->kind == BK_FREE) {
    free_erase(b->next);
    sb_absorb_next(st, b);
  }
  if (b->prev && b->prev->kind == BK_FREE) {
    struct sblock *p = b->prev;
    free_erase(p);
    sb_absorb_next(st, p);
    b = p;
  }
  free_insert(b);
}

void hole_coalesce_insert(struct stitch *st, struct sblock *b) {
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
