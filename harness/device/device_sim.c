/* device_sim.c - the simulated device: an H100 80GB HBM3 as CUDA reports it, by default.
 * Deterministic and CPU only. Addresses are handed out downward from the top of a
 * 2^47-byte range, 2 MiB aligned, never reused (best-fit ties between equal-size blocks
 * break by address; descending fresh addresses reproduce PyTorch's choices on real
 * traces). Each call adds a modeled driver time from the cost table measured on an H100
 * (CUDA 13.0, driver 580): see DESIGN.md "Sim cost table". */
#include "device.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_TOP (1ull << 47)

/* modeled driver time, ns */
#define COST_MALLOC_SMALL 2550ull     /* half of a 5.1 us cudaMalloc+cudaFree pair (<= 4 KiB) */
#define COST_MALLOC_LARGE 29300ull    /* half of a 58.6 us pair (512 B .. 256 MiB) */
#define COST_CREATE_MAP_PAGE 32000ull /* create, and map+set-access: 64 us per 2 MiB page together */
#define COST_UNMAP_RELEASE_PAGE 26000ull /* unmap, and release: 52 us per 2 MiB page together */
#define COST_VA 6600ull               /* address reserve/free: taken as one cudaMemGetInfo-sized call */

struct sim {
  uint64_t next_addr;   /* the lowest address handed out so far */
  uint64_t next_handle;
  int noop;             /* no cost model */
};

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static int take_va(struct device *d, uint64_t size, uint64_t *addr) {
  struct sim *s = d->impl;
  uint64_t r = round_up(size, DEV_PAGE);
  if (r > s->next_addr) {
    snprintf(d->err, FB_ERRLEN, "sim: virtual address space exhausted");
    return -1;
  }
  s->next_addr -= r;
  *addr = s->next_addr;
  return 0;
}

static void cost(struct device *d, uint64_t ns) {
  struct sim *s = d->impl;
  if (!s->noop) d->c.modeled_ns += ns;
}

static uint64_t pages(uint64_t size) { return (size + DEV_PAGE - 1) / DEV_PAGE; }

static int sim_malloc(struct device *d, uint64_t size, uint64_t *addr) {
  cost(d, size <= 4096 ? COST_MALLOC_SMALL : COST_MALLOC_LARGE);
  return take_va(d, size, addr);
}

static void sim_free(struct device *d, uint64_t addr, uint64_t size) {
  (void)addr;
  cost(d, size <= 4096 ? COST_MALLOC_SMALL : COST_MALLOC_LARGE);
}

static int sim_va_reserve(struct device *d, uint64_t size, uint64_t *va) {
  cost(d, COST_VA);
  return take_va(d, size, va);
}

static void sim_va_release(struct device *d, uint64_t va, uint64_t size) {
  (void)va; (void)size;
  cost(d, COST_VA);
}

static int sim_phys_create(struct device *d, uint64_t size, uint64_t *h) {
  struct sim *s = d->impl;
  cost(d, COST_CREATE_MAP_PAGE * pages(size));
  *h = ++s->next_handle;
  return 0;
}

static int sim_map(struct device *d, uint64_t va, uint64_t size, uint64_t h) {
  (void)va; (void)h;
  cost(d, COST_CREATE_MAP_PAGE * pages(size));
  return 0;
}

static void sim_unmap(struct device *d, uint64_t va, uint64_t size) {
  (void)va;
  cost(d, COST_UNMAP_RELEASE_PAGE * pages(size));
}

static void sim_phys_release(struct device *d, uint64_t h) {
  (void)h;
  cost(d, COST_UNMAP_RELEASE_PAGE);
}

static void sim_close(struct device *d) {
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
  struct sim *s = calloc(1, sizeof *s);
  if (!s) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  s->next_addr = SIM_TOP;
  s->noop = cfg->noop;
  d->impl = s;
  d->ops = &sim_ops;
  d->total = cfg->sim_total ? cfg->sim_total : SIM_TOTAL_DEFAULT;
  d->usable = cfg->sim_usable ? cfg->sim_usable : SIM_USABLE_DEFAULT;
  if (d->usable > d->total) d->usable = d->total;
  snprintf(d->name, sizeof d->name, "sim (H100 80GB HBM3 model)");
  return 0;
}
