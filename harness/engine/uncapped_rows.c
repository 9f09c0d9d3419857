/* uncapped_rows.c - an uncapped row standing for a capped run that never met its cap
 * (uncapped_rows.h). */
#include "uncapped_rows.h"
#include <stdio.h>
#include <string.h>
#include "allocator.h"
#include "replay_open.h"
#include "status.h"
#include "results_row.h"

int results_same_input(const struct results *t, int i, const char *workload, const char *allocator, const char *params,
                       uint64_t seed, const char *kind) {
  char sd[32];
  snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
  return !strcmp(results_get(t, i, "workload"), workload) && !strcmp(results_get(t, i, "allocator"), allocator) &&
         !strcmp(results_get(t, i, "params"), params) && !strcmp(results_get(t, i, "seed"), sd) &&
         !strncmp(results_get(t, i, "device"), kind, strlen(kind));
}

int uncapped_row_find(const struct results *t, const char *workload, const char *allocator, const char *params, uint64_t seed,
                      const char *kind, int completed) {
  for (int i = 0; t && i < t->nrows; i++)
    if (results_same_input(t, i, workload, allocator, params, seed, kind) && !results_u64(t, i, "cap_bytes", NULL) &&
        (!completed || (!strcmp(results_get(t, i, "status"), "ok") && results_u64(t, i, "completed", NULL) == 1)))
      return i;
  return -1;
}

void uncapped_row_read(const struct results *t, int i, struct run_result *r) {
  results_row_run(t, i, r);
  const struct allocator_ops *ops = allocator_find(r->allocator);
  r->model_err = ops && strncmp(r->device, "cuda", 4) ? ops->model_err : 0;
}

int uncapped_stands_at(const struct run_result *u, int blind, uint64_t cap) {
  return u && blind && cap && !u->cap_bytes && u->exit_class == 0 && u->completed && status_is(u->status, "ok") &&
         u->peak_reserved <= cap;
}

int uncapped_row_for(const struct results *t, const struct run_spec *s, uint64_t cap, struct run_result *out) {
  struct run_result id;
  char err[FB_ERRLEN];
  run_result_init(&id);
  if (!t || !cap || replay_identity(s, &id, err)) return 0;   /* a row that cannot be opened: its replay says why */
  int i = uncapped_row_find(t, id.workload, id.allocator, id.params, s->seed, s->device.kind ? s->device.kind : "sim", 0);
  if (i < 0) return 0;
  struct run_result u;
  uncapped_row_read(t, i, &u);
  if (!uncapped_stands_at(&u, id.blind_unreached, cap)) return 0;
  *out = u;
  out->cap_blind = id.cap_blind;
  out->blind_unreached = id.blind_unreached;
  out->cap_bytes = cap;
  out->cap_x = s->cap_x;
  snprintf(out->cap_source, sizeof out->cap_source, "%s", s->cap_source ? s->cap_source : "");
  out->cap_lo = s->cap_lo;
  out->cap_hi = s->cap_hi;
  return 1;
}
