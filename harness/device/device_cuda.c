/* device_cuda.c - the CUDA device backend: cudaMalloc/cudaFree, the virtual memory calls
 * (cuMemAddressReserve, cuMemCreate, cuMemMap + cuMemSetAccess, cuMemUnmap, cuMemRelease,
 * cuMemAddressFree) reached through cudaGetDriverEntryPointByVersion, so that the binary
 * links only the static runtime and starts on a machine without a driver; opening and
 * closing a GPU, the stream map, and status reporting. Every CUDA status is checked: an
 * out-of-memory status becomes FB_OOM, anything else <0 with the call named in d->err.
 * Cap enforcement and reserved counting are device.c's; d->c.modeled_ns here is the
 * measured wall time spent inside the memory calls. The stream-ordered pool is in
 * pool_cuda.c, --touch/--verify in verify_cuda.c. */
#include "device_cuda.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- status reporting ---- */

static int vreport(struct device *d, const char *call, const char *fmt, va_list ap,
                   const char *msg, const char *name, int code) {
  char ctx[FB_ERRLEN / 2];
  vsnprintf(ctx, sizeof ctx, fmt, ap);
  snprintf(d->err, FB_ERRLEN, "%s(%s): %s (%s, error %d)", call, ctx, msg, name, code);
  return -1;
}

int cuda_rt_status(struct device *d, cudaError_t e, const char *call, const char *fmt, ...) {
  if (e == cudaSuccess) return 0;
  (void)cudaGetLastError();   /* clear the error state so the device goes on working */
  va_list ap;
  va_start(ap, fmt);
  vreport(d, call, fmt, ap, cudaGetErrorString(e), cudaGetErrorName(e), (int)e);
  va_end(ap);
  return e == cudaErrorMemoryAllocation ? FB_OOM : -1;
}

int cuda_drv_status(struct device *d, CUresult r, const char *call, const char *fmt, ...) {
  if (r == CUDA_SUCCESS) return 0;
  struct cuda_dev *c = cuda_of(d);
  const char *msg = NULL, *name = NULL;
  if (c->get_error_string && c->get_error_string(r, &msg) != CUDA_SUCCESS) msg = NULL;
  if (c->get_error_name && c->get_error_name(r, &name) != CUDA_SUCCESS) name = NULL;
  va_list ap;
  va_start(ap, fmt);
  vreport(d, call, fmt, ap, msg ? msg : "driver error", name ? name : "CUresult", (int)r);
  va_end(ap);
  return r == CUDA_ERROR_OUT_OF_MEMORY ? FB_OOM : -1;
}

void cuda_defer(struct device *d) {
  struct cuda_dev *c = cuda_of(d);
  if (!c->pending[0]) snprintf(c->pending, sizeof c->pending, "%s", d->err);
}

int cuda_use_device(struct device *d) {
  struct cuda_dev *c = cuda_of(d);
  return cuda_rt_status(d, cudaSetDevice(c->ordinal), "cudaSetDevice", "%d", c->ordinal) ? -1 : 0;
}

int cuda_begin(struct device *d) {
  struct cuda_dev *c = cuda_of(d);
  if (c->pending[0]) {
    snprintf(d->err, FB_ERRLEN, "an earlier call failed: %.480s", c->pending);
    c->pending[0] = 0;
    return -1;
  }
  return cuda_use_device(d);
}

int cuda_sync_device(struct device *d) {
  int rc = cuda_rt_status(d, cudaDeviceSynchronize(), "cudaDeviceSynchronize", "device %d", d->index);
  if (!rc) cuda_of(d)->dirty = 0;
  return rc ? -1 : 0;
}

/* ---- streams ---- */

int cuda_stream_for(struct device *d, uint64_t id, cudaStream_t *out) {
  struct cuda_dev *c = cuda_of(d);
  if (c->last_stream < c->nstreams && c->streams[c->last_stream].id == id) {
    *out = c->streams[c->last_stream].stream;
    return 0;
  }
  for (size_t i = 0; i < c->nstreams; i++)
    if (c->streams[i].id == id) {
      c->last_stream = i;
      *out = c->streams[i].stream;
      return 0;
    }
  if (c->nstreams == c->streams_cap) {
    size_t cap = c->streams_cap ? 2 * c->streams_cap : 8;
    struct cuda_stream_slot *s = realloc(c->streams, cap * sizeof *s);
    if (!s) { snprintf(d->err, FB_ERRLEN, "stream map: out of host memory"); return -1; }
    c->streams = s;
    c->streams_cap = cap;
  }
  cudaStream_t s;
  if (cuda_rt_status(d, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
                     "stream id %llu", (unsigned long long)id))
    return -1;
  c->streams[c->nstreams] = (struct cuda_stream_slot){id, s};
  c->last_stream = c->nstreams++;
  *out = s;
  return 0;
}

/* ---- cudaMalloc / cudaFree ---- */

static int cuda_malloc(struct device *d, uint64_t size, uint64_t *addr) {
  if (cuda_begin(d)) return -1;
  void *p = NULL;
  uint64_t t0 = cuda_now_ns();
  cudaError_t e = cudaMalloc(&p, size);
  d->c.modeled_ns += cuda_now_ns() - t0;
  int rc = cuda_rt_status(d, e, "cudaMalloc", "%llu bytes", (unsigned long long)size);
  if (rc) return rc;
  *addr = (uint64_t)(uintptr_t)p;
  return 0;
}

static void cuda_free(struct device *d, uint64_t addr, uint64_t size) {
  if (cuda_use_device(d)) { cuda_defer(d); return; }
  uint64_t t0 = cuda_now_ns();
  cudaError_t e = cudaFree((void *)(uintptr_t)addr);
  d->c.modeled_ns += cuda_now_ns() - t0;
  if (cuda_rt_status(d, e, "cudaFree", "%#llx, %llu bytes", (unsigned long long)addr, (unsigned long long)size))
    cuda_defer(d);
}

/* ---- virtual memory ---- */

static int vmm_usable(struct device *d, const char *call) {
  struct cuda_dev *c = cuda_of(d);
  if (c->vmm_ok) return 1;
  snprintf(d->err, FB_ERRLEN, "%s: virtual memory calls unavailable on this device: %s", call, c->vmm_why);
  return 0;
}

static CUmemAllocationProp pinned_on(int ordinal) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  return prop;
}

/* address ranges are reserved in whole granules; va_release rounds the same way */
static uint64_t va_extent(const struct cuda_dev *c, uint64_t size) {
  uint64_t g = c->granularity ? c->granularity : DEV_PAGE;
  if (g < DEV_PAGE) g = DEV_PAGE;
  return (size + g - 1) / g * g;
}

/* One cuMemAddressReserve of a large arena (64x the device's memory, halved until the
 * driver agrees, down to 4x), made at the first reservation. The driver hands ranges out
 * in ascending order; the sim in descending order, never reusing an address. Ranges
 * carved from the arena's top down give cuda the sim's order, so a strategy that breaks
 * ties by address across ranges (stitch) decides on cuda as on sim. */
/* cuMemAddressReserve, its time counted as driver time */
static CUresult timed_reserve(struct device *d, struct cuda_dev *c, uint64_t size, CUdeviceptr *p) {
  uint64_t t0 = cuda_now_ns();
  CUresult r = c->mem_address_reserve(p, size, DEV_PAGE, 0, 0);
  d->c.modeled_ns += cuda_now_ns() - t0;
  return r;
}

static void arena_open(struct device *d, struct cuda_dev *c) {
  c->arena_tried = 1;
  uint64_t total = (d->total + DEV_PAGE - 1) / DEV_PAGE * DEV_PAGE;
  for (uint64_t size = 64 * total; size >= 4 * total && size; size /= 2) {
    CUdeviceptr p = 0;
    if (timed_reserve(d, c, size, &p) == CUDA_SUCCESS) {
      c->arena_base = (uint64_t)p;
      c->arena_size = size;
      c->arena_top = (uint64_t)p + size;
      return;
    }
  }
}

static int in_arena(const struct cuda_dev *c, uint64_t va) {
  return c->arena_size && va >= c->arena_base && va < c->arena_base + c->arena_size;
}

static int cuda_va_reserve(struct device *d, uint64_t size, uint64_t *va) {
  struct cuda_dev *c = cuda_of(d);
  if (!vmm_usable(d, "cuMemAddressReserve") || cuda_begin(d)) return -1;
  uint64_t ext = va_extent(c, size);
  if (!c->arena_tried) arena_open(d, c);
  if (c->arena_size && c->arena_top - c->arena_base >= ext) {
    c->arena_top -= ext;
    *va = c->arena_top;
    return 0;
  }
  CUdeviceptr p = 0;
  int rc = cuda_drv_status(d, timed_reserve(d, c, ext, &p), "cuMemAddressReserve", "%llu bytes", (unsigned long long)ext);
  if (rc) return rc;
  if (!c->va_outside++)
    fprintf(stderr, "fragbench: cuda device %d: %s; address ranges now come from the driver, in its order, so "
            "strategies that break ties by address may decide differently than on sim\n", c->ordinal,
            c->arena_size ? "the address arena is full" : "the driver refused an address arena");
  *va = (uint64_t)p;
  return 0;
}

static void cuda_va_release(struct device *d, uint64_t va, uint64_t size) {
  struct cuda_dev *c = cuda_of(d);
  if (in_arena(c, va)) return;   /* never reused, as on sim; the arena goes at close */
  if (!vmm_usable(d, "cuMemAddressFree") || cuda_use_device(d)) { cuda_defer(d); return; }
  uint64_t ext = va_extent(c, size);
  uint64_t t0 = cuda_now_ns();
  CUresult r = c->mem_address_free((CUdeviceptr)va, ext);
  d->c.modeled_ns += cuda_now_ns() - t0;
  if (cuda_drv_status(d, r, "cuMemAddressFree", "%#llx, %llu bytes", (unsigned long long)va, (unsigned long long)ext))
    cuda_defer(d);
}

static int cuda_phys_create(struct device *d, uint64_t size, uint64_t *h) {
  struct cuda_dev *c = cuda_of(d);
  if (!vmm_usable(d, "cuMemCreate") || cuda_begin(d)) return -1;
  CUmemAllocationProp prop = pinned_on(c->ordinal);
  CUmemGenericAllocationHandle handle = 0;
  uint64_t t0 = cuda_now_ns();
  CUresult r = c->mem_create(&handle, size, &prop, 0);
  d->c.modeled_ns += cuda_now_ns() - t0;
  int rc = cuda_drv_status(d, r, "cuMemCreate", "%llu bytes on device %d", (unsigned long long)size, c->ordinal);
  if (rc) return rc;
  *h = (uint64_t)handle;
  return 0;
}

static int cuda_map(struct device *d, uint64_t va, uint64_t size, uint64_t h) {
  struct cuda_dev *c = cuda_of(d);
  if (!vmm_usable(d, "cuMemMap") || cuda_begin(d)) return -1;
  CUmemAccessDesc access;
  memset(&access, 0, sizeof access);
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = c->ordinal;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  uint64_t t0 = cuda_now_ns();
  CUresult r = c->mem_map((CUdeviceptr)va, size, 0, (CUmemGenericAllocationHandle)h, 0);
  CUresult a = r == CUDA_SUCCESS ? c->mem_set_access((CUdeviceptr)va, size, &access, 1) : CUDA_SUCCESS;
  d->c.modeled_ns += cuda_now_ns() - t0;
  int rc = cuda_drv_status(d, r, "cuMemMap", "%#llx, %llu bytes, handle %#llx", (unsigned long long)va,
                           (unsigned long long)size, (unsigned long long)h);
  if (rc) return rc;
  rc = cuda_drv_status(d, a, "cuMemSetAccess", "%#llx, %llu bytes, read-write on device %d",
                       (unsigned long long)va, (unsigned long long)size, c->ordinal);
  if (rc) {
    char why[FB_ERRLEN];
    snprintf(why, sizeof why, "%s", d->err);
    CUresult u = c->mem_unmap((CUdeviceptr)va, size);   /* leave nothing half-mapped */
    if (cuda_drv_status(d, u, "cuMemUnmap", "%#llx after a failed cuMemSetAccess", (unsigned long long)va))
      cuda_defer(d);
    snprintf(d->err, FB_ERRLEN, "%s", why);
    return rc;
  }
  return 0;
}

static void cuda_unmap(struct device *d, uint64_t va, uint64_t size) {
  struct cuda_dev *c = cuda_of(d);
  if (!vmm_usable(d, "cuMemUnmap") || cuda_use_device(d)) { cuda_defer(d); return; }
  /* cuMemUnmap does not wait for work still using the range (--touch, --verify) */
  if (c->dirty && cuda_sync_device(d)) { cuda_defer(d); return; }
  uint64_t t0 = cuda_now_ns();
  CUresult r = c->mem_unmap((CUdeviceptr)va, size);
  d->c.modeled_ns += cuda_now_ns() - t0;
  if (cuda_drv_status(d, r, "cuMemUnmap", "%#llx, %llu bytes", (unsigned long long)va, (unsigned long long)size))
    cuda_defer(d);
}

static void cuda_phys_release(struct device *d, uint64_t h, uint64_t size) {
  (void)size;
  struct cuda_dev *c = cuda_of(d);
  if (!vmm_usable(d, "cuMemRelease") || cuda_use_device(d)) { cuda_defer(d); return; }
  uint64_t t0 = cuda_now_ns();
  CUresult r = c->mem_release((CUmemGenericAllocationHandle)h);
  d->c.modeled_ns += cuda_now_ns() - t0;
  if (cuda_drv_status(d, r, "cuMemRelease", "handle %#llx", (unsigned long long)h))
    cuda_defer(d);
}

/* ---- open / close ---- */

static void cuda_close(struct device *d) {
  struct cuda_dev *c = cuda_of(d);
  if (!c) return;
  if (!cuda_use_device(d)) {
    if (cuda_sync_device(d)) cuda_defer(d);
    cuda_pool_destroy(d);
    if (c->arena_size && cuda_drv_status(d, c->mem_address_free((CUdeviceptr)c->arena_base, c->arena_size),
                                         "cuMemAddressFree", "the address arena, %llu bytes",
                                         (unsigned long long)c->arena_size))
      cuda_defer(d);
    for (size_t i = 0; i < c->nstreams; i++)
      if (cuda_rt_status(d, cudaStreamDestroy(c->streams[i].stream), "cudaStreamDestroy", "stream id %llu",
                         (unsigned long long)c->streams[i].id))
        cuda_defer(d);
  } else {
    cuda_defer(d);
  }
  if (c->pending[0]) fprintf(stderr, "fragbench: cuda device %d: %s\n", c->ordinal, c->pending);
  free(c->streams);
  free(c->stage);
  free(c);
  d->impl = NULL;
}

static const struct device_ops cuda_ops = {
  .name = "cuda",
  .malloc = cuda_malloc,
  .free = cuda_free,
  .va_reserve = cuda_va_reserve,
  .va_release = cuda_va_release,
  .phys_create = cuda_phys_create,
  .map = cuda_map,
  .unmap = cuda_unmap,
  .phys_release = cuda_phys_release,
  .pool_alloc = cuda_pool_alloc,
  .pool_free = cuda_pool_free,
  .pool_trim = cuda_pool_trim,
  .pool_usage = cuda_pool_usage,
  .pool_config = cuda_pool_config,
  .touch = cuda_touch,
  .verify_write = cuda_verify_write,
  .verify_check = cuda_verify_check,
  .sync = cuda_sync,
  .close = cuda_close,
};

/* the same without the stream-ordered pool, for a GPU that does not support memory pools */
static const struct device_ops cuda_ops_no_pool = {
  .name = "cuda",
  .malloc = cuda_malloc,
  .free = cuda_free,
  .va_reserve = cuda_va_reserve,
  .va_release = cuda_va_release,
  .phys_create = cuda_phys_create,
  .map = cuda_map,
  .unmap = cuda_unmap,
  .phys_release = cuda_phys_release,
  .touch = cuda_touch,
  .verify_write = cuda_verify_write,
  .verify_check = cuda_verify_check,
  .sync = cuda_sync,
  .close = cuda_close,
};

int cuda_device_count(char *err) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    const char *what = e == cudaErrorInsufficientDriver ? "no CUDA driver"
                     : e == cudaErrorNoDevice ? "no CUDA GPU" : "CUDA unavailable";
    snprintf(err, FB_ERRLEN, "%s (cudaGetDeviceCount: %s, error %d)", what, cudaGetErrorString(e), (int)e);
    return -1;
  }
  if (n <= 0) {
    snprintf(err, FB_ERRLEN, "no CUDA GPU (cudaGetDeviceCount: 0 devices)");
    return -1;
  }
  return n;
}

/* One driver symbol at the ABI version its PFN type was declared for. */
static int entry_point(const char *symbol, unsigned version, void **fn, char *why, size_t whylen) {
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  *fn = NULL;
  cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, fn, version, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn) {
    (void)cudaGetLastError();
    snprintf(why, whylen, "cudaGetDriverEntryPointByVersion(%s, %u): %s", symbol, version,
             e != cudaSuccess ? cudaGetErrorString(e)
             : q == cudaDriverEntryPointVersionNotSufficent ? "driver too old for this version" : "symbol not found");
    *fn = NULL;
    return -1;
  }
  return 0;
}

/* The driver API: error strings (optional) and the virtual memory calls (VMM strategies). */
static void load_driver_api(struct device *d) {
  struct cuda_dev *c = cuda_of(d);
  char ignored[FB_ERRLEN / 2];
  void *fn;
  if (!entry_point("cuGetErrorString", 6000, &fn, ignored, sizeof ignored)) c->get_error_string = (PFN_cuGetErrorString_v6000)fn;
  if (!entry_point("cuGetErrorName", 6000, &fn, ignored, sizeof ignored)) c->get_error_name = (PFN_cuGetErrorName_v6000)fn;
  struct { const char *sym; void **slot; } vmm[] = {
    {"cuMemAddressReserve", (void **)&c->mem_address_reserve},
    {"cuMemAddressFree", (void **)&c->mem_address_free},
    {"cuMemCreate", (void **)&c->mem_create},
    {"cuMemRelease", (void **)&c->mem_release},
    {"cuMemMap", (void **)&c->mem_map},
    {"cuMemUnmap", (void **)&c->mem_unmap},
    {"cuMemSetAccess", (void **)&c->mem_set_access},
    {"cuMemGetAllocationGranularity", (void **)&c->mem_granularity},
  };
  for (size_t i = 0; i < sizeof vmm / sizeof vmm[0]; i++)
    if (entry_point(vmm[i].sym, 10020, vmm[i].slot, c->vmm_why, sizeof c->vmm_why)) return;
  CUmemAllocationProp prop = pinned_on(c->ordinal);
  size_t g = 0;
  CUresult r = c->mem_granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (cuda_drv_status(d, r, "cuMemGetAllocationGranularity", "device %d", c->ordinal)) {
    snprintf(c->vmm_why, sizeof c->vmm_why, "%.250s", d->err);
    d->err[0] = 0;
    return;
  }
  c->granularity = g;
  if (g != DEV_PAGE) {
    int fits = g && DEV_PAGE % g == 0;
    fprintf(stderr, "fragbench: cuda device %d: VMM granularity is %zu bytes, not the 2 MiB the device layer assumes%s\n",
            c->ordinal, g, fits ? " (2 MiB pages are still valid)" : "; VMM strategies cannot run here");
    if (!fits) {
      snprintf(c->vmm_why, sizeof c->vmm_why, "allocation granularity %zu bytes does not divide 2 MiB", g);
      return;
    }
  }
  c->vmm_ok = 1;
}

int cuda_open(struct device *d, const struct device_config *cfg, char *err) {
  int n = cuda_device_count(err);
  if (n < 0) return -1;
  if (cfg->index < 0 || cfg->index >= n) {
    snprintf(err, FB_ERRLEN, "cuda device %d: only %d GPU%s visible", cfg->index, n, n == 1 ? "" : "s");
    return -1;
  }
  struct cuda_dev *c = calloc(1, sizeof *c);
  if (!c) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  c->ordinal = cfg->index;
  c->pool_release_threshold = UINT64_MAX;
  d->impl = c;
  d->ops = &cuda_ops;
  struct cudaDeviceProp prop;
  size_t free_b = 0, total_b = 0;
  int pools = 0;
  if (cuda_use_device(d)
      || cuda_rt_status(d, cudaGetDeviceProperties(&prop, c->ordinal), "cudaGetDeviceProperties", "%d", c->ordinal)
      || cuda_rt_status(d, cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", "device %d", c->ordinal)
      || cuda_rt_status(d, cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, c->ordinal),
                        "cudaDeviceGetAttribute", "cudaDevAttrMemoryPoolsSupported, device %d", c->ordinal)) {
    snprintf(err, FB_ERRLEN, "cuda device %d: %.480s", c->ordinal, d->err);
    free(c);
    d->impl = NULL;
    d->ops = NULL;
    return -1;
  }
  if (!pools) d->ops = &cuda_ops_no_pool;
  snprintf(d->name, sizeof d->name, "%.127s", prop.name);
  d->total = total_b;
  d->usable = 0;              /* the real driver enforces what is usable */
  d->free_at_open = free_b;
  load_driver_api(d);
  return 0;
}
