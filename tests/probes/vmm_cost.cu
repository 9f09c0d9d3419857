/* vmm_cost.cu - what each CUDA virtual-memory call costs on this GPU, by size and by how
 * many mappings one call covers: cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap,
 * cuMemRelease for one handle of 2..256 MiB, and cuMemSetAccess / cuMemUnmap over a run of
 * k separately created 2 MiB pages mapped side by side (one call for the run, against one
 * call per page); and whether part of a handle can be mapped (a piece from an offset). The sim's cost table (harness/device/device_sim.c) is fitted to these
 * lines. Median of REPS tries, microseconds. Build: nvcc -O2 -o vmm_cost vmm_cost.cu -lcuda */
#include <cuda.h>
#include "drv_probe.h"
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>

#define REPS 21
static double median(double *v, int n) { std::sort(v, v + n); return v[n / 2]; }

static CUmemAllocationProp prop;
static CUmemAccessDesc access_rw;

static void one_handle(uint64_t size) {
  double c[REPS], m[REPS], a[REPS], u[REPS], r[REPS];
  CUdeviceptr va;
  DRV(cuMemAddressReserve(&va, size, 0, 0, 0));
  for (int i = 0; i < REPS; i++) {
    CUmemGenericAllocationHandle h;
    double t0 = now_us(); DRV(cuMemCreate(&h, size, &prop, 0));
    double t1 = now_us(); DRV(cuMemMap(va, size, 0, h, 0));
    double t2 = now_us(); DRV(cuMemSetAccess(va, size, &access_rw, 1));
    double t3 = now_us(); DRV(cuMemUnmap(va, size));
    double t4 = now_us(); DRV(cuMemRelease(h));
    double t5 = now_us();
    c[i] = t1 - t0; m[i] = t2 - t1; a[i] = t3 - t2; u[i] = t4 - t3; r[i] = t5 - t4;
  }
  DRV(cuMemAddressFree(va, size));
  printf("FINDING vmm_one_handle %4llu MiB: create %.1f us, map %.1f us, set_access %.1f us, unmap %.1f us, release %.1f us\n",
         (unsigned long long)(size / MiB), median(c, REPS), median(m, REPS), median(a, REPS), median(u, REPS), median(r, REPS));
}

/* k pages of 2 MiB, each its own handle, mapped side by side; set access and unmap either
 * page by page or the whole run in one call */
static void run_of_pages(int k, uint64_t page) {
  CUmemGenericAllocationHandle *h = (CUmemGenericAllocationHandle *)calloc(k, sizeof *h);
  for (int j = 0; j < k; j++) DRV(cuMemCreate(&h[j], page, &prop, 0));
  CUdeviceptr va;
  DRV(cuMemAddressReserve(&va, k * page, 0, 0, 0));
  double map_each[REPS], acc_each[REPS], unm_each[REPS], acc_run[REPS], unm_run[REPS];
  int run_unmap_ok = 1;
  for (int i = 0; i < REPS; i++) {
    double t0 = now_us();
    for (int j = 0; j < k; j++) DRV(cuMemMap(va + j * page, page, 0, h[j], 0));
    double t1 = now_us();
    for (int j = 0; j < k; j++) DRV(cuMemSetAccess(va + j * page, page, &access_rw, 1));
    double t2 = now_us();
    for (int j = 0; j < k; j++) DRV(cuMemUnmap(va + j * page, page));
    double t3 = now_us();
    map_each[i] = t1 - t0; acc_each[i] = t2 - t1; unm_each[i] = t3 - t2;
    for (int j = 0; j < k; j++) DRV(cuMemMap(va + j * page, page, 0, h[j], 0));
    double t4 = now_us();
    DRV(cuMemSetAccess(va, k * page, &access_rw, 1));
    double t5 = now_us();
    CUresult ur = cuMemUnmap(va, k * page);
    double t6 = now_us();
    if (ur != CUDA_SUCCESS) {
      run_unmap_ok = 0;
      for (int j = 0; j < k; j++) DRV(cuMemUnmap(va + j * page, page));
    }
    acc_run[i] = t5 - t4; unm_run[i] = t6 - t5;
  }
  printf("FINDING vmm_run %3d x %llu MiB: map %.1f us total; set_access per page %.1f us total, one call %.1f us; "
         "unmap per page %.1f us total, one call %.1f us%s\n",
         k, (unsigned long long)(page / MiB), median(map_each, REPS), median(acc_each, REPS), median(acc_run, REPS),
         median(unm_each, REPS), median(unm_run, REPS), run_unmap_ok ? "" : " (one-call unmap REFUSED)");
  DRV(cuMemAddressFree(va, k * page));
  for (int j = 0; j < k; j++) DRV(cuMemRelease(h[j]));
  free(h);
}

/* map 2 MiB of a 4 MiB handle: from offset 0, and from offset 2 MiB */
static void partial_map(void) {
  CUmemGenericAllocationHandle h;
  CUdeviceptr va;
  DRV(cuMemCreate(&h, 4 * MiB, &prop, 0));
  DRV(cuMemAddressReserve(&va, 4 * MiB, 0, 0, 0));
  for (uint64_t off = 0; off <= 2 * MiB; off += 2 * MiB) {
    CUresult r = cuMemMap(va, 2 * MiB, off, h, 0);
    const char *msg = "CUDA_SUCCESS";
    if (r != CUDA_SUCCESS) cuGetErrorName(r, &msg);
    else DRV(cuMemUnmap(va, 2 * MiB));
    printf("FINDING vmm_partial_map: 2 MiB of a 4 MiB handle from offset %llu MiB: %s\n", (unsigned long long)(off / MiB), msg);
  }
  DRV(cuMemAddressFree(va, 4 * MiB));
  DRV(cuMemRelease(h));
}

int main(void) {
  cudaFree(0);
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  memset(&access_rw, 0, sizeof access_rw);
  access_rw.location = prop.location;
  access_rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  size_t gran = 0;
  DRV(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  printf("FINDING vmm_granularity: %zu bytes\n", gran);
  one_handle(2 * MiB);   /* warm-up, not reported separately */
  const uint64_t sizes[] = {2, 4, 8, 20, 64, 256};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) one_handle(sizes[i] * MiB);
  const int ks[] = {1, 4, 10, 32, 100};
  for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) run_of_pages(ks[i], 2 * MiB);
  partial_map();
  return 0;
}
