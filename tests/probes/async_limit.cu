/* async_limit.cu - a cudaMemPool near its limits: under maxSize (a cap that is not a
 * multiple of 32 MiB: how far reserved goes, what the last blocks get), and near the
 * device's physical limit (most memory taken by cudaMalloc first: does the pool still
 * place blocks when fewer than 32 MiB are left, and with what granularity). Prints
 * FINDING lines. */
#include "probe.h"

static cudaStream_t s;

static void under_max(uint64_t max, uint64_t bs) {
  cudaMemPool_t p = new_pool(max, UINT64_MAX);
  uint64_t got = 0, a, last = 0;
  int n = 0;
  while (n < 100000 && !try_palloc(p, bs, s, &a)) { n++; got += bs; last = reserved(p); }
  printf("FINDING limit maxSize=%.1f MiB blocks of %.3f MiB: %d fit (%.1f MiB used), reserved %.1f MiB at the end\n",
         mib(max), mib(bs), n, mib(got), mib(last));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolDestroy(p));   /* blocks still allocated: the driver frees them with the pool */
}

int main(void) {
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  under_max(48 * MiB, 1 * MiB);
  under_max(48 * MiB, 20 * MiB);
  under_max(100 * MiB, 6 * MiB);
  under_max(64 * MiB, 40 * MiB);
  /* physical limit: leave about L bytes free, then fill the pool with 1 MiB blocks */
  static const uint64_t left[] = {100 * MiB, 40 * MiB, 20 * MiB, 6 * MiB};
  for (size_t i = 0; i < sizeof left / sizeof *left; i++) {
    size_t fr, tot;
    CHECK(cudaMemGetInfo(&fr, &tot));
    void *hog = NULL;
    uint64_t take = fr - left[i];
    while (cudaMalloc(&hog, take) != cudaSuccess) { cudaGetLastError(); take -= 2 * MiB; }
    CHECK(cudaMemGetInfo(&fr, &tot));
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t a, n = 0, r = 0;
    while (!try_palloc(p, 1 * MiB, s, &a)) { n++; r = reserved(p); }
    uint64_t big_ok = 0;
    printf("FINDING limit physical: %.1f MiB free before the pool: %llu x 1 MiB placed, reserved %.1f MiB\n", mib(fr),
           (unsigned long long)n, mib(r));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemPoolDestroy(p));
    p = new_pool(0, UINT64_MAX);
    for (uint64_t bs = 64 * MiB; bs >= 1 * MiB; bs /= 2) if (!try_palloc(p, bs, s, &a)) { big_ok = bs; break; }
    printf("FINDING limit physical: %.1f MiB free: the largest power-of-two block one new pool gives is %.1f MiB (reserved %.1f)\n",
           mib(fr), mib(big_ok), mib(reserved(p)));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemPoolDestroy(p));
    CHECK(cudaFree(hog));
  }
  return 0;
}
