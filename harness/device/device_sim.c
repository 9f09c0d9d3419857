/* device_sim.c - the simulated device: an H100 80GB HBM3 as CUDA reports it, by default.
 * Deterministic and CPU only. Addresses are handed out downward from the top of a
 * 2^47-byte range, 2 MiB aligned (best-fit ties between equal-size blocks break by
 * address; descending fresh addresses reproduce PyTorch's choices on real traces); freed
 * ranges are handed out again once the fresh space is used up (sim_va.c), as the driver
 * reuses them, so a run fails only when its live volume does not fit the range. Each call
 * adds a modeled driver time from the cost table measured on an H100 (CUDA 13.0, driver
 * 580): the table is in this file (docs/csv.md, modeled_driver_ns). */
#include "device.h"
#include "sim_va.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_TOP (1ull << 47)

/* modeled driver time, ns. The VMM calls cost per call (per physical handle, per mapping)
 * and hardly by size: tests/probes/vmm_cost.cu on the H100 (medians): create 7.7-11.5 us
 * at any size; map 0.6 us + set-access 19.8 us up to 20 MiB, 34 us at 64 MiB, 36 us at
 * 256 MiB; unmap 14.2 us up to 20 MiB, 22 us from 64 MiB; release 9.6 us + 0.29 us/MiB.
 * Setting access on, or unmapping, a run of k handles costs k times one call's, whether
 * in one call or k. */
#define COST_MALLOC_SMALL 2550ull     /* half of a 5.1 us cudaMalloc+cudaFree pair (<= 4 KiB) */
#define COST_MALLOC_LARGE 29300ull    /* half of a 58.6 us pair (512 B .. 256 MiB) */
#define COST_CREATE 8000ull           /* cuMemCreate, any size */
#define COST_MAP 20400ull             /* cuMemMap + cuMemSetAccess up to 20 MiB ... */
#define COST_MAP_PER_MIB 330ull       /* ... then this per MiB up to 64 MiB */
#define COST_UNMAP 14300ull           /* cuMemUnmap up to 20 MiB ... */
#define COST_UNMAP_PER_MIB 180ull     /* ... then this per MiB up to 64 MiB */
#define COST_RELEASE 9000ull          /* cuMemRelease ... */
#define COST_RELEASE_PER_MIB 290ull   /* ... and this per MiB of the handle */
#define COST_VA 6600ull               /* address reserve/free: taken as one cudaMemGetInfo-sized call */

struct sim {
  struct sim_va va;
  uint64_t next_handle;
  int noop;             /* no cost model */
};

static int take_va(struct device *d, uint64_t size, uint64_t *addr) {
  struct sim *s = d->impl;
  int oom = 0;
  if (sim_va_take(&s->va, size, DEV_PAGE, addr, &oom)) {
    snprintf(d->err, FB_ERRLEN, oom ? "out of host memory" : "sim: virtual address space exhausted (%llu bytes asked; the range holds 2^47)",
             (unsigned long long)size);
    return -1;
  }
  return 0;
}

static void give_va(struct device *d, uint64_t addr, uint64_t size) {
  struct sim *s = d->impl;
  sim_va_give(&s->va, addr, size, DEV_PAGE);   /* out of host memory: that range is not reused */
}

static void cost(struct device *d, uint64_t ns) {
  struct sim *s = d->impl;
  if (!s->noop) d->c.modeled_ns += ns;
}

/* MiB of size between 20 and 64 MiB: where set-access and unmap grow with size */
static uint64_t mib_over_20(uint64_t size) {
  uint64_t mib = (size + (1ull << 20) - 1) >> 20;
  if (mib > 64) mib = 64;
  return mib > 20 ? mib - 20 : 0;
}

static int sim_malloc(struct device *d, uint64_t size, uint64_t *addr) {
  cost(d, size <= 4096 ? COST_MALLOC_SMALL : COST_MALLOC_LARGE);
  return take_va(d, size, addr);
}

static void sim_free(struct device *d, uint64_t addr, uint64_t size) {
  give_va(d, addr, size);
  cost(d, size <= 4096 ? COST_MALLOC_SMALL : COST_MALLOC_LARGE);
}

static int sim_va_reserve(struct device *d, uint64_t size, uint64_t *va) {
  cost(d, COST_VA);
  return take_va(d, size, va);
}

static void sim_va_release(struct device *d, uint64_t va, uint64_t size) {
  give_va(d, va, size);
  cost(d, COST_VA);
}

static int sim_phys_create(struct device *d, uint64_t size, uint64_t *h) {
  struct sim *s = d->impl;
  (void)size;
  cost(d, COST_CREATE);
  *h = ++s->next_handle;
  return 0;
}

static int sim_map(struct device *d, uint64_t va, uint64_t size, uint64_t h) {
  (void)va; (void)h;
  cost(d, COST_MAP + COST_MAP_PER_MIB * mib_over_20(size));
  return 0;
}

static void sim_unmap(struct device *d, uint64_t va, uint64_t size) {
  (void)va;
  cost(d, COST_UNMAP + COST_UNMAP_PER_MIB * mib_over_20(size));
}

static void sim_phys_release(struct device *d, uint64_t h, uint64_t size) {
  (void)h;
  cost(d, COST_RELEASE + COST_RELEASE_PER_MIB * (size >> 20));
}

static void sim_close(struct device *d) {
  struct sim *s = d->impl;
  if (s) sim_va_destroy(&s->va);
  free(d->impl);
  d->impl = NULL;
}

static const struct device_ops sim_ops = {
  .name = "sim",
  .malloc = sim_malloc,
  .free = sim_free,
  .va_reserve = sim_va_reserve,
  .va_release = sim_va_release,
  .phys_create = sim_phys_create,
  .map = sim_map,
  .unmap = sim_unmap,
  .phys_release = sim_phys_release,
  .close = sim_close,
};

int sim_open(struct device *d, const struct device_config *cfg, char *err) {
  if (cfg->sim_total > SIM_TOTAL_MAX || cfg->sim_usable > SIM_TOTAL_MAX) {
    snprintf(err, FB_ERRLEN, "sim: %s %llu bytes: at most %llu (4 TiB, the largest simulated device)",
             cfg->sim_total > SIM_TOTAL_MAX ? "total" : "usable",
             (unsigned long long)(cfg->sim_total > SIM_TOTAL_MAX ? cfg->sim_total : cfg->sim_usable), SIM_TOTAL_MAX);
    return -1;
  }
  struct sim *s = calloc(1, sizeof *s);
  if (!s) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  sim_va_init(&s->va, SIM_TOP);
  s->noop = cfg->noop;
  d->impl = s;
  d->ops = &sim_ops;
  d->total = cfg->sim_total ? cfg->sim_total : SIM_TOTAL_DEFAULT;
  d->usable = cfg->sim_usable ? cfg->sim_usable : SIM_USABLE_DEFAULT;
  if (d->usable > d->total) d->usable = d->total;
  snprintf(d->name, sizeof d->name, "sim (H100 80GB HBM3 model)");
  return 0;
}
