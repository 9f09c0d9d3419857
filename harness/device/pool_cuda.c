/* pool_cuda.c - the CUDA backend's stream-ordered pool (the `async` strategy): one
 * cudaMemPool per device, created with cudaMemAllocationTypePinned on the device, maxSize =
 * the cap (CUDA 12.2+; rounded down to whole 2 MiB pages, the pool's smallest physical
 * unit), cudaMemPoolAttrReleaseThreshold = release_threshold. Blocks come from
 * cudaMallocFromPoolAsync and go back with cudaFreeAsync on the event's stream (a block
 * other streams used too, on a unifying stream, as PyTorch's backend does); reserved
 * and used are the pool's own attributes, read after every call that can change them
 * (device.c calls pool_usage; that reading is timed as driver time, so that the per-op
 * host time stays the strategy's own). Trimming waits for the device first, so that
 * completed frees are observed and their memory can be released. */
#include "device_cuda.h"
#include <stdio.h>
#include <string.h>

static uint64_t pool_max_for(uint64_t cap) {
  if (!cap) return 0;                       /* no cap: the driver's own limit */
  uint64_t m = cap / DEV_PAGE * DEV_PAGE;
  return m ? m : DEV_PAGE;
}

static int pool_create(struct device *d, uint64_t max_size) {
  struct cuda_dev *c = cuda_of(d);
  /* FB_DEFAULT_MEMPOOL=1: uncapped runs use the device's default pool, as PyTorch's
   * backend:cudaMallocAsync does (an experiment knob: does the pool kind change reserved?) */
  const char *dflt = getenv("FB_DEFAULT_MEMPOOL");
  if (!max_size && dflt && !strcmp(dflt, "1")) {
    cudaMemPool_t pool = NULL;
    if (cuda_rt_status(d, cudaDeviceGetDefaultMemPool(&pool, c->ordinal), "cudaDeviceGetDefaultMemPool", "device %d", c->ordinal))
      return -1;
    c->pool = pool;
    c->pool_is_default = 1;
    c->pool_max_size = 0;
    c->pool_reserved_seen = c->pool_used_seen = 0;
    return 0;
  }
  struct cudaMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = c->ordinal;
  props.maxSize = (size_t)max_size;
  cudaMemPool_t pool = NULL;
  if (cuda_rt_status(d, cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate", "device %d, maxSize %llu",
                     c->ordinal, (unsigned long long)max_size))
    return -1;
  c->pool = pool;
  c->pool_max_size = max_size;
  c->pool_reserved_seen = c->pool_used_seen = 0;
  return 0;
}

static int pool_set_threshold(struct device *d, uint64_t threshold) {
  struct cuda_dev *c = cuda_of(d);
  uint64_t v = threshold;
  if (cuda_rt_status(d, cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &v),
                     "cudaMemPoolSetAttribute", "cudaMemPoolAttrReleaseThreshold = %llu", (unsigned long long)v))
    return -1;
  c->pool_release_threshold = threshold;
  return 0;
}

/* timed as driver time: reading the pool's figures is the harness's cost, not the strategy's */
static int pool_attr(struct device *d, enum cudaMemPoolAttr attr, const char *name, uint64_t *out) {
  uint64_t v = 0;
  uint64_t t0 = cuda_now_ns();
  cudaError_t e = cudaMemPoolGetAttribute(cuda_of(d)->pool, attr, &v);
  d->c.modeled_ns += cuda_now_ns() - t0;
  if (cuda_rt_status(d, e, "cudaMemPoolGetAttribute", "%s", name))
    return -1;
  *out = v;
  return 0;
}

void cuda_pool_destroy(struct device *d) {
  struct cuda_dev *c = cuda_of(d);
  if (!c->pool) return;
  /* blocks still allocated are released by the driver once they are freed; the default
   * pool is not ours to destroy: give its memory back instead */
  if (c->pool_is_default) {
    if (cuda_sync_device(d) || cuda_rt_status(d, cudaMemPoolTrimTo(c->pool, 0), "cudaMemPoolTrimTo", "default pool, 0"))
      cuda_defer(d);
  } else if (cuda_rt_status(d, cudaMemPoolDestroy(c->pool), "cudaMemPoolDestroy", "device %d", c->ordinal)) {
    cuda_defer(d);
  }
  c->pool_is_default = 0;
  c->pool = NULL;
  c->pool_reserved_seen = c->pool_used_seen = 0;
}

int cuda_pool_config(struct device *d, uint64_t release_threshold, uint64_t max_size) {
  struct cuda_dev *c = cuda_of(d);
  if (cuda_begin(d)) return -1;
  uint64_t max = pool_max_for(max_size);
  if (c->pool && c->pool_max_size != max) {
    /* maxSize is fixed at creation: a new cap needs a new (empty) pool */
    uint64_t used = 0;
    if (pool_attr(d, cudaMemPoolAttrUsedMemCurrent, "cudaMemPoolAttrUsedMemCurrent", &used)) return -1;
    if (used) {
      snprintf(d->err, FB_ERRLEN, "cudaMemPoolCreate: cannot change the pool's maxSize to %llu while %llu bytes are allocated from it",
               (unsigned long long)max, (unsigned long long)used);
      return -1;
    }
    if (cuda_sync_device(d)) return -1;
    cuda_pool_destroy(d);
    if (c->pending[0]) return cuda_begin(d);
  }
  if (!c->pool && pool_create(d, max)) return -1;
  return pool_set_threshold(d, release_threshold);
}

int cuda_pool_alloc(struct device *d, uint64_t size, uint64_t stream, uint64_t *addr) {
  struct cuda_dev *c = cuda_of(d);
  if (!c->pool && cuda_pool_config(d, c->pool_release_threshold, d->cap)) return -1;
  cudaStream_t s;
  if (cuda_begin(d) || cuda_stream_for(d, stream, &s)) return -1;
  void *p = NULL;
  uint64_t t0 = cuda_now_ns();
  cudaError_t e = cudaMallocFromPoolAsync(&p, size ? size : 1, c->pool, s);
  d->c.modeled_ns += cuda_now_ns() - t0;
  int rc = cuda_rt_status(d, e, "cudaMallocFromPoolAsync", "%llu bytes on stream id %llu",
                          (unsigned long long)size, (unsigned long long)stream);
  if (rc) return rc;
  c->dirty = 1;
  *addr = (uint64_t)(uintptr_t)p;
  return 0;
}

/* PyTorch's sync_raw: `dependent` waits for what `dependency` has queued, by an event */
static int sync_raw(struct device *d, cudaStream_t dependency, cudaStream_t dependent) {
  cudaEvent_t ev;
  if (cuda_rt_status(d, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags", "record_stream free"))
    return -1;
  int rc = cuda_rt_status(d, cudaEventRecord(ev, dependency), "cudaEventRecord", "record_stream free")
           || cuda_rt_status(d, cudaStreamWaitEvent(dependent, ev, 0), "cudaStreamWaitEvent", "record_stream free");
  if (cuda_rt_status(d, cudaEventDestroy(ev), "cudaEventDestroy", "record_stream free")) rc = -1;
  return rc ? -1 : 0;
}

/* A block other streams used too (DEV_STREAM_RECORDED), as CUDAMallocAsyncAllocator.cpp's
 * free_impl frees it: a dummy "unifying" stream (one per device, nothing allocates on it)
 * waits on the creation stream and on every recording stream, and the free is queued on
 * it. The trace does not say which streams recorded the block: every stream this replay
 * has used stands for them (a superset; in a job of two or three streams, the same). The
 * stream map holds the unifying stream under the id DEV_STREAM_RECORDED. */
static int unified_stream(struct device *d, uint64_t stream, cudaStream_t *out) {
  struct cuda_dev *c = cuda_of(d);
  cudaStream_t u, s;
  if (cuda_stream_for(d, DEV_STREAM_RECORDED, &u) || cuda_stream_for(d, stream & ~DEV_STREAM_RECORDED, &s)) return -1;
  uint64_t t0 = cuda_now_ns();
  int rc = sync_raw(d, s, u);
  for (size_t i = 0; !rc && i < c->nstreams; i++)
    if (c->streams[i].id != DEV_STREAM_RECORDED && c->streams[i].stream != s) rc = sync_raw(d, c->streams[i].stream, u);
  d->c.modeled_ns += cuda_now_ns() - t0;
  *out = u;
  return rc;
}

void cuda_pool_free(struct device *d, uint64_t addr, uint64_t stream) {
  struct cuda_dev *c = cuda_of(d);
  cudaStream_t s;
  if (cuda_use_device(d)) { cuda_defer(d); return; }
  if (stream & DEV_STREAM_RECORDED ? unified_stream(d, stream, &s) : cuda_stream_for(d, stream, &s)) { cuda_defer(d); return; }
  uint64_t t0 = cuda_now_ns();
  cudaError_t e = cudaFreeAsync((void *)(uintptr_t)addr, s);
  d->c.modeled_ns += cuda_now_ns() - t0;
  if (cuda_rt_status(d, e, "cudaFreeAsync", "%#llx on stream id %llu", (unsigned long long)addr, (unsigned long long)stream))
    cuda_defer(d);
  else
    c->dirty = 1;
}

void cuda_pool_trim(struct device *d, uint64_t keep) {
  struct cuda_dev *c = cuda_of(d);
  if (!c->pool) return;
  if (cuda_use_device(d) || cuda_sync_device(d)) { cuda_defer(d); return; }
  uint64_t t0 = cuda_now_ns();
  cudaError_t e = cudaMemPoolTrimTo(c->pool, (size_t)keep);
  d->c.modeled_ns += cuda_now_ns() - t0;
  if (cuda_rt_status(d, e, "cudaMemPoolTrimTo", "%llu bytes", (unsigned long long)keep)) cuda_defer(d);
}

void cuda_pool_usage(struct device *d, uint64_t *reserved, uint64_t *used) {
  struct cuda_dev *c = cuda_of(d);
  if (c->pool) {
    /* on failure the last values read stand, and the error is reported by the next call */
    if (pool_attr(d, cudaMemPoolAttrReservedMemCurrent, "cudaMemPoolAttrReservedMemCurrent", &c->pool_reserved_seen)
        || pool_attr(d, cudaMemPoolAttrUsedMemCurrent, "cudaMemPoolAttrUsedMemCurrent", &c->pool_used_seen))
      cuda_defer(d);
  }
  *reserved = c->pool_reserved_seen;
  *used = c->pool_used_seen;
}
