/* timing.h - host clocks and the sampled latency histogram. The replay loop times whole
 * batches of calls with one clock read each (the mean), and one call in TIMING_SAMPLE
 * individually (the percentiles), so timing never costs more than what it times. The
 * mean is over the calls not timed on their own: a sampled call's span, its two clock
 * reads included (now_cost_ns: one read's cost, measured once), is taken out of its
 * batch's time - where the clock is a system call (some virtual machines), two reads
 * every 64 calls would otherwise add tens of ns to every call's mean. */
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

/* what one now_ns() costs on this host: the least of a few back-to-back differences,
 * measured on the first call */
uint64_t now_cost_ns(void);

struct histogram {
  uint64_t n, max;
  uint64_t bucket[HIST_BUCKETS];
};

void hist_add(struct histogram *h, uint64_t ns);
/* q in [0,1]; the bucket's upper bound (exact below 64 ns) */
uint64_t hist_quantile(const struct histogram *h, double q);

#endif
