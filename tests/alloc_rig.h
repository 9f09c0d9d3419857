/* alloc_rig.h - drive one allocator strategy directly through its ops on a sim device
 * with range tracking (for rule tests that must see every device call). */
#ifndef FB_ALLOC_RIG_H
#define FB_ALLOC_RIG_H
#include <stdio.h>
#include <string.h>
#include "allocator.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)

struct rig {
  struct device d;
  const struct allocator_ops *ops;
  void *a;
  char err[FB_ERRLEN];
};

/* A sim device of `total` bytes (0 = the H100 default), capped at `cap` (0 = none),
 * and strategy `name` built from "k=v,..." ("N%" is of the device total). 0 or -1 (r->err). */
static inline int rig_open_on(struct rig *r, const char *name, uint64_t total, uint64_t cap, const char *spec) {
  memset(r, 0, sizeof *r);
  if (device_open(&r->d, &(struct device_config){.kind = "sim", .sim_total = total, .sim_usable = total}, r->err)) return -1;
  r->d.track_ranges = 1;
  device_set_cap(&r->d, cap);
  char full[256], got[32];
  snprintf(full, sizeof full, "%s%s%s", name, spec[0] ? ":" : "", spec);
  struct params p;
  int rc = params_parse_spec(full, got, sizeof got, &p, r->err);
  if (!rc) {
    p.percent_base = r->d.total;
    r->ops = allocator_find(name);
    if (!r->ops) {
      snprintf(r->err, FB_ERRLEN, "no strategy '%s'", name);
      rc = -1;
    }
  }
  if (!rc) rc = params_check(&p, r->ops->params, name, r->err);
  if (!rc) rc = r->ops->create(&r->a, &r->d, &p, r->err);
  if (rc) device_close(&r->d);   /* on failure the caller has nothing to close */
  return rc;
}

/* check(), destroy, and confirm everything went back to the device. 1 = all good. */
static inline int rig_close(struct rig *r) {
  int ok = r->ops->check(r->a, r->err) == 0;
  r->ops->destroy(r->a);
  ok = ok && r->d.reserved == 0 && dev_ranges_held(&r->d) == 0;
  device_close(&r->d);
  return ok;
}

static inline int rig_alloc_on(struct rig *r, uint64_t size, uint64_t stream, struct block *b) {
  memset(b, 0, sizeof *b);
  return r->ops->alloc(r->a, size, stream, b);
}

/* Allocate and report the bytes of the one device allocation it caused: 0 = none,
 * ~0 = the allocation failed, ~1 = more than one device allocation. */
static inline uint64_t rig_grew_on(struct rig *r, uint64_t size, uint64_t stream, struct block *b) {
  uint64_t before = r->d.reserved, calls = r->d.c.device_allocs;
  if (rig_alloc_on(r, size, stream, b)) return ~0ull;
  if (r->d.c.device_allocs == calls) return 0;
  if (r->d.c.device_allocs != calls + 1) return ~1ull;
  return r->d.reserved - before;
}

#endif
