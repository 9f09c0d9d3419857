/* caching_fixture.h - the caching rule tests' fixture: caching_allocator driven directly
 * through its ops on a sim device with range tracking, figures from the device struct.
 * Shared by test_caching.c (rounding, pools, splitting, best fit, coalescing) and
 * test_caching_recovery.c (the failure path, GC, empty_cache, query, destroy). */
#ifndef FB_CACHING_FIXTURE_H
#define FB_CACHING_FIXTURE_H
#include <stdlib.h>
#include "test.h"
#include "allocator.h"
#include "../allocators/caching_policy.h"

extern const struct allocator_ops caching_allocator;
#define OPS caching_allocator
#define MiB(x) ((uint64_t)(x) << 20)

struct fx { struct device d; void *a; char err[FB_ERRLEN]; };

static inline int fx_open(struct fx *f, const char *params, uint64_t cap) {
  memset(f, 0, sizeof *f);
  if (device_open(&f->d, &(struct device_config){.kind = "sim"}, f->err)) return -1;
  f->d.track_ranges = 1;
  device_set_cap(&f->d, cap);
  char spec[400], name[32];
  snprintf(spec, sizeof spec, "caching%s%s", params && *params ? ":" : "", params ? params : "");
  struct params p;
  if (params_parse_spec(spec, name, sizeof name, &p, f->err)) return -1;
  p.percent_base = f->d.total;
  if (params_check(&p, OPS.params, "caching", f->err)) return -1;
  return OPS.create(&f->a, &f->d, &p, f->err);
}

static inline void fx_close(struct fx *f) {
  if (f->a) OPS.destroy(f->a);
  f->a = NULL;
  device_close(&f->d);
}

#define OPEN(f, params, cap) CHECK_MSG(fx_open((f), (params), (cap)) == 0, "open: %s", (f)->err)
#define ALLOC(f, blk, sz, st) CHECK_EQ(OPS.alloc((f)->a, (sz), (st), &(blk)), 0)
#define FREE(f, blk) OPS.free((f)->a, &(blk))
#define CONSISTENT(f) do { char e_[FB_ERRLEN]; CHECK_MSG(OPS.check((f)->a, e_) == 0, "%s", e_); } while (0)

static inline __attribute__((unused)) uint64_t flushes(struct fx *f) {
  struct alloc_stats st;
  OPS.stats(f->a, &st);
  return st.cache_flushes;
}

static inline __attribute__((unused)) uint64_t held(struct fx *f) {
  struct alloc_stats st;
  OPS.stats(f->a, &st);
  return st.held;
}

#endif
