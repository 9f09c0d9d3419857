/* timing.c - log-linear latency histogram: exact below 64 ns, then 16 sub-buckets per
 * power of two (about 6% resolution). */
#include "timing.h"

static unsigned bucket_of(uint64_t v) {
  if (v < 64) return (unsigned)v;
  unsigned msb = 63u - (unsigned)__builtin_clzll(v);       /* >= 6 */
  unsigned sub = (unsigned)(v >> (msb - 4)) & (HIST_SUB - 1);
  unsigned b = 64 + (msb - 6) * HIST_SUB + sub;
  return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

static uint64_t bucket_top(unsigned b) {
  if (b < 64) return b;
  unsigned msb = (b - 64) / HIST_SUB + 6, sub = (b - 64) % HIST_SUB;
  return ((uint64_t)(HIST_SUB + sub + 1) << (msb - 4)) - 1;
}

void hist_add(struct histogram *h, uint64_t ns) {
  h->bucket[bucket_of(ns)]++;
  h->n++;
  if (ns > h->max) h->max = ns;
}

uint64_t hist_quantile(const struct histogram *h, double q) {
  if (!h->n) return 0;
  uint64_t want = (uint64_t)(q * (double)h->n);
  if (want >= h->n) want = h->n - 1;
  uint64_t seen = 0;
  for (unsigned b = 0; b < HIST_BUCKETS; b++) {
    seen += h->bucket[b];
    if (seen > want) {
      uint64_t top = bucket_top(b);
      return top < h->max ? top : h->max;
    }
  }
  return h->max;
}

uint64_t now_cost_ns(void) {
  static uint64_t cost = UINT64_MAX;   /* the same on every thread; a race writes the same kind of figure */
  uint64_t c = __atomic_load_n(&cost, __ATOMIC_RELAXED);
  if (c != UINT64_MAX) return c;
  c = UINT64_MAX;
  for (int i = 0; i < 32; i++) {
    uint64_t a = now_ns(), b = now_ns();
    if (b - a < c) c = b - a;
  }
  __atomic_store_n(&cost, c, __ATOMIC_RELAXED);
  return c;
}
