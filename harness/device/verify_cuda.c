/* verify_cuda.c - real work on blocks, for --touch and --verify on the CUDA backend.
 * touch: one cudaMemsetAsync of the whole block on its stream. verify: a pattern derived
 * from the block's tag and each byte's absolute address is written into a sample of the
 * block at allocation, and copied back and compared at free. The sample is the first and
 * last 256 bytes plus the 64-byte windows at every multiple of S inside the block, S the
 * power of two >= size/8: a larger block's windows are a subset of a smaller block's grid,
 * so two blocks that overlap by more than the larger one's S both sample a common window,
 * and the later write is caught when the earlier block is checked. Blocks of 1 KiB or
 * less are sampled whole. None of this time counts as driver time. */
#include "device_cuda.h"
#include <stdio.h>
#include <stdlib.h>

#define EDGE 256            /* bytes sampled at each end */
#define WINDOW 64           /* bytes per grid window */
#define WHOLE 1024          /* blocks up to this size are sampled whole */
#define MAX_PIECES 16       /* 2 edges + at most 9 grid windows (size/S <= 8) */
#define STAGE_BYTES (2 * EDGE + (MAX_PIECES - 2) * WINDOW)

struct piece { uint64_t off, len; };

static uint64_t pow2_at_least(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

/* The sampled pieces of [addr, addr+size), in address order; returns their count. */
static int sample_pieces(uint64_t addr, uint64_t size, struct piece *pc) {
  if (size <= WHOLE) { pc[0] = (struct piece){0, size}; return 1; }
  int n = 0;
  pc[n++] = (struct piece){0, EDGE};
  uint64_t stride = pow2_at_least(size / 8);
  if (stride < WINDOW) stride = WINDOW;
  uint64_t lo = addr + EDGE, hi = addr + size - EDGE;   /* windows strictly between the edges */
  for (uint64_t g = (lo + stride - 1) / stride * stride; g + WINDOW <= hi && n < MAX_PIECES - 1; g += stride)
    pc[n++] = (struct piece){g - addr, WINDOW};
  pc[n++] = (struct piece){size - EDGE, EDGE};
  return n;
}

static uint64_t mix64(uint64_t x) {   /* splitmix64 finalizer */
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27; x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* the pattern byte at absolute address x for a block tagged tag */
static unsigned char pattern_byte(uint64_t tag_key, uint64_t x) {
  return (unsigned char)(mix64((x >> 3) ^ tag_key) >> ((x & 7) * 8));
}

static void fill_pattern(unsigned char *buf, uint64_t tag, uint64_t addr, uint64_t len) {
  uint64_t key = mix64(tag + 0x9E3779B97F4A7C15ull);
  for (uint64_t i = 0; i < len; i++) buf[i] = pattern_byte(key, addr + i);
}

static int stage_ready(struct device *d) {
  struct cuda_dev *c = cuda_of(d);
  if (!c->stage && !(c->stage = malloc(STAGE_BYTES))) {
    snprintf(d->err, FB_ERRLEN, "verify: out of host memory");
    return -1;
  }
  return 0;
}

int cuda_touch(struct device *d, uint64_t addr, uint64_t size, uint64_t stream) {
  cudaStream_t s;
  if (cuda_begin(d) || cuda_stream_for(d, stream, &s)) return -1;
  if (cuda_rt_status(d, cudaMemsetAsync((void *)(uintptr_t)addr, 0, size, s), "cudaMemsetAsync",
                     "touch %#llx, %llu bytes, stream id %llu", (unsigned long long)addr,
                     (unsigned long long)size, (unsigned long long)stream))
    return -1;
  cuda_of(d)->dirty = 1;
  return 0;
}

int cuda_verify_write(struct device *d, uint64_t addr, uint64_t size, uint64_t stream, uint64_t tag) {
  struct cuda_dev *c = cuda_of(d);
  cudaStream_t s;
  if (cuda_begin(d) || stage_ready(d) || cuda_stream_for(d, stream, &s)) return -1;
  struct piece pc[MAX_PIECES];
  int n = sample_pieces(addr, size, pc);
  uint64_t at = 0;
  for (int i = 0; i < n; i++) {
    unsigned char *src = c->stage + at;
    fill_pattern(src, tag, addr + pc[i].off, pc[i].len);
    /* from pageable memory: the source is consumed before the call returns */
    if (cuda_rt_status(d, cudaMemcpyAsync((void *)(uintptr_t)(addr + pc[i].off), src, pc[i].len,
                                          cudaMemcpyHostToDevice, s),
                       "cudaMemcpyAsync", "verify pattern to %#llx, %llu bytes, stream id %llu",
                       (unsigned long long)(addr + pc[i].off), (unsigned long long)pc[i].len,
                       (unsigned long long)stream))
      return -1;
    at += pc[i].len;
  }
  c->dirty = 1;
  return 0;
}

int cuda_verify_check(struct device *d, uint64_t addr, uint64_t size, uint64_t stream, uint64_t tag) {
  struct cuda_dev *c = cuda_of(d);
  cudaStream_t s;
  if (cuda_begin(d) || stage_ready(d) || cuda_stream_for(d, stream, &s)) return -1;
  struct piece pc[MAX_PIECES];
  int n = sample_pieces(addr, size, pc);
  uint64_t at = 0;
  for (int i = 0; i < n; i++) {
    if (cuda_rt_status(d, cudaMemcpyAsync(c->stage + at, (const void *)(uintptr_t)(addr + pc[i].off), pc[i].len,
                                          cudaMemcpyDeviceToHost, s),
                       "cudaMemcpyAsync", "verify sample from %#llx, %llu bytes, stream id %llu",
                       (unsigned long long)(addr + pc[i].off), (unsigned long long)pc[i].len,
                       (unsigned long long)stream))
      return -1;
    at += pc[i].len;
  }
  if (cuda_rt_status(d, cudaStreamSynchronize(s), "cudaStreamSynchronize", "verify of %#llx, stream id %llu",
                     (unsigned long long)addr, (unsigned long long)stream))
    return -1;
  uint64_t key = mix64(tag + 0x9E3779B97F4A7C15ull);
  at = 0;
  for (int i = 0; i < n; i++) {
    for (uint64_t k = 0; k < pc[i].len; k++) {
      uint64_t x = addr + pc[i].off + k;
      unsigned char want = pattern_byte(key, x), got = c->stage[at + k];
      if (got != want) {
        snprintf(d->err, FB_ERRLEN,
                 "verify: block %#llx+%llu (tag %llu) was overwritten at %#llx (offset %llu): byte 0x%02x, expected 0x%02x"
                 " (another block overlaps it, or it was written after its free)",
                 (unsigned long long)addr, (unsigned long long)size, (unsigned long long)tag,
                 (unsigned long long)x, (unsigned long long)(x - addr), got, want);
        return -1;
      }
    }
    at += pc[i].len;
  }
  return 0;
}

int cuda_sync(struct device *d) {
  if (cuda_begin(d)) return -1;
  return cuda_sync_device(d);
}
