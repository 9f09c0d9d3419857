/* async_release.cu - when a cudaMemPool's reserved shrinks: with release threshold 0 (a new
 * pool's default), a middle value and UINT64_MAX (PyTorch's setting), right after a free,
 * after stream/event/device synchronizes and at the next allocation; what cudaMemPoolTrimTo
 * keeps (whole free chunks only?), and what cudaMemPoolAttrReservedMemHigh reports and how
 * it resets. Prints FINDING lines. */
#include "probe.h"

static cudaStream_t s;

static void threshold_case(uint64_t thr, const char *name) {
  cudaMemPool_t p = new_pool(0, thr);
  uint64_t keep = palloc(p, 1 * MiB, s);
  uint64_t big = palloc(p, 100 * MiB, s);
  uint64_t mid = palloc(p, 40 * MiB, s);
  touch1(big, s);
  CHECK(cudaStreamSynchronize(s));
  uint64_t r0 = reserved(p);
  pfree(big, s);
  uint64_t r1 = reserved(p);
  cudaEvent_t ev;
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CHECK(cudaEventRecord(ev, s));
  CHECK(cudaEventSynchronize(ev));
  uint64_t r2 = reserved(p);
  CHECK(cudaStreamSynchronize(s));
  uint64_t r3 = reserved(p);
  CHECK(cudaDeviceSynchronize());
  uint64_t r4 = reserved(p);
  pfree(mid, s);
  uint64_t x = palloc(p, 2 * MiB, s);     /* does an allocation release? */
  uint64_t r5 = reserved(p);
  CHECK(cudaStreamSynchronize(s));
  uint64_t r6 = reserved(p);
  printf("FINDING release threshold=%s: live %.1f MiB; reserved %.1f -> after free %.1f, event sync %.1f, stream sync %.1f, device sync %.1f;"
         " free 40 MiB + alloc 2 MiB (no sync) %.1f, then stream sync %.1f\n",
         name, mib(used(p)), mib(r0), mib(r1), mib(r2), mib(r3), mib(r4), mib(r5), mib(r6));
  pfree(keep, s); pfree(x, s);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolDestroy(p));
}

int main(void) {
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  threshold_case(0, "0");
  threshold_case(64 * MiB, "64MiB");
  threshold_case(50 * MiB, "50MiB");
  threshold_case(UINT64_MAX, "UINT64_MAX");
  {  /* a new pool's default threshold */
    cudaMemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned; pp.location.type = cudaMemLocationTypeDevice; pp.location.id = 0;
    cudaMemPool_t p;
    CHECK(cudaMemPoolCreate(&p, &pp));
    printf("FINDING release new pool's default threshold = %llu\n", (unsigned long long)attr(p, cudaMemPoolAttrReleaseThreshold));
    CHECK(cudaMemPoolDestroy(p));
    cudaMemPool_t dp;
    CHECK(cudaDeviceGetDefaultMemPool(&dp, 0));
    printf("FINDING release default pool's threshold = %llu\n", (unsigned long long)attr(dp, cudaMemPoolAttrReleaseThreshold));
  }
  /* TrimTo: keep-all pool, many chunks, live blocks in some */
  {
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t b[16];
    for (int i = 0; i < 16; i++) b[i] = palloc(p, 20 * MiB, s);
    uint64_t r0 = reserved(p);
    for (int i = 0; i < 16; i++) if (i % 4) pfree(b[i], s);
    CHECK(cudaStreamSynchronize(s));
    uint64_t r1 = reserved(p);
    CHECK(cudaMemPoolTrimTo(p, 200 * MiB));
    uint64_t r2 = reserved(p);
    CHECK(cudaMemPoolTrimTo(p, 100 * MiB));
    uint64_t r3 = reserved(p);
    CHECK(cudaMemPoolTrimTo(p, 0));
    uint64_t r4 = reserved(p);
    printf("FINDING trim 16 x 20MiB (4 kept live, 80 MiB used): reserved %.1f; after frees+sync %.1f; TrimTo(200MiB) %.1f; TrimTo(100MiB) %.1f; TrimTo(0) %.1f\n",
           mib(r0), mib(r1), mib(r2), mib(r3), mib(r4));
    uint64_t h0 = reserved_high(p);
    uint64_t zero = 0;
    CHECK(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReservedMemHigh, &zero));
    uint64_t h1 = reserved_high(p);
    printf("FINDING high ReservedMemHigh after trims %.1f (peak kept); after setting it to 0: %.1f (reset to current %.1f)\n", mib(h0), mib(h1), mib(reserved(p)));
    /* TrimTo without synchronizing after the frees */
    for (int i = 0; i < 16; i += 4) pfree(b[i], s);
    CHECK(cudaMemPoolTrimTo(p, 0));
    uint64_t r5 = reserved(p);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolTrimTo(p, 0));
    printf("FINDING trim TrimTo(0) right after frees with no work pending: %.1f; after a sync and TrimTo(0) again: %.1f\n", mib(r5), mib(reserved(p)));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* a pool whose blocks span chunks: is a chunk released while a neighbour is live? */
  {
    cudaMemPool_t p = new_pool(0, 0);
    uint64_t a = palloc(p, 20 * MiB, s), b = palloc(p, 20 * MiB, s), c = palloc(p, 20 * MiB, s);
    uint64_t r0 = reserved(p);
    pfree(b, s);
    CHECK(cudaStreamSynchronize(s));
    printf("FINDING release threshold 0, three 20 MiB blocks (b-a=%lld, c-b=%lld), middle freed: reserved %.1f -> %.1f\n",
           (long long)(b - a), (long long)(c - b), mib(r0), mib(reserved(p)));
    pfree(a, s); pfree(c, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  return 0;
}
