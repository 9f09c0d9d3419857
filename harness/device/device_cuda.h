/* device_cuda.h - private to the CUDA backend (device_cuda.c, pool_cuda.c, verify_cuda.c):
 * the backend state, status reporting and the stream map. Nothing outside the *_cuda.c
 * files includes this; allocators see only device.h. */
#ifndef FB_DEVICE_CUDA_H
#define FB_DEVICE_CUDA_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
#include "device.h"

/* one CUDA stream per event stream id, created on first use */
struct cuda_stream_slot {
  uint64_t id;
  cudaStream_t stream;
};

struct cuda_dev {
  int ordinal;
  /* driver API, reached through cudaGetDriverEntryPointByVersion (no -lcuda) */
  PFN_cuMemAddressReserve_v10020 mem_address_reserve;
  PFN_cuMemAddressFree_v10020 mem_address_free;
  PFN_cuMemCreate_v10020 mem_create;
  PFN_cuMemRelease_v10020 mem_release;
  PFN_cuMemMap_v10020 mem_map;
  PFN_cuMemUnmap_v10020 mem_unmap;
  PFN_cuMemSetAccess_v10020 mem_set_access;
  PFN_cuMemGetAllocationGranularity_v10020 mem_granularity;
  PFN_cuGetErrorString_v6000 get_error_string;
  PFN_cuGetErrorName_v6000 get_error_name;
  int vmm_ok;                       /* VMM calls usable; else vmm_why says why */
  char vmm_why[FB_ERRLEN / 2];
  size_t granularity;               /* cuMemGetAllocationGranularity (minimum) */
  /* address ranges in the sim's order (see cuda_va_reserve): one large reservation made at
   * the first va_reserve, carved from the top down, never reused */
  uint64_t arena_base, arena_size, arena_top;
  int arena_tried;
  uint64_t va_outside;              /* reservations made outside it (it was full or absent); warned once */
  /* streams */
  struct cuda_stream_slot *streams;
  size_t nstreams, streams_cap, last_stream;
  /* the stream-ordered pool (pool_cuda.c); NULL until first configured or used */
  cudaMemPool_t pool;
  uint64_t pool_max_size, pool_release_threshold;
  int pool_is_default;                           /* the device's default pool (FB_DEFAULT_MEMPOOL=1) */
  uint64_t pool_reserved_seen, pool_used_seen;   /* last attribute values read */
  /* --verify staging (verify_cuda.c) */
  unsigned char *stage;
  /* asynchronous work was issued since the last device-wide synchronize */
  int dirty;
  /* an error from a call that returns nothing (free, unmap, ...): reported by the next
   * call that returns a status, or at close */
  char pending[FB_ERRLEN];
};

static inline struct cuda_dev *cuda_of(struct device *d) { return d->impl; }

static inline uint64_t cuda_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Report a runtime status: 0 on success; FB_OOM on cudaErrorMemoryAllocation (error state
 * cleared); else -1 with d->err = "call(context): message (name, error N)". */
int cuda_rt_status(struct device *d, cudaError_t e, const char *call, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
/* The same for a driver status (CUDA_ERROR_OUT_OF_MEMORY -> FB_OOM). */
int cuda_drv_status(struct device *d, CUresult r, const char *call, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
/* For calls that return nothing: keep d->err as the pending error (first one wins). */
void cuda_defer(struct device *d);
/* Start of a call that returns a status: a pending error is returned first (<0, d->err
 * set); then the device is made current on this thread. 0 when the call may proceed. */
int cuda_begin(struct device *d);
/* Make the device current on this thread (stress mode calls from several threads). */
int cuda_use_device(struct device *d);
/* The CUDA stream for an event stream id (created on first use). */
int cuda_stream_for(struct device *d, uint64_t id, cudaStream_t *out);
/* cudaDeviceSynchronize, clearing the dirty flag. */
int cuda_sync_device(struct device *d);

/* pool_cuda.c */
int  cuda_pool_alloc(struct device *d, uint64_t size, uint64_t stream, uint64_t *addr);
void cuda_pool_free(struct device *d, uint64_t addr, uint64_t stream);
void cuda_pool_trim(struct device *d, uint64_t keep);
void cuda_pool_usage(struct device *d, uint64_t *reserved, uint64_t *used);
int  cuda_pool_config(struct device *d, uint64_t release_threshold, uint64_t max_size);
void cuda_pool_destroy(struct device *d);

/* verify_cuda.c */
int cuda_touch(struct device *d, uint64_t addr, uint64_t size, uint64_t stream);
int cuda_verify_write(struct device *d, uint64_t addr, uint64_t size, uint64_t stream, uint64_t tag);
int cuda_verify_check(struct device *d, uint64_t addr, uint64_t size, uint64_t stream, uint64_t tag);
int cuda_sync(struct device *d);

#endif
