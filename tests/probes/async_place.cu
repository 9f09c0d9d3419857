/* async_place.cu - where a cudaMemPool puts a block: rounding of small sizes, the order
 * of successive blocks, which free range a request takes (first fit by address, best fit,
 * or the untouched tail), which end of a range it splits from, whether adjacent frees
 * coalesce, and whether a pre-grown range is one piece. All frees are synchronized before
 * the next request, so only the placement rule is seen. Prints FINDING lines. */
#include "probe.h"

static cudaStream_t s;

static cudaMemPool_t grown_pool(uint64_t bytes) {
  cudaMemPool_t p = new_pool(0, UINT64_MAX);
  uint64_t a = palloc(p, bytes, s);
  pfree(a, s);
  CHECK(cudaStreamSynchronize(s));
  printf("FINDING place_pregrown %.0f MiB block at %#llx, reserved=%.3f MiB\n", mib(bytes), (unsigned long long)a, mib(reserved(p)));
  return p;
}

#define REL(x) ((long long)((x) - base) / (long long)MiB)

int main(void) {
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  /* 1. rounding: the distance between two consecutive small blocks */
  static const uint64_t small[] = {1, 100, 256, 257, 511, 512, 513, 1000, 1024, 4097, 65537, 1 * MiB + 1};
  for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t a = palloc(p, small[i], s), b = palloc(p, small[i], s), c = palloc(p, small[i], s);
    printf("FINDING place_round size=%llu b-a=%lld c-b=%lld used=%llu\n", (unsigned long long)small[i], (long long)(b - a),
           (long long)(c - b), (unsigned long long)used(p));
    pfree(a, s); pfree(b, s); pfree(c, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* 2. holes in one pre-grown range: [a 4][g 1][c 8][g 1][e 4][g 1][tail...] */
  {
    cudaMemPool_t p = grown_pool(256 * MiB);
    uint64_t a = palloc(p, 4 * MiB, s), g1 = palloc(p, 1 * MiB, s), c = palloc(p, 8 * MiB, s), g2 = palloc(p, 1 * MiB, s);
    uint64_t e = palloc(p, 4 * MiB, s), g3 = palloc(p, 1 * MiB, s);
    uint64_t base = a < e ? a : e;
    printf("FINDING place_order a=%lld g1=%lld c=%lld g2=%lld e=%lld g3=%lld (MiB from the lowest; ascending = upward)\n",
           REL(a), REL(g1), REL(c), REL(g2), REL(e), REL(g3));
    pfree(c, s); pfree(e, s);
    CHECK(cudaStreamSynchronize(s));
    uint64_t x = palloc(p, 3 * MiB, s);
    printf("FINDING place_fit 3MiB with free c(8MiB at %lld) e(4MiB at %lld) and the tail: took %lld (%s)\n", REL(c), REL(e), REL(x),
           x == c ? "c: first fit by address, low end" : x == c + 5 * MiB ? "c: high end" : x == e ? "e: best fit, low end" : x == e + MiB ? "e: best fit, high end" : "elsewhere (tail?)");
    uint64_t y = palloc(p, 4 * MiB, s);
    printf("FINDING place_fit then 4MiB: took %lld\n", REL(y));
    uint64_t z = palloc(p, 5 * MiB, s);
    printf("FINDING place_fit then 5MiB: took %lld\n", REL(z));
    pfree(x, s); pfree(y, s); pfree(z, s);
    pfree(a, s); pfree(g1, s);
    CHECK(cudaStreamSynchronize(s));
    /* a(4) g1(1) c(8) now adjacent free: does 13 MiB fit there (coalesced)? */
    uint64_t w = palloc(p, 13 * MiB, s);
    printf("FINDING place_coalesce 13MiB after freeing adjacent a(4)+g1(1)+c(8) at %lld: took %lld (%s)\n", REL(a), REL(w),
           w == a ? "coalesced" : "not there");
    pfree(w, s); pfree(g2, s); pfree(g3, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* 3. best fit vs first fit with the hole sizes reversed: small hole low, large hole high */
  {
    cudaMemPool_t p = grown_pool(256 * MiB);
    uint64_t a = palloc(p, 2 * MiB, s), g1 = palloc(p, 1 * MiB, s), c = palloc(p, 16 * MiB, s), g2 = palloc(p, 1 * MiB, s);
    uint64_t e = palloc(p, 6 * MiB, s), g3 = palloc(p, 1 * MiB, s);
    uint64_t base = a < e ? a : e;
    pfree(a, s); pfree(c, s); pfree(e, s);
    CHECK(cudaStreamSynchronize(s));
    uint64_t x = palloc(p, 5 * MiB, s);
    printf("FINDING place_fit2 5MiB with free a(2 at %lld) c(16 at %lld) e(6 at %lld), tail beyond: took %lld (%s)\n", REL(a), REL(c), REL(e), REL(x),
           x == c ? "c: first fit" : x == e ? "e: best fit" : "elsewhere");
    uint64_t y = palloc(p, 1 * MiB, s);
    printf("FINDING place_fit2 then 1MiB: took %lld (%s)\n", REL(y), y == a ? "a: first/best fit" : "elsewhere");
    pfree(x, s); pfree(y, s); pfree(g1, s); pfree(g2, s); pfree(g3, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* 4. two chunks grown separately, a hole in each: which one serves? */
  {
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t a1 = palloc(p, 30 * MiB, s), a2 = palloc(p, 1 * MiB, s);   /* chunk 1 nearly full */
    uint64_t b1 = palloc(p, 30 * MiB, s), b2 = palloc(p, 1 * MiB, s);   /* chunk 2 */
    uint64_t base = a1 < b1 ? a1 : b1;
    printf("FINDING place_chunks a1=%lld a2=%lld b1=%lld b2=%lld reserved=%.3f MiB\n", REL(a1), REL(a2), REL(b1), REL(b2), mib(reserved(p)));
    pfree(b1, s);
    CHECK(cudaStreamSynchronize(s));
    pfree(a1, s);
    CHECK(cudaStreamSynchronize(s));
    uint64_t x = palloc(p, 10 * MiB, s);
    printf("FINDING place_chunks 10MiB with a1 (freed last) and b1 (freed first) free: took %lld (%s)\n", REL(x),
           x == a1 ? "a1: lower address / most recent" : x == b1 ? "b1" : "elsewhere");
    pfree(x, s); pfree(a2, s); pfree(b2, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  /* 5. same stream, no sync, no work: is a freed block taken again at once? */
  {
    cudaMemPool_t p = new_pool(0, UINT64_MAX);
    uint64_t a = palloc(p, 4 * MiB, s);
    pfree(a, s);
    uint64_t b = palloc(p, 4 * MiB, s);
    printf("FINDING place_same_stream_nowork free then alloc 4MiB: %s (reserved=%.3f)\n", a == b ? "same address" : "new address", mib(reserved(p)));
    pfree(b, s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(p));
  }
  return 0;
}
