/* device.h - the device layer: the only place memory is obtained from (sim or CUDA).
 *
 * Allocators call the dev_* functions below, never CUDA. The common part (device.c)
 * enforces the cap and the usable limit, counts reserved bytes (cudaMalloc'd bytes plus
 * physical pages created: mapping a page twice does not count twice), counts calls,
 * keeps the ranges each strategy holds (for the validator), injects failures for stress
 * tests, and sums driver time (modeled on sim, measured on cuda). The backends
 * (device_sim.c, device_cuda.c) only do the work. */
#ifndef FB_DEVICE_H
#define FB_DEVICE_H
#include <stdint.h>
#include <pthread.h>
#include "event.h"
#include "ordset.h"
#include "handle_table.h"

#define FB_OOM 1            /* return value of a device or allocator call that ran out */
#define DEV_PAGE (2ull << 20) /* VMM granularity (cuMemGetAllocationGranularity on H100) */
/* set in a stream-ordered free's stream id: the block was also used on other streams
 * (record_stream). PyTorch's backend:cudaMallocAsync (CUDAMallocAsyncAllocator.cpp,
 * free_impl) then frees it on a dummy "unifying" stream made to wait, by an event each, on
 * the creation stream and every recording stream; the block is reusable by any stream once
 * the GPU has passed them (the driver's opportunistic reuse), by none before */
#define DEV_STREAM_RECORDED (1ull << 63)

#define SIM_TOTAL_DEFAULT 85017493504ull   /* H100 80GB HBM3, cudaMemGetInfo total */
/* the largest simulated device (4 TiB, over ten times any GPU made): strategies keep
 * per-page tables over the device (expandable, async), so a size near 2^64 is refused
 * at open instead of running out of host memory */
#define SIM_TOTAL_MAX (1ull << 42)
#define SIM_USABLE_DEFAULT 84230209536ull  /* what cudaMalloc could really get there */

struct device;

struct device_ops {
  const char *name;                       /* "sim", "cuda" */
  /* each returns 0, FB_OOM, or <0 for a device error (message in d->err) */
  int  (*malloc)(struct device *, uint64_t size, uint64_t *addr);       /* cudaMalloc */
  void (*free)(struct device *, uint64_t addr, uint64_t size);          /* cudaFree */
  int  (*va_reserve)(struct device *, uint64_t size, uint64_t *va);     /* cuMemAddressReserve */
  void (*va_release)(struct device *, uint64_t va, uint64_t size);      /* cuMemAddressFree */
  int  (*phys_create)(struct device *, uint64_t size, uint64_t *h);     /* cuMemCreate */
  /* cuMemMap of all of handle h at va (the driver maps whole handles only), + cuMemSetAccess */
  int  (*map)(struct device *, uint64_t va, uint64_t size, uint64_t h);
  void (*unmap)(struct device *, uint64_t va, uint64_t size);           /* cuMemUnmap */
  void (*phys_release)(struct device *, uint64_t h, uint64_t size);     /* cuMemRelease */
  /* stream-ordered pool (cuda only; NULL on sim) */
  int  (*pool_alloc)(struct device *, uint64_t size, uint64_t stream, uint64_t *addr);
  /* stream | DEV_STREAM_RECORDED: a block used on other streams too (below) */
  void (*pool_free)(struct device *, uint64_t addr, uint64_t stream);
  void (*pool_trim)(struct device *, uint64_t keep);
  void (*pool_usage)(struct device *, uint64_t *reserved, uint64_t *used);
  int  (*pool_config)(struct device *, uint64_t release_threshold, uint64_t max_size);
  /* real work on blocks (cuda only; NULL on sim) */
  int  (*touch)(struct device *, uint64_t addr, uint64_t size, uint64_t stream);
  int  (*verify_write)(struct device *, uint64_t addr, uint64_t size, uint64_t stream, uint64_t tag);
  int  (*verify_check)(struct device *, uint64_t addr, uint64_t size, uint64_t stream, uint64_t tag);
  int  (*sync)(struct device *);
  void (*close)(struct device *);
};


struct dev_counters {
  uint64_t device_allocs, device_frees;   /* malloc + phys_create ; free + phys_release */
  uint64_t maps, unmaps;
  uint64_t va_reserves, va_releases;
  uint64_t modeled_ns;                    /* sim: cost table; cuda: measured */
  uint64_t injected_failures;
};

struct device {
  const struct device_ops *ops;
  void *impl;                 /* backend state */
  int index;                  /* GPU ordinal, or sim index */
  char name[128];             /* "NVIDIA H100 80GB HBM3", "sim (H100 80GB HBM3)" */
  uint64_t total;             /* what fractions are taken of */
  uint64_t usable;            /* sim: what malloc can get at most */
  uint64_t free_at_open;      /* cuda: cudaMemGetInfo's free when opened (0 on sim) */
  uint64_t cap;               /* 0 = none; else reserved may not exceed it */
  uint64_t same_lo, same_hi;  /* the caps under which every comparison with the cap so far (dev_cap_breaks)
                                 came out as it did: from the largest demand within it to the smallest
                                 demand above it less a byte */
  uint64_t reserved;          /* physical bytes held now */
  uint64_t peak_reserved;
  struct dev_counters c;
  /* held memory: cudaMalloc'd ranges, mapped ranges and pool blocks by address (the
   * validator's view), physical handles by id (their sizes, for reserved accounting) */
  int track_ranges;           /* keep malloc'd/mapped/pool ranges (--validate) */
  struct ordset ranges;
  struct handle_table handles;
  void *held_spare;           /* device.c: records of ranges dropped, for reuse */
  uint64_t pool_reserved;     /* async pool: reserved as the pool reports it */
  /* failure injection (stress): each malloc/phys_create/pool_alloc fails with this probability */
  double fail_rate; uint64_t fail_rng;
  /* thread safety for stress mode only: NULL on the single-threaded replay path */
  pthread_mutex_t *lock;
  char err[FB_ERRLEN];        /* last device error */
  struct stream_acct *by_stream;   /* run --breakdown: reserved split by stream (NULL = off) */
};

struct device_config {
  const char *kind;           /* "sim" or "cuda" */
  int index;
  uint64_t sim_total, sim_usable;  /* 0 = default */
  int noop;                   /* sim: no cost model, no range tracking (engine speed runs) */
};

/* Open a device of the given kind. Returns 0, or -1 with err set (e.g. no GPU). */
int device_open(struct device *d, const struct device_config *cfg, char *err);
void device_close(struct device *d);
int cuda_device_count(char *err);     /* <0 when no driver / no GPU (message in err); sim-only builds: -1 */
void device_set_cap(struct device *d, uint64_t cap);
void device_reset_stats(struct device *d);   /* peak := reserved, counters zeroed */

/* The calls allocators make. 0, FB_OOM, or <0 on a device error. */
int  dev_malloc(struct device *d, uint64_t size, uint64_t *addr);
void dev_free(struct device *d, uint64_t addr, uint64_t size);
int  dev_va_reserve(struct device *d, uint64_t size, uint64_t *va);
void dev_va_release(struct device *d, uint64_t va, uint64_t size);
int  dev_phys_create(struct device *d, uint64_t size, uint64_t *h);
/* all of h (size = its size): cuMemMap refuses part of a handle (offset > 0 or fewer bytes:
 * CUDA_ERROR_NOT_SUPPORTED on the H100, driver 580), so the sim refuses it too */
int  dev_map(struct device *d, uint64_t va, uint64_t size, uint64_t h);
void dev_unmap(struct device *d, uint64_t va, uint64_t size);
void dev_phys_release(struct device *d, uint64_t h);
int  dev_pool_alloc(struct device *d, uint64_t size, uint64_t stream, uint64_t *addr);
void dev_pool_free(struct device *d, uint64_t addr, uint64_t stream);
void dev_pool_trim(struct device *d, uint64_t keep);
int  dev_has_pool(const struct device *d);

/* Validator helpers: is [addr, addr+size) inside memory the device holds for the strategy? */
int dev_holds(const struct device *d, uint64_t addr, uint64_t size);
/* Ranges/handles still held (after destroy this must be 0). */
uint64_t dev_ranges_held(const struct device *d);

/* Does demand (what would be held once a request is granted) break the cap? Every
 * comparison with the cap - the device's own before a reservation, and a strategy's that
 * checks a demand of its own first (expandable) - goes through here, which notes the caps
 * under which it comes out the same (same_lo, same_hi): a strategy that reads the cap only
 * so makes the same run under any of them (mincap answers such probes from it). */
static inline int dev_cap_breaks(struct device *d, uint64_t demand) {
  if (d->cap && demand > d->cap) {
    if (demand - 1 < d->same_hi) d->same_hi = demand - 1;
    return 1;
  }
  if (demand > d->same_lo) d->same_lo = demand;
  return 0;
}

#endif
