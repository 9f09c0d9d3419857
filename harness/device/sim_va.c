/* sim_va.c - the simulated device's address space (see sim_va.h): a bump pointer going
 * down, and the freed ranges in two ordered sets (by address to coalesce, by size for
 * best fit). Fresh space first keeps every address the same as a device that never
 * reuses one, for any run that fits the range (and so every figure); reuse starts where
 * that device would have said "exhausted". */
#include <stdlib.h>
#include "sim_va.h"

struct va_range {
  struct ordnode by_addr, by_size;
  uint64_t addr, size;
};

#define BY_ADDR(n) ORD_ENTRY(n, struct va_range, by_addr)
#define BY_SIZE(n) ORD_ENTRY(n, struct va_range, by_size)

static int cmp_addr(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = BY_ADDR(a)->addr, y = BY_ADDR(b)->addr;
  return (x > y) - (x < y);
}

static int cmp_size(const struct ordnode *a, const struct ordnode *b) {
  const struct va_range *x = BY_SIZE(a), *y = BY_SIZE(b);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return (x->addr > y->addr) - (x->addr < y->addr);
}

static uint64_t round_up(uint64_t x, uint64_t a) { return x > UINT64_MAX - a ? 0 : (x + a - 1) / a * a; }

void sim_va_init(struct sim_va *v, uint64_t top) {
  v->fresh = top;
  v->free_bytes = 0;
  ordset_init(&v->by_addr, cmp_addr);
  ordset_init(&v->by_size, cmp_size);
}

void sim_va_destroy(struct sim_va *v) {
  struct ordnode *n;
  while ((n = ordset_first(&v->by_addr))) {
    struct va_range *r = BY_ADDR(n);
    ordset_erase(&v->by_addr, n);
    free(r);
  }
  ordset_init(&v->by_size, cmp_size);
  v->free_bytes = 0;
}

int sim_va_take(struct sim_va *v, uint64_t size, uint64_t align, uint64_t *addr, int *oom) {
  *oom = 0;
  uint64_t r = round_up(size, align);
  if (!r) return -1;
  if (r <= v->fresh) {
    v->fresh -= r;
    *addr = v->fresh;
    return 0;
  }
  struct va_range key = {.addr = 0, .size = r};
  struct ordnode *n = ordset_lower_bound(&v->by_size, &key.by_size);
  if (!n) return -1;
  struct va_range *x = BY_SIZE(n);
  ordset_erase(&v->by_size, n);
  x->size -= r;
  *addr = x->addr + x->size;
  v->free_bytes -= r;
  if (x->size) ordset_insert(&v->by_size, &x->by_size);   /* its start (and by_addr place) is unchanged */
  else {
    ordset_erase(&v->by_addr, &x->by_addr);
    free(x);
  }
  return 0;
}

int sim_va_give(struct sim_va *v, uint64_t addr, uint64_t size, uint64_t align) {
  uint64_t r = round_up(size, align);
  if (!r) return 0;
  struct va_range key = {.addr = addr};
  struct ordnode *pn = ordset_floor(&v->by_addr, &key.by_addr);
  struct va_range *prev = pn ? BY_ADDR(pn) : NULL;
  struct ordnode *nn = pn ? ordset_next(pn) : ordset_first(&v->by_addr);
  struct va_range *next = nn ? BY_ADDR(nn) : NULL;
  v->free_bytes += r;
  if (prev && prev->addr + prev->size == addr) {   /* grow prev; maybe swallow next */
    ordset_erase(&v->by_size, &prev->by_size);
    prev->size += r;
    if (next && next->addr == addr + r) {
      prev->size += next->size;
      ordset_erase(&v->by_size, &next->by_size);
      ordset_erase(&v->by_addr, &next->by_addr);
      free(next);
    }
    ordset_insert(&v->by_size, &prev->by_size);
    return 0;
  }
  if (next && next->addr == addr + r) {   /* next starts earlier now: its by_addr order holds */
    ordset_erase(&v->by_size, &next->by_size);
    next->addr = addr;
    next->size += r;
    ordset_insert(&v->by_size, &next->by_size);
    return 0;
  }
  struct va_range *x = malloc(sizeof *x);
  if (!x) { v->free_bytes -= r; return -1; }
  x->addr = addr;
  x->size = r;
  ordset_insert(&v->by_addr, &x->by_addr);
  ordset_insert(&v->by_size, &x->by_size);
  return 0;
}
