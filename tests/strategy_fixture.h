/* strategy_fixture.h - the rule tests' fixture for the strategies built on the caching
 * policy (caching, expandable): the strategy driven directly through its ops on a sim
 * device with range tracking, figures from the device struct. The includer defines
 * FX_NAME (the registry name) and FX_OPS (its allocator_ops) first.
 * Used by test_caching.c, test_caching_recovery.c and test_expandable.c. */
#ifndef FB_STRATEGY_FIXTURE_H
#define FB_STRATEGY_FIXTURE_H
#include <stdlib.h>
#include "test.h"
#include "allocator.h"

extern const struct allocator_ops FX_OPS;
#define OPS FX_OPS
#define MiB(x) ((uint64_t)(x) << 20)

struct fx { struct device d; void *a; char err[FB_ERRLEN]; };

static inline int fx_open(struct fx *f, const char *params, uint64_t cap) {
  memset(f, 0, sizeof *f);
  if (device_open(&f->d, &(struct device_config){.kind = "sim"}, f->err)) return -1;
  f->d.track_ranges = 1;
  device_set_cap(&f->d, cap);
  char spec[400], name[32];
  snprintf(spec, sizeof spec, "%s%s%s", FX_NAME, params && *params ? ":" : "", params ? params : "");
  struct params p;
  if (params_parse_spec(spec, name, sizeof name, &p, f->err)) return -1;
  p.percent_base = f->d.total;
  if (params_check(&p, OPS.params, FX_NAME, f->err)) return -1;
  return OPS.create(&f->a, &f->d, &p, f->err);
}

/* destroy; 1 when everything went back to the device (memory, mappings, address ranges) */
static inline int fx_close(struct fx *f) {
  if (f->a) OPS.destroy(f->a);
  f->a = NULL;
  int clean = f->d.reserved == 0 && dev_ranges_held(&f->d) == 0 && f->d.c.va_reserves == f->d.c.va_releases;
  device_close(&f->d);
  return clean;
}

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

#define OPEN(f, params, cap) CHECK_MSG(fx_open((f), (params), (cap)) == 0, "open: %s", (f)->err)
#define ALLOC(f, blk, sz, st) CHECK_EQ(OPS.alloc((f)->a, (sz), (st), &(blk)), 0)
#define FREE(f, blk) OPS.free((f)->a, &(blk))
/* the strategy's own check, and what it says it holds = what the device counts */
#define CONSISTENT(f) do { char e_[FB_ERRLEN]; CHECK_MSG(OPS.check((f)->a, e_) == 0, "%s", e_); \
    CHECK_EQ(held(f), (f)->d.reserved); } while (0)
#define CLOSE(f) CHECK_MSG(fx_close(f), "destroy left memory, mappings or address ranges on the device")

#endif
