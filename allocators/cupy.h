/* cupy.h - the pure rules of CuPy's memory pool (cupy/cuda/memory.pyx), shared by
 * allocators/cupy.c and tests/test_cupy.c: 512-byte rounding and the exact-size bins. */
#ifndef FB_CUPY_H
#define FB_CUPY_H
#include <stdint.h>

#define CUPY_UNIT 512ull    /* ALLOCATION_UNIT_SIZE: cudaMalloc aligns to at least 512 */

/* _round_size: up to a multiple of 512. */
static inline uint64_t cupy_round_size(uint64_t size) { return (size + CUPY_UNIT - 1) / CUPY_UNIT * CUPY_UNIT; }

/* _bin_index_from_size: one bin per rounded size. */
static inline uint64_t cupy_bin_index(uint64_t size) { return (size - 1) / CUPY_UNIT; }

#endif
