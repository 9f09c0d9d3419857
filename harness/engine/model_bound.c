/* model_bound.c - the second replay of a sim row whose strategy's model has another bound
 * (allocator_ops.model_bound), and the row's model_err widened to cover it (model_bound.h):
 * a step of the caller after replay_run, never inside it. */
#include "model_bound.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "params.h"

double model_bound_err(uint64_t pt, uint64_t lo, uint64_t hi, double res) {
  if (!pt) return res;
  double p = (double)pt, below = (p - (double)lo * (1.0 - res)) / p, above = ((double)hi * (1.0 + res) - p) / p;
  return fmax(res, fmax(below, above));
}

void model_bound_widen(const struct run_spec *s, const struct allocator_ops *ops, struct run_result *r) {
  if (!ops || !ops->model_bound || r->model_err <= 0 || !r->peak_reserved) return;
  /* the row's parameters with the bound's added; none where the row names a bound key itself */
  struct params row, bound;
  char name[8], err[FB_ERRLEN], text[sizeof r->params + 2];
  snprintf(text, sizeof text, "-:%s", r->params);
  if (params_parse_spec(text, name, sizeof name, &row, err)) return;
  snprintf(text, sizeof text, "-:%s", ops->model_bound);
  if (params_parse_spec(text, name, sizeof name, &bound, err)) return;
  for (int i = 0; i < bound.n; i++)
    if (params_has(&row, bound.key[i]) || params_set(&row, bound.key[i], bound.val[i])) return;
  char spec[sizeof r->params + 160];
  snprintf(spec, sizeof spec, "%s:", ops->name);
  params_format(&row, spec + strlen(spec), sizeof spec - strlen(spec));
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

void model_bound_row(const struct run_spec *s, struct run_result *r) {
  if (r->exit_class || !strncmp(r->device, "cuda", 4)) return;
  model_bound_widen(s, allocator_find(r->allocator), r);
}
