/* metrics.c - see metrics.h. docs/csv.md defines each one. */
#include "metrics.h"
#include <math.h>
#include <string.h>

void metrics_init(struct metrics *m) {
  memset(m, 0, sizeof *m);
  m->ext_frag = NAN;
}

void metrics_reserved_peak(struct metrics *m, uint64_t reserved, uint64_t largest_free, uint64_t free_inside) {
  m->peak_reserved = reserved;
  m->ext_frag = free_inside ? 1.0 - (double)largest_free / (double)free_inside : 0.0;
}

/* ITER k (0-based) contributes (k, live requested) once k >= 2: the first two iterations
 * are warm-up and optimizer-state allocation. */
void metrics_iter(struct metrics *m) {
  uint64_t k = m->iters++;
  if (k < 2) return;
  double x = (double)k, y = (double)m->live_requested;
  m->sn++;
  double dx = x - m->mx;
  m->mx += dx / (double)m->sn;
  m->my += (y - m->my) / (double)m->sn;
  m->cxy += dx * (y - m->my);
  m->m2x += dx * (x - m->mx);
}

double metrics_leak_slope(const struct metrics *m) {
  if (m->sn < 2 || m->m2x == 0) return NAN;
  return m->cxy / m->m2x;
}
