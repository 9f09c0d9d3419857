/* vmm_teardown.cu - whether the CUDA driver unmaps and releases handles faster from several
 * host threads than from one: what a stitch row's teardown (every mapping unmapped, every
 * handle released, after the row's figures are taken) could gain by spreading its calls.
 * N handles of 2 MiB each, created and mapped side by side in one reserved range (access
 * set), then unmapped page by page and released, on T threads (each its share of the
 * pages), timed from the first call to the last; REPS tries each, the median. Also the same
 * pages mapped a second time in another range (as stitched views are), both unmapped.
 * Build: nvcc -O2 -o vmm_teardown vmm_teardown.cu -lcuda -lpthread
 * Run:   ./vmm_teardown [N=4096] */
#include <cuda.h>
#include "drv_probe.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>

#define PAGE (2 * MiB)
#define REPS 5

static double now_ms(void) { return now_us() / 1e3; }

static CUcontext ctx;
static CUmemAllocationProp prop;
static CUmemAccessDesc access_rw;

struct share { CUdeviceptr va, va2; CUmemGenericAllocationHandle *h; int lo, hi; };

static void *teardown_share(void *arg) {
  struct share *s = (struct share *)arg;
  DRV(cuCtxSetCurrent(ctx));
  for (int j = s->lo; j < s->hi; j++) {
    DRV(cuMemUnmap(s->va + (uint64_t)j * PAGE, PAGE));
    if (s->va2) DRV(cuMemUnmap(s->va2 + (uint64_t)j * PAGE, PAGE));
    DRV(cuMemRelease(s->h[j]));
  }
  return NULL;
}

/* one try: n pages created and mapped (twice when views), then torn down on t threads */
static double one_try(int n, int t, int views) {
  CUmemGenericAllocationHandle *h = (CUmemGenericAllocationHandle *)calloc(n, sizeof *h);
  CUdeviceptr va, va2 = 0;
  DRV(cuMemAddressReserve(&va, (uint64_t)n * PAGE, 0, 0, 0));
  if (views) DRV(cuMemAddressReserve(&va2, (uint64_t)n * PAGE, 0, 0, 0));
  for (int j = 0; j < n; j++) {
    DRV(cuMemCreate(&h[j], PAGE, &prop, 0));
    DRV(cuMemMap(va + (uint64_t)j * PAGE, PAGE, 0, h[j], 0));
    DRV(cuMemSetAccess(va + (uint64_t)j * PAGE, PAGE, &access_rw, 1));
    if (views) {
      DRV(cuMemMap(va2 + (uint64_t)j * PAGE, PAGE, 0, h[j], 0));
      DRV(cuMemSetAccess(va2 + (uint64_t)j * PAGE, PAGE, &access_rw, 1));
    }
  }
  pthread_t th[64];
  struct share sh[64];
  double t0 = now_ms();
  for (int k = 0; k < t; k++) {
    sh[k] = (struct share){va, va2, h, (int)((int64_t)n * k / t), (int)((int64_t)n * (k + 1) / t)};
    if (t == 1) teardown_share(&sh[k]);
    else pthread_create(&th[k], NULL, teardown_share, &sh[k]);
  }
  if (t > 1) for (int k = 0; k < t; k++) pthread_join(th[k], NULL);
  double ms = now_ms() - t0;
  DRV(cuMemAddressFree(va, (uint64_t)n * PAGE));
  if (views) DRV(cuMemAddressFree(va2, (uint64_t)n * PAGE));
  free(h);
  return ms;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  CUdevice dev;
  DRV(cuInit(0));
  DRV(cuDeviceGet(&dev, 0));
  DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
  DRV(cuCtxSetCurrent(ctx));
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  access_rw.location = prop.location;
  access_rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const int threads[] = {1, 2, 4, 8};
  for (int views = 0; views < 2; views++)
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
      double v[REPS];
      for (int r = 0; r < REPS; r++) v[r] = one_try(n, threads[i], views);
      std::sort(v, v + REPS);
      printf("FINDING vmm_teardown %d pages of 2 MiB%s, %d thread%s: %.1f ms (median of %d; %.1f-%.1f), %.2f us a page\n", n,
             views ? " each mapped twice" : "", threads[i], threads[i] == 1 ? "" : "s", v[REPS / 2], REPS, v[0], v[REPS - 1],
             v[REPS / 2] * 1e3 / n);
    }
  return 0;
}
