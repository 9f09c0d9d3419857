/* sim_va.c - the simulated device's address space (see sim_va.h): a bump pointer going
 * down with the live ranges in a hash table, and once that runs out the free ranges in two
 * ordered sets (by address to coalesce, by size for best fit). Fresh space first keeps every address the same as a device that never
 * reuses one, for any run that fits the range (and so every figure); reuse starts where
 * that device would have said "exhausted". */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "sim_va.h"
#include "thread_map.h"

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

/* The bitmap of live pages: mapped, not calloc'd. Pages of zeroes the kernel hands out on
 * first touch, so a run pays only for the words it touches: calloc of a size freed before
 * comes from the heap and zeroes it all (8 MiB for an H100's range, in every replay). And
 * kept for the thread's next run: fresh space is taken top down, so the words a run
 * touched are those from `fresh` to the top, zeroed again at its end - a few KiB instead
 * of a fault per page in every replay (advise replays thousands). */
static struct thread_map kept_bits = THREAD_MAP_INIT;

static void live_map(struct sim_va *v) {
  v->live_len = (size_t)(v->top / SIM_VA_PAGE / 64 + 1) * sizeof *v->live;
  if ((v->live = thread_map_take(&kept_bits, v->live_len))) return;
  void *p = mmap(NULL, v->live_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  v->live = p == MAP_FAILED ? NULL : p;
}

static void live_unmap(struct sim_va *v) {
  if (!v->live) return;
  size_t lo = (size_t)(v->fresh / SIM_VA_PAGE / 64), n = v->live_len / sizeof *v->live;
  if (lo < n) memset(v->live + lo, 0, (n - lo) * sizeof *v->live);   /* zeroed where this run wrote (fresh .. top) */
  if (thread_map_keep(&kept_bits, v->live, v->live_len)) munmap(v->live, v->live_len);
  v->live = NULL;
}

void sim_va_init(struct sim_va *v, uint64_t top) {
  v->fresh = top;
  v->top = top;
  v->reusing = 0;
  live_map(v);   /* NULL: see sim_va_take */
  v->free_bytes = 0;
  ordset_init(&v->by_addr, cmp_addr);
  ordset_init(&v->by_size, cmp_size);
}

/* ---- the live pages while fresh space lasts: one bit per SIM_VA_PAGE ---- */
static void mark(uint64_t *bits, uint64_t addr, uint64_t size, int on) {
  uint64_t p = addr / SIM_VA_PAGE, e = p + size / SIM_VA_PAGE;
  while (p < e) {
    uint64_t w = p >> 6, lo = p & 63, n = e - p < 64 - lo ? e - p : 64 - lo;
    uint64_t m = (n == 64 ? ~0ull : ((1ull << n) - 1)) << lo;
    if (on) bits[w] |= m; else bits[w] &= ~m;
    p += n;
  }
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

/* The fresh space ran out: the free ranges are the runs of pages not live in [0, top),
 * built once (a word at a time where a word is all free or all live). */
static int start_reusing(struct sim_va *v) {
  uint64_t pages = v->top / SIM_VA_PAGE, run = 0, p = 0;
  int rc = 0;
  while (p < pages && !rc) {
    uint64_t w = v->live[p >> 6];
    if (!(p & 63) && p + 64 <= pages && (w == 0 || w == ~0ull)) {
      if (w == 0) run += 64;
      else if (run) { rc = add_range(v, (p - run) * SIM_VA_PAGE, run * SIM_VA_PAGE); run = 0; }
      p += 64;
      continue;
    }
    if (!(w >> (p & 63) & 1)) run++;
    else if (run) { rc = add_range(v, (p - run) * SIM_VA_PAGE, run * SIM_VA_PAGE); run = 0; }
    p++;
  }
  if (!rc && run) rc = add_range(v, (pages - run) * SIM_VA_PAGE, run * SIM_VA_PAGE);
  live_unmap(v);
  v->fresh = 0;
  v->reusing = 1;
  return rc;
}

void sim_va_destroy(struct sim_va *v) {
  live_unmap(v);
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
    if (!v->live || r % SIM_VA_PAGE) { *oom = !v->live; return -1; }
    if (r <= v->fresh) {
      mark(v->live, v->fresh - r, r, 1);
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
  if (!v->reusing) {
    if (v->live && !(r % SIM_VA_PAGE) && addr + r <= v->top) mark(v->live, addr, r, 0);
    return 0;
  }
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
