/* async_recycle.cu - does a keep-all cudaMemPool (release threshold UINT64_MAX, PyTorch's
 * setting) reuse the physical memory of wholly free 32 MiB chunks when a request has to go
 * past the top of its range? (the sim model's `recycle` hypothesis: reserved would be the
 * peak of chunks holding blocks, not of chunks ever reached). Also whether a request the
 * size of a freed hole takes it (exact fit) where the class-rounded rule would skip it, at
 * 1 GiB and 4000 MiB (activation-checkpointing jobs repeat such blocks), and whether a
 * record_stream-style free (on a side stream made to wait on the creation stream) is
 * reused by the creation stream at once. Prints FINDING lines. */
#include "probe.h"

static cudaStream_t s, side;

/* A (64 MiB) B (1 MiB) | free A, sync | C (96 MiB) cannot fit the hole: grows at the top */
static void recycle_case(uint64_t a_sz, uint64_t c_sz) {
  cudaMemPool_t p = new_pool(0, UINT64_MAX);
  uint64_t a = palloc(p, a_sz, s), b = palloc(p, MiB, s);
  uint64_t r0 = reserved(p);
  pfree(a, s);
  CHECK(cudaStreamSynchronize(s));
  uint64_t c = palloc(p, c_sz, s);
  CHECK(cudaStreamSynchronize(s));
  uint64_t r1 = reserved(p), hi = reserved_high(p);
  printf("FINDING recycle hole=%.0f MiB then %.0f MiB at %+lld MiB from the hole: reserved %.0f -> %.0f MiB (high %.0f);"
         " %s\n", mib(a_sz), mib(c_sz), (long long)(c - a) / (long long)MiB, mib(r0), mib(r1), mib(hi),
         r1 < r0 + c_sz ? "free chunks' memory reused (recycle)" : "grown by the new chunks (no recycle)");
  pfree(b, s); pfree(c, s);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolDestroy(p));
}

/* X (sz) Y (1 MiB) Z (sz) W (1 MiB) | free X, sync | a request of sz: the hole, or the top? */
static void exact_case(uint64_t sz) {
  cudaMemPool_t p = new_pool(0, UINT64_MAX);
  uint64_t x = palloc(p, sz, s), y = palloc(p, MiB, s), z = palloc(p, sz, s), w = palloc(p, MiB, s);
  pfree(x, s);
  CHECK(cudaStreamSynchronize(s));
  uint64_t r0 = reserved(p);
  uint64_t n = palloc(p, sz, s);
  uint64_t r1 = reserved(p);
  printf("FINDING exact_fit %.0f MiB hole: took %s; reserved %.0f -> %.0f MiB\n", mib(sz),
         n == x ? "the hole" : n > w ? "the top" : "elsewhere", mib(r0), mib(r1));
  pfree(n, s); pfree(y, s); pfree(z, s); pfree(w, s);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolDestroy(p));
}

/* PyTorch's free of a block recorded on another stream: a unifying stream waits on the
 * creation stream (and the recording one), the free is queued there */
static void unified_case(int busy) {
  cudaMemPool_t p = new_pool(0, UINT64_MAX);
  cudaStream_t u;
  CHECK(cudaStreamCreateWithFlags(&u, cudaStreamNonBlocking));
  uint64_t a = palloc(p, 8 * MiB, s);
  if (busy) spin(side, 50);
  cudaEvent_t e1, e2;
  CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
  CHECK(cudaEventRecord(e1, s)); CHECK(cudaStreamWaitEvent(u, e1, 0));
  CHECK(cudaEventRecord(e2, side)); CHECK(cudaStreamWaitEvent(u, e2, 0));
  pfree(a, u);
  uint64_t same = palloc(p, 8 * MiB, s);     /* creation stream, no sync */
  printf("FINDING unified_free side stream %s: creation stream's next 8 MiB %s\n", busy ? "busy" : "idle",
         same == a ? "REUSED" : "not reused");
  pfree(same, s);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaStreamDestroy(u));
  CHECK(cudaMemPoolDestroy(p));
}

int main(void) {
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  recycle_case(64 * MiB, 96 * MiB);
  recycle_case(1024 * MiB, 1536 * MiB);
  recycle_case(4000 * MiB, 6000 * MiB);
  exact_case(13 * MiB);
  exact_case(1000 * MiB);
  exact_case(4000 * MiB);
  unified_case(0);
  unified_case(1);
  return 0;
}
