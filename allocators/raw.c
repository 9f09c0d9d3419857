/* raw.c - the baseline: one cudaMalloc per request, cudaFree on free, no caching.
 * Its peak_reserved is what a program without an allocator would need. */
#include <stdlib.h>
#include "allocator.h"

struct raw {
  struct device *dev;
  uint64_t held;
};

static int raw_create(void **a, struct device *d, const struct params *p, char *err) {
  (void)p; (void)err;
  struct raw *r = calloc(1, sizeof *r);
  if (!r) return -1;
  r->dev = d;
  *a = r;
  return 0;
}

static int raw_alloc(void *a, uint64_t size, uint64_t stream, struct block *out) {
  struct raw *r = a;
  uint64_t addr;
  int rc = dev_malloc(r->dev, size, &addr);
  if (rc) return rc;
  out->addr = addr;
  out->size = size;
  out->stream = stream;
  out->handle = NULL;
  r->held += size;
  return 0;
}

static void raw_free(void *a, struct block *b) {
  struct raw *r = a;
  dev_free(r->dev, b->addr, b->size);
  r->held -= b->size;
}

static void raw_empty_cache(void *a) { (void)a; }

static void raw_query(void *a, uint64_t *largest_free, uint64_t *free_inside) {
  (void)a;
  *largest_free = 0;
  *free_inside = 0;
}

static void raw_stats(void *a, struct alloc_stats *st) {
  struct raw *r = a;
  st->cache_flushes = 0;
  st->held = r->held;
}

static void raw_destroy(void *a) { free(a); }

const struct allocator_ops raw_allocator = {
  .name = "raw",
  .help = "one cudaMalloc per request, cudaFree on free: the no-allocator baseline",
  .anchor = "cudaMalloc/cudaFree",
  .params = NULL,
  .alignment = 256,
  .cap_blind = alloc_cap_blind_always,
  .create = raw_create,
  .alloc = raw_alloc,
  .free = raw_free,
  .empty_cache = raw_empty_cache,
  .query = raw_query,
  .stats = raw_stats,
  .destroy = raw_destroy,
};
