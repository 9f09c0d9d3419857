/* drv_probe.h - shared helpers of the CUDA driver-API probes (vmm_cost.cu, vmm_teardown.cu):
 * DRV() that stops on any driver error with the call and its message, and a monotonic
 * clock in microseconds. */
#ifndef FB_DRV_PROBE_H
#define FB_DRV_PROBE_H
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MiB (1ull << 20)
#define DRV(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = "?"; cuGetErrorString(r_, &s_); \
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

static inline double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
#endif
