/* device.c - the device layer's common part: cap and usable-limit enforcement, reserved
 * accounting, call counts, the ranges held (for the validator), failure injection.
 * Backends (device_sim.c, device_cuda.c) only do the work; see device.h. */
#include "device.h"
#include "stream_acct.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_open(struct device *d, const struct device_config *cfg, char *err);
#ifdef FB_HAVE_CUDA
int cuda_open(struct device *d, const struct device_config *cfg, char *err);
#else
int cuda_device_count(char *err) {
  snprintf(err, FB_ERRLEN, "this fragbench was built without CUDA (no CUDA toolkit at build time; set CUDA_HOME and rebuild)");
  return -1;
}
#endif

/* A held range, by address (kept with --validate). Physical handles: handle_table.h. */
struct held {
  struct ordnode node;
  uint64_t key;       /* its address */
  uint64_t size;
  int kind;           /* 0 malloc, 1 mapped, 2 pool block */
};

static inline int held_cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct held, node)->key, y = ORD_ENTRY(b, struct held, node)->key;
  return x < y ? -1 : x > y;
}
ORDSET_TYPED(held_set, held_cmp)

/* finds: the comparison inlined (a stitching strategy maps and unmaps a page every few
 * events, so these are on its hot path) */
static struct held *held_find(const struct ordset *s, uint64_t key) {
  struct held k = {.key = key};
  struct ordnode *n = held_set_lower_bound(s, &k.node);
  if (!n) return NULL;
  struct held *h = ORD_ENTRY(n, struct held, node);
  return h->key == key ? h : NULL;
}

static struct held *held_floor(const struct ordset *s, uint64_t key) {
  struct held k = {.key = key};
  struct ordnode *n = held_set_floor(s, &k.node);
  return n ? ORD_ENTRY(n, struct held, node) : NULL;
}

/* records are kept for reuse on a per-device spare list (chained through node.left), so
 * a map or create after the first few costs no malloc */
static void held_add(struct device *d, struct ordset *s, uint64_t key, uint64_t size, int kind) {
  struct held *h = d->held_spare;
  if (h) d->held_spare = h->node.left;
  else if (!(h = malloc(sizeof *h))) { fprintf(stderr, "fragbench: out of host memory\n"); exit(1); }
  memset(h, 0, sizeof *h);
  h->key = key;
  h->size = size;
  h->kind = kind;
  held_set_insert(s, &h->node);
}

static void held_drop(struct device *d, struct ordset *s, struct held *h) {
  ordset_erase_inline(s, &h->node);
  h->node.left = d->held_spare;
  d->held_spare = h;
}

static void held_clear(struct device *d, struct ordset *s) {
  struct ordnode *n;
  while ((n = ordset_first(s))) held_drop(d, s, ORD_ENTRY(n, struct held, node));
}

static void held_spare_free(struct device *d) {
  while (d->held_spare) {
    struct held *h = d->held_spare;
    d->held_spare = h->node.left;
    free(h);
  }
}

int device_open(struct device *d, const struct device_config *cfg, char *err) {
  memset(d, 0, sizeof *d);
  d->same_hi = UINT64_MAX;
  ordset_init(&d->ranges, held_cmp);
  d->index = cfg->index;
  d->fail_rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)cfg->index;
  if (!strcmp(cfg->kind, "sim")) return sim_open(d, cfg, err);
  if (!strcmp(cfg->kind, "cuda")) {
#ifdef FB_HAVE_CUDA
    return cuda_open(d, cfg, err);
#else
    cuda_device_count(err);
    return -1;
#endif
  }
  snprintf(err, FB_ERRLEN, "unknown device '%s'; known: auto, sim, cuda", cfg->kind);
  return -1;
}

void device_close(struct device *d) {
  if (d->ops && d->ops->close) d->ops->close(d);
  held_clear(d, &d->ranges);
  handle_table_free(&d->handles);
  held_spare_free(d);
  d->ops = NULL;
}

void device_set_cap(struct device *d, uint64_t cap) { d->cap = cap; }

void device_reset_stats(struct device *d) {
  d->peak_reserved = d->reserved;
  memset(&d->c, 0, sizeof d->c);
}

static int injected_failure(struct device *d) {
  if (d->fail_rate <= 0) return 0;
  uint64_t x = d->fail_rng;
  x ^= x << 13; x ^= x >> 7; x ^= x << 17;
  d->fail_rng = x;
  if ((double)(x >> 11) * (1.0 / 9007199254740992.0) < d->fail_rate) {
    d->c.injected_failures++;
    return 1;
  }
  return 0;
}

/* Would taking `size` more bytes break the cap or the usable limit? */
static int over_limit(struct device *d, uint64_t size) {
  if (dev_cap_breaks(d, d->reserved + size)) return 1;
  if (d->usable && d->reserved + size > d->usable) return 1;
  return 0;
}

static void took(struct device *d, uint64_t size) {
  d->reserved += size;
  if (d->reserved > d->peak_reserved) d->peak_reserved = d->reserved;
}

int dev_malloc(struct device *d, uint64_t size, uint64_t *addr) {
  if (size == 0) size = 1;
  if (over_limit(d, size) || injected_failure(d)) return FB_OOM;
  int rc = d->ops->malloc(d, size, addr);
  if (rc) return rc;
  d->c.device_allocs++;
  took(d, size);
  if (d->by_stream) stream_acct_take(d->by_stream, *addr, size, d->reserved, d->peak_reserved);
  if (d->track_ranges) held_add(d, &d->ranges, *addr, size, 0);
  return 0;
}

void dev_free(struct device *d, uint64_t addr, uint64_t size) {
  if (size == 0) size = 1;
  if (d->track_ranges) {
    struct held *h = held_find(&d->ranges, addr);
    if (!h || h->kind != 0 || h->size != size) {
      fprintf(stderr, "fragbench: device: free of %#llx (%llu bytes) that was not malloc'd so\n",
              (unsigned long long)addr, (unsigned long long)size);
      abort();
    }
    held_drop(d, &d->ranges, h);
  }
  d->ops->free(d, addr, size);
  d->c.device_frees++;
  d->reserved -= size;
  if (d->by_stream) stream_acct_give(d->by_stream, addr);
}

int dev_va_reserve(struct device *d, uint64_t size, uint64_t *va) {
  int rc = d->ops->va_reserve(d, size, va);
  if (!rc) d->c.va_reserves++;
  return rc;
}

void dev_va_release(struct device *d, uint64_t va, uint64_t size) {
  d->ops->va_release(d, va, size);
  d->c.va_releases++;
}

int dev_phys_create(struct device *d, uint64_t size, uint64_t *h) {
  if (size == 0 || size % DEV_PAGE) {
    snprintf(d->err, FB_ERRLEN, "cuMemCreate: size %llu is not a multiple of the 2 MiB granularity", (unsigned long long)size);
    return -1;
  }
  if (over_limit(d, size) || injected_failure(d)) return FB_OOM;
  int rc = d->ops->phys_create(d, size, h);
  if (rc) return rc;
  d->c.device_allocs++;
  took(d, size);
  if (d->by_stream) stream_acct_take(d->by_stream, *h | 1ull << 63, size, d->reserved, d->peak_reserved);
  if (handle_table_put(&d->handles, *h, size)) { fprintf(stderr, "fragbench: out of host memory\n"); exit(1); }
  return 0;
}

int dev_map(struct device *d, uint64_t va, uint64_t size, uint64_t h) {
  struct handle_slot *ph = handle_table_get(&d->handles, h);
  if (!ph || ph->size != size || va % DEV_PAGE) {
    snprintf(d->err, FB_ERRLEN, "cuMemMap: handle %llu of %llu bytes cannot map %llu bytes at %#llx (a handle maps whole)",
             (unsigned long long)h, (unsigned long long)(ph ? ph->size : 0), (unsigned long long)size, (unsigned long long)va);
    return -1;
  }
  if (d->track_ranges) {
    struct held *r = held_floor(&d->ranges, va + size - 1);
    if (r && r->key + r->size > va) {
      snprintf(d->err, FB_ERRLEN, "cuMemMap: %#llx+%llu overlaps a range already held", (unsigned long long)va, (unsigned long long)size);
      return -1;
    }
  }
  int rc = d->ops->map(d, va, size, h);
  if (rc) return rc;
  ph->maps++;
  d->c.maps++;
  if (d->track_ranges) held_add(d, &d->ranges, va, size, 1);
  return 0;
}

void dev_unmap(struct device *d, uint64_t va, uint64_t size) {
  if (d->track_ranges) {
    struct held *r = held_find(&d->ranges, va);
    if (!r || r->kind != 1 || r->size != size) {
      fprintf(stderr, "fragbench: device: unmap of %#llx+%llu that is not one mapped range\n",
              (unsigned long long)va, (unsigned long long)size);
      abort();
    }
    held_drop(d, &d->ranges, r);
  }
  d->ops->unmap(d, va, size);
  d->c.unmaps++;
}

void dev_phys_release(struct device *d, uint64_t h) {
  struct handle_slot *ph = handle_table_get(&d->handles, h);
  if (!ph) {
    fprintf(stderr, "fragbench: device: release of unknown physical handle %llu\n", (unsigned long long)h);
    abort();
  }
  d->ops->phys_release(d, h, ph->size);
  d->c.device_frees++;
  d->reserved -= ph->size;
  if (d->by_stream) stream_acct_give(d->by_stream, h | 1ull << 63);
  handle_table_del(&d->handles, ph);
}

int dev_has_pool(const struct device *d) { return d->ops->pool_alloc != NULL; }

static void pool_sync_reserved(struct device *d) {
  uint64_t res = 0, used = 0;
  d->ops->pool_usage(d, &res, &used);
  d->reserved = d->reserved - d->pool_reserved + res;
  d->pool_reserved = res;
  if (d->reserved > d->peak_reserved) d->peak_reserved = d->reserved;
}

int dev_pool_alloc(struct device *d, uint64_t size, uint64_t stream, uint64_t *addr) {
  if (injected_failure(d)) return FB_OOM;
  int rc = d->ops->pool_alloc(d, size, stream, addr);
  if (rc) return rc;
  if (d->track_ranges) held_add(d, &d->ranges, *addr, size, 2);
  pool_sync_reserved(d);
  return 0;
}

void dev_pool_free(struct device *d, uint64_t addr, uint64_t stream) {
  if (d->track_ranges) {
    struct held *r = held_find(&d->ranges, addr);
    if (r && r->kind == 2) held_drop(d, &d->ranges, r);
  }
  d->ops->pool_free(d, addr, stream);
  pool_sync_reserved(d);
}

void dev_pool_trim(struct device *d, uint64_t keep) {
  d->ops->pool_trim(d, keep);
  pool_sync_reserved(d);
}

int dev_holds(const struct device *d, uint64_t addr, uint64_t size) {
  if (!d->track_ranges) return 1;
  /* walk the ranges that cover [addr, addr+size) contiguously (mapped pages may be adjacent) */
  uint64_t pos = addr, end = addr + size;
  while (pos < end) {
    const struct held *r = held_floor(&d->ranges, pos);
    if (!r) return 0;
    if (r->key + r->size <= pos) return 0;
    pos = r->key + r->size;
  }
  return 1;
}

uint64_t dev_ranges_held(const struct device *d) {
  return d->ranges.count + d->handles.count;
}
