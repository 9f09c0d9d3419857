/* bfc.h - the pure rules of TF/XLA's BFC allocator (xla/tsl/framework/bfc_allocator.cc),
 * shared by allocators/bfc.c and tests/test_bfc.c: 256-byte rounding, the 21 size bins,
 * the split rule and the next region size. */
#ifndef FB_BFC_H
#define FB_BFC_H
#include <stdint.h>

#define BFC_MIN_ALLOCATION 256ull           /* kMinAllocationSize = 1 << kMinAllocationBits */
#define BFC_NUM_BINS 21                     /* kNumBins: bin 20 holds chunks >= 256 MiB */
#define BFC_INITIAL_REGION (2ull << 20)     /* allow_growth: first region is 2 MiB */
#define BFC_MAX_INTERNAL_FRAG (128ull << 20) /* max_internal_fragmentation_bytes_ default */

/* RoundedBytes: up to a multiple of 256 (0 stays 0). */
static inline uint64_t bfc_rounded_bytes(uint64_t bytes) {
  return (bytes + BFC_MIN_ALLOCATION - 1) / BFC_MIN_ALLOCATION * BFC_MIN_ALLOCATION;
}

/* BinNumForSize: floor(log2(max(bytes, 256) / 256)), at most 20. Bin b holds chunks of
 * [256 << b, 256 << (b + 1)); the last bin is unbounded. */
static inline int bfc_bin_index(uint64_t bytes) {
  uint64_t v = (bytes < BFC_MIN_ALLOCATION ? BFC_MIN_ALLOCATION : bytes) >> 8;
  int b = 63 - __builtin_clzll(v);
  return b < BFC_NUM_BINS - 1 ? b : BFC_NUM_BINS - 1;
}

/* ShouldSplitChunk: split when the chunk is at least twice the rounded request, or when
 * keeping it whole would waste at least max_internal_fragmentation bytes. */
static inline int bfc_should_split(uint64_t chunk_size, uint64_t rounded, uint64_t max_internal_frag) {
  return chunk_size >= rounded * 2 || chunk_size - rounded >= max_internal_frag;
}

/* BackPedal step of Extend: RoundedBytes(bytes * 0.9f) computed in float as TF does,
 * forced to make progress (at least 256 bytes less). */
static inline uint64_t bfc_backpedal(uint64_t bytes) {
  uint64_t b = bfc_rounded_bytes((uint64_t)((float)bytes * 0.9f));
  if (b >= bytes) b = bytes - BFC_MIN_ALLOCATION;
  return b;
}

/* JAX's memory_limit: size_t(total_memory * memory_fraction), total_memory being the
 * device's total (cudaMemGetInfo), as CreateBFCAllocator computes it in double. */
static inline uint64_t bfc_jax_memory_limit(uint64_t total, double fraction) {
  return (uint64_t)((double)total * fraction);
}

#endif
