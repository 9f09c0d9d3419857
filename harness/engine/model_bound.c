/* model_bound.c - the second replay of a sim row whose strategy's model has another bound
 * (allocator_ops.model_bound), and the row's model_err widened to cover it (model_bound.h). */
#include "model_bound.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

double model_bound_err(uint64_t pt, uint64_t lo, uint64_t hi, double res) {
  if (!pt) return res;
  double p = (double)pt, below = (p - (double)lo * (1.0 - res)) / p, above = ((double)hi * (1.0 + res) - p) / p;
  return fmax(res, fmax(below, above));
}

/* the bound's keys ("recycle=1,x=2": recycle, x) named in the row's own parameters? */
static int names_bound(const char *params, const char *bound) {
  char key[64];
  for (const char *b = bound; *b;) {
    size_t n = strcspn(b, "=,");
    if (n >= sizeof key) return 1;
    memcpy(key, b, n);
    key[n] = 0;
    for (const char *p = params; (p = strstr(p, key)); p += n)
      if ((p == params || p[-1] == ',') && p[n] == '=') return 1;
    b += strcspn(b, ",");
    if (*b == ',') b++;
  }
  return 0;
}

void model_bound_widen(const struct run_spec *s, const struct allocator_ops *ops, struct run_result *r) {
  if (!ops || !ops->model_bound || r->model_err <= 0 || !r->peak_reserved || names_bound(r->params, ops->model_bound))
    return;
  char spec[sizeof r->params + 160];
  snprintf(spec, sizeof spec, "%s:%s%s%s", ops->name, r->params, r->params[0] ? "," : "", ops->model_bound);
  struct run_spec b = *s;
  b.allocator = spec;
  b.timeline = NULL;
  b.timeline_label = NULL;
  b.breakdown = NULL;
  b.validate = b.verify = b.strict = 0;
  b.progress = 0;
  b.quiet = 1;
  struct run_result o;
  run_result_init(&o);
  replay_run(&b, &o);
  if (!o.peak_reserved || o.completed != r->completed) return;   /* a bound that ran out where the row did not (or back): no figure to compare */
  uint64_t lo = o.peak_reserved < r->peak_reserved ? o.peak_reserved : r->peak_reserved;
  uint64_t hi = o.peak_reserved > r->peak_reserved ? o.peak_reserved : r->peak_reserved;
  r->model_err = model_bound_err(r->peak_reserved, lo, hi, r->model_err);
}
