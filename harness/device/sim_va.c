/* sim_va.c - the simulated device's address space (see sim_va.h): a bump pointer going
 * down with the live ranges in a hash table, and once that runs out the free ranges in two
 * ordered sets (by address to coalesce, by size for best fit). Fresh space first keeps every address the same as a device that never
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
  v->top = top;
  v->reusing = 0;
  v->live_key = v->live_size = NULL;
  v->live_cap = v->live_n = 0;
  v->free_bytes = 0;
  ordset_init(&v->by_addr, cmp_addr);
  ordset_init(&v->by_size, cmp_size);
}

/* ---- the live ranges while fresh space lasts: linear probing, backward-shift delete ---- */
static uint64_t slot_of(const struct sim_va *v, uint64_t addr) {
  uint64_t h = (addr >> 12) * 0x9E3779B97F4A7C15ull;   /* addresses are ours, not an input's */
  return (h ^ h >> 32) & (v->live_cap - 1);
}

static int live_grow(struct sim_va *v) {
  uint64_t cap = v->live_cap ? v->live_cap * 2 : 1024;
  uint64_t *k = calloc(cap, sizeof *k), *z = calloc(cap, sizeof *z);
  if (!k || !z) { free(k); free(z); return -1; }
  uint64_t *ok = v->live_key, *oz = v->live_size, ocap = v->live_cap;
  v->live_key = k;
  v->live_size = z;
  v->live_cap = cap;
  for (uint64_t i = 0; i < ocap; i++)
    if (ok[i]) {
      uint64_t j = slot_of(v, ok[i] - 1);
      while (k[j]) j = (j + 1) & (cap - 1);
      k[j] = ok[i];
      z[j] = oz[i];
    }
  free(ok);
  free(oz);
  return 0;
}

static int live_put(struct sim_va *v, uint64_t addr, uint64_t size) {
  if ((v->live_n + 1) * 2 > v->live_cap && live_grow(v)) return -1;
  uint64_t j = slot_of(v, addr);
  while (v->live_key[j]) j = (j + 1) & (v->live_cap - 1);
  v->live_key[j] = addr + 1;
  v->live_size[j] = size;
  v->live_n++;
  return 0;
}

static void live_del(struct sim_va *v, uint64_t addr) {
  if (!v->live_cap) return;
  uint64_t m = v->live_cap - 1, j = slot_of(v, addr);
  while (v->live_key[j] && v->live_key[j] != addr + 1) j = (j + 1) & m;
  if (!v->live_key[j]) return;   /* not handed out here: nothing to forget */
  v->live_key[j] = 0;
  v->live_n--;
  for (uint64_t k = (j + 1) & m; v->live_key[k]; k = (k + 1) & m) {   /* close the gap */
    uint64_t home = slot_of(v, v->live_key[k] - 1);
    if (((k - home) & m) >= ((k - j) & m)) {
      v->live_key[j] = v->live_key[k];
      v->live_size[j] = v->live_size[k];
      v->live_key[k] = 0;
      j = k;
    }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int add_range(struct sim_va *v, uint64_t addr, uint64_t size) {
  struct va_range *x = malloc(sizeof *x);
  if (!x) return -1;
  x->addr = addr;
  x->size = size;
  ordset_insert(&v->by_addr, &x->by_addr);
  ordset_insert(&v->by_size, &x->by_size);
  v->free_bytes += size;
  return 0;
}

/* The fresh space ran out: the free ranges are what is not live in [0, top), built once. */
static int start_reusing(struct sim_va *v) {
  uint64_t n = 0, *pairs = malloc((v->live_n ? v->live_n : 1) * 2 * sizeof *pairs);
  if (!pairs) return -1;
  for (uint64_t i = 0; i < v->live_cap; i++)
    if (v->live_key[i]) { pairs[2 * n] = v->live_key[i] - 1; pairs[2 * n + 1] = v->live_size[i]; n++; }
  qsort(pairs, n, 2 * sizeof *pairs, cmp_u64);   /* by address (the first of each pair) */
  uint64_t at = 0;
  int rc = 0;
  for (uint64_t i = 0; i < n && !rc; i++) {
    if (pairs[2 * i] > at) rc = add_range(v, at, pairs[2 * i] - at);
    at = pairs[2 * i] + pairs[2 * i + 1];
  }
  if (!rc && v->top > at) rc = add_range(v, at, v->top - at);
  free(pairs);
  free(v->live_key);
  free(v->live_size);
  v->live_key = v->live_size = NULL;
  v->live_cap = v->live_n = 0;
  v->fresh = 0;
  v->reusing = 1;
  return rc;
}

void sim_va_destroy(struct sim_va *v) {
  free(v->live_key);
  free(v->live_size);
  v->live_key = v->live_size = NULL;
  v->live_cap = v->live_n = 0;
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
  if (!v->reusing) {
    if (r <= v->fresh) {
      if (live_put(v, v->fresh - r, r)) { *oom = 1; return -1; }
      v->fresh -= r;
      *addr = v->fresh;
      return 0;
    }
    if (start_reusing(v)) { *oom = 1; return -1; }
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
  if (!v->reusing) { live_del(v, addr); return 0; }
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
  v->free_bytes -= r;
  return add_range(v, addr, r);
}
