/* async_grow.cu - how a cudaMemPool grows: reserved after the first block of each size in
 * a fresh pool, whether a second block shares the first one's chunk, how many small blocks
 * one chunk takes, whether blocks are packed contiguously across chunk boundaries, and
 * where a small block goes after a large one. Prints FINDING lines. */
#include "probe.h"

static const uint64_t sizes[] = {1, 512, 4096, 1 * MiB, 2 * MiB - 1, 2 * MiB, 2 * MiB + 1, 4 * MiB, 8 * MiB,
                                 16 * MiB, 20 * MiB, 31 * MiB, 32 * MiB, 32 * MiB + 1, 33 * MiB, 34 * MiB,
                                 48 * MiB, 63 * MiB, 64 * MiB + 1, 100 * MiB, 200 * MiB, 256 * MiB + 1,
                                 1000 * MiB, 1024 * MiB + 1, 4096 * MiB + 1};

int main(void) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  /* 1. one block, then a second of the same size, in a fresh pool */
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t a = palloc(p, sizes[i], s);
    uint64_t r1 = reserved(p), u1 = used(p);
    uint64_t b = palloc(p, sizes[i], s);
    uint64_t r2 = reserved(p), u2 = used(p);
    printf("FINDING grow_first size=%llu reserved1=%llu (%.3f MiB) used1=%llu reserved2=%llu (%.3f MiB) used2=%llu b-a=%lld a%%2MiB=%llu a%%32MiB=%llu\n",
           (unsigned long long)sizes[i], (unsigned long long)r1, mib(r1), (unsigned long long)u1,
           (unsigned long long)r2, mib(r2), (unsigned long long)u2, (long long)(b - a),
           (unsigned long long)(a % (2 * MiB)), (unsigned long long)(a % (32 * MiB)));
    pfree(a, s); pfree(b, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* 2. a run of same-size blocks: where reserved steps and where addresses jump */
  static const uint64_t run[] = {256, 100000, 1 * MiB, 3 * MiB, 6 * MiB, 12 * MiB, 20 * MiB, 40 * MiB, 100 * MiB};
  for (size_t i = 0; i < sizeof run / sizeof *run; i++) {
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t prev = 0, prev_r = 0, first = 0;
    int n = run[i] >= 20 * MiB ? 12 : (int)(200 * MiB / run[i] + 2);
    if (n > 3000) n = 3000;
    uint64_t *blk = (uint64_t *)calloc((size_t)n, sizeof *blk);
    for (int k = 0; k < n; k++) {
      uint64_t a = palloc(p, run[i], s), r = reserved(p);
      blk[k] = a;
      if (!k) first = a;
      if (k == 0 || r != prev_r || a != prev + run[i])
        printf("FINDING grow_run size=%llu k=%d addr-first=%lld delta=%lld reserved=%.3f MiB used=%llu\n",
               (unsigned long long)run[i], k, (long long)(a - first), k ? (long long)(a - prev) : 0LL, mib(r),
               (unsigned long long)used(p));
      prev = a; prev_r = r;
    }
    for (int k = 0; k < n; k++) pfree(blk[k], s);
    free(blk);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* 3. a large block, then small ones: into the large block's chunk tail or a new chunk? */
  static const uint64_t big[] = {33 * MiB, 50 * MiB, 100 * MiB, 250 * MiB};
  for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t a = palloc(p, big[i], s);
    uint64_t r1 = reserved(p);
    uint64_t b = palloc(p, 1 * MiB, s);
    uint64_t r2 = reserved(p);
    uint64_t c = palloc(p, 8 * MiB, s);
    uint64_t r3 = reserved(p);
    printf("FINDING grow_big_then_small big=%.0f MiB reserved=%.3f MiB; +1MiB at big%+lld reserved=%.3f; +8MiB at big%+lld reserved=%.3f\n",
           mib(big[i]), mib(r1), (long long)(b - a), mib(r2), (long long)(c - a), mib(r3));
    pfree(a, s); pfree(b, s); pfree(c, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* 4. the default pool behaves the same? (first block sizes) */
  cudaMemPool_t dp;
  CHECK(cudaDeviceGetDefaultMemPool(&dp, 0));
  uint64_t thr = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(dp, cudaMemPoolAttrReleaseThreshold, &thr));
  uint64_t r0 = reserved(dp);
  uint64_t a = palloc(dp, 1 * MiB, s);
  uint64_t b = palloc(dp, 40 * MiB, s);
  printf("FINDING grow_default_pool before=%.3f after 1MiB+40MiB reserved=%.3f MiB (b-a=%lld)\n", mib(r0), mib(reserved(dp)), (long long)(b - a));
  pfree(a, s); pfree(b, s);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemPoolTrimTo(dp, 0));
  return 0;
}
