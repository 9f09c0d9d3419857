/* probe.h - shared helpers of the cudaMallocAsync pool probes (tests/probes/async_*.cu):
 * a fresh explicit pool per question, its reserved/used/high attributes, a kernel that
 * keeps a stream busy, and CHECK() that stops on any CUDA error. Each probe prints lines
 * "FINDING <name>: <what it saw>" that run_async_probes.sh collects. */
#ifndef FB_PROBE_H
#define FB_PROBE_H
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1ull << 20)
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static cudaMemPool_t new_pool(uint64_t max_size, uint64_t threshold) {
  cudaMemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = cudaMemAllocationTypePinned;
  p.location.type = cudaMemLocationTypeDevice;
  p.location.id = 0;
  p.maxSize = max_size;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &p));
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  return pool;
}

static uint64_t attr(cudaMemPool_t pool, cudaMemPoolAttr a) {
  uint64_t v = 0;
  CHECK(cudaMemPoolGetAttribute(pool, a, &v));
  return v;
}
static uint64_t reserved(cudaMemPool_t p) { return attr(p, cudaMemPoolAttrReservedMemCurrent); }
static uint64_t used(cudaMemPool_t p) { return attr(p, cudaMemPoolAttrUsedMemCurrent); }
static uint64_t reserved_high(cudaMemPool_t p) { return attr(p, cudaMemPoolAttrReservedMemHigh); }

static uint64_t palloc(cudaMemPool_t pool, uint64_t size, cudaStream_t s) {
  void *ptr = NULL;
  CHECK(cudaMallocFromPoolAsync(&ptr, size, pool, s));
  return (uint64_t)(uintptr_t)ptr;
}
static int try_palloc(cudaMemPool_t pool, uint64_t size, cudaStream_t s, uint64_t *out) {
  void *ptr = NULL;
  cudaError_t e = cudaMallocFromPoolAsync(&ptr, size, pool, s);
  if (e != cudaSuccess) { cudaGetLastError(); return -1; }
  *out = (uint64_t)(uintptr_t)ptr;
  return 0;
}
static void pfree(uint64_t a, cudaStream_t s) { CHECK(cudaFreeAsync((void *)(uintptr_t)a, s)); }

/* keeps the stream busy for about ms milliseconds */
__global__ void spin_kernel(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) { }
}
static void spin(cudaStream_t s, double ms) {
  int khz = 0;
  CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  spin_kernel<<<1, 1, 0, s>>>((long long)(ms * khz));
  CHECK(cudaGetLastError());
}
/* the smallest stream-ordered use of a block: one byte written on its stream */
static void touch1(uint64_t a, cudaStream_t s) { CHECK(cudaMemsetAsync((void *)(uintptr_t)a, 0, 1, s)); }

static double mib(uint64_t b) { return (double)b / (double)MiB; }
#endif
