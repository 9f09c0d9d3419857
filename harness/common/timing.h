/* timing.h - host clocks and the sampled latency histogram. The replay loop times whole
 * batches of calls with one clock read each (the mean), and one call in TIMING_SAMPLE
 * individually (the percentiles), so timing never costs more than what it times. */
#ifndef FB_TIMING_H
#define FB_TIMING_H
#include <stdint.h>
#include <time.h>

#define TIMING_SAMPLE 64        /* one call in 64 is timed on its own */
#define HIST_SUB 16             /* sub-buckets per power of two */
#define HIST_BUCKETS (64 + 58 * HIST_SUB)

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct histogram {
  uint64_t n, max;
  uint64_t bucket[HIST_BUCKETS];
};

void hist_add(struct histogram *h, uint64_t ns);
/* q in [0,1]; the bucket's upper bound (exact below 64 ns) */
uint64_t hist_quantile(const struct histogram *h, double q);

#endif
