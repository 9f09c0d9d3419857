/* metrics.h - the memory figures of one run, computed from the events as they replay:
 * peaks of requested / allocated / reserved, internal fragmentation at the allocated
 * peak, external fragmentation when reserved peaks, and the leak slope over ITERs. */
#ifndef FB_METRICS_H
#define FB_METRICS_H
#include <stdint.h>

struct metrics {
  uint64_t live_requested, live_allocated;
  uint64_t peak_requested, peak_allocated, peak_reserved;
  uint64_t internal_at_peak;     /* allocated - requested when allocated peaked */
  double ext_frag;               /* at the reserved peak; NaN until known */
  /* leak slope: least squares of live requested at ITER k (k >= 2) */
  uint64_t iters;
  double mx, my, cxy, m2x; uint64_t sn;   /* Welford: stable for large byte counts */
};

void metrics_init(struct metrics *m);
static inline void metrics_alloc(struct metrics *m, uint64_t requested, uint64_t allocated) {
  m->live_requested += requested;
  m->live_allocated += allocated;
  if (m->live_requested > m->peak_requested) m->peak_requested = m->live_requested;
  if (m->live_allocated > m->peak_allocated) {
    m->peak_allocated = m->live_allocated;
    m->internal_at_peak = m->live_allocated - m->live_requested;
  }
}
static inline void metrics_free(struct metrics *m, uint64_t requested, uint64_t allocated) {
  m->live_requested -= requested;
  m->live_allocated -= allocated;
}
/* reserved rose to a new peak; largest_free / free_inside from the strategy's query() */
void metrics_reserved_peak(struct metrics *m, uint64_t reserved, uint64_t largest_free, uint64_t free_inside);
void metrics_iter(struct metrics *m);
double metrics_leak_slope(const struct metrics *m);   /* NaN when fewer than 2 points */

#endif
