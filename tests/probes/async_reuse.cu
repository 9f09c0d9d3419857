/* async_reuse.cu - when freed pool memory can be taken again: on the same stream with
 * work pending, on another stream (pending, completed, after an event, after a
 * synchronize), with no GPU work at all, and with opportunistic reuse off; then a long
 * alloc/free loop on one stream replayed with no work, a 1-byte memset per block, a full
 * memset per block, and a synchronize per free, to see which regime a replay lands in.
 * Prints FINDING lines. */
#include <time.h>
#include "probe.h"

static cudaStream_t s, t;

static void host_wait_ms(double ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b); while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

/* mode: 0 pending on s, alloc on s; 1 pending, alloc on t; 2 completed (host waited), alloc
 * on t; 3 event s->t; 4 stream sync; 5 no work at all, alloc on t; 6 = 2 with opportunistic off;
 * 7 no work, alloc on s; 8 = 1 but the block was never used (work pending on s only) */
static void one(int mode, const char *what) {
  cudaMemPool_t p = new_pool(0, UINT64_MAX);
  if (mode == 6) { int off = 0; CHECK(cudaMemPoolSetAttribute(p, cudaMemPoolReuseAllowOpportunistic, &off)); }
  uint64_t a = palloc(p, 8 * MiB, s);
  if (mode != 5 && mode != 7) { if (mode != 8) touch1(a, s); spin(s, mode == 2 || mode == 6 ? 1 : 50); }
  pfree(a, s);
  cudaStream_t on = (mode == 0 || mode == 7) ? s : t;
  if (mode == 2 || mode == 6) host_wait_ms(20);
  if (mode == 3) { cudaEvent_t ev; CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)); CHECK(cudaEventRecord(ev, s)); CHECK(cudaStreamWaitEvent(t, ev, 0)); }
  if (mode == 4) CHECK(cudaStreamSynchronize(s));
  uint64_t b = palloc(p, 8 * MiB, on);
  printf("FINDING reuse %s: %s, reserved=%.3f MiB\n", what, a == b ? "REUSED" : "not reused", mib(reserved(p)));
  pfree(b, on);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolDestroy(p));
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

/* mode 0 no work, 1 one byte per block at alloc, 2 the whole block, 3 synchronize at each free,
 * 4 one byte at alloc and spin 5 us per 16 events (a busy GPU) */
static void loop(int mode, const char *what, int streams) {
  cudaMemPool_t p = new_pool(0, UINT64_MAX);
  enum { LIVE = 64, OPS = 20000 };
  uint64_t addr[LIVE] = {0}, sz[LIVE] = {0};
  int st[LIVE] = {0};
  cudaStream_t ss[2] = {s, t};
  rng = 88172645463325252ull;
  uint64_t live = 0, peak_live = 0;
  for (int i = 0; i < OPS; i++) {
    int k = (int)(next_rand() % LIVE);
    if (addr[k]) {
      if (mode == 3) CHECK(cudaStreamSynchronize(ss[st[k]]));
      pfree(addr[k], ss[st[k]]);
      live -= sz[k];
      addr[k] = 0;
    } else {
      double l = (double)(next_rand() % 1000) / 1000.0;             /* log-uniform 4 KiB .. 64 MiB */
      uint64_t size = (uint64_t)(4096.0 * __builtin_exp2(l * 14.0));
      st[k] = streams > 1 ? (int)(next_rand() % 2) : 0;
      addr[k] = palloc(p, size, ss[st[k]]);
      sz[k] = size;
      live += size;
      if (live > peak_live) peak_live = live;
      if (mode == 1 || mode == 4) touch1(addr[k], ss[st[k]]);
      if (mode == 2) CHECK(cudaMemsetAsync((void *)(uintptr_t)addr[k], 0, size, ss[st[k]]));
      if (mode == 4 && i % 16 == 0) spin(ss[st[k]], 0.005);
    }
  }
  printf("FINDING reuse_loop %s streams=%d: peak requested %.1f MiB, ReservedMemHigh %.1f MiB, UsedMemHigh %.1f MiB\n", what, streams,
         mib(peak_live), mib(reserved_high(p)), mib(attr(p, cudaMemPoolAttrUsedMemHigh)));
  for (int k = 0; k < LIVE; k++) if (addr[k]) pfree(addr[k], ss[st[k]]);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolDestroy(p));
}

int main(void) {
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  one(0, "same stream, kernel pending");
  one(1, "other stream, kernel pending");
  one(8, "other stream, kernel pending, block never used");
  one(2, "other stream, kernel completed (host waited, no sync)");
  one(6, "other stream, completed, opportunistic reuse off");
  one(3, "other stream after cudaStreamWaitEvent");
  one(4, "other stream after cudaStreamSynchronize");
  one(5, "other stream, no GPU work ever");
  one(7, "same stream, no GPU work ever");
  for (int streams = 1; streams <= 2; streams++) {
    loop(0, "no work", streams);
    loop(1, "1-byte memset per block", streams);
    loop(2, "full memset per block", streams);
    loop(3, "stream sync per free", streams);
    loop(4, "1-byte memset + spin", streams);
  }
  return 0;
}
