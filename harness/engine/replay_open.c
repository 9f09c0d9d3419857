/* replay_open.c - what one row replays, opened (see replay_open.h), the peak requested of
 * a workload alone (for --cap-x), and what a row will be named (replay_identity). */
#include "replay_open.h"
#include <stdio.h>
#include <string.h>
#include "inputs.h"
#include "livemap.h"
#include "lookup.h"

static const char *basename_of(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* "gpt_train.pickle.gz" -> "gpt_train.pickle": the format stays visible, so a snapshot,
 * its RMM log and a generator of the same name are three different workloads */
void replay_trace_label(const char *path, char *out, size_t len) {
  snprintf(out, len, "%s", basename_of(path));
  size_t n = strlen(out);
  if (n > 3 && !strcmp(out + n - 3, ".gz")) out[n - 3] = 0;
}

void replay_workload_label(const struct run_spec *s, char *out, size_t len) {
  if (!s->trace) {
    snprintf(out, len, "%s", s->workload ? s->workload : "");
    return;
  }
  replay_trace_label(s->trace, out, len);
  size_t n = strlen(out);
  if (s->trace_device > 0 && n < len) snprintf(out + n, len - n, "@%d", s->trace_device);
}

void replay_unknown_workload(const char *name, char *err) {
  struct lookup l;
  lookup_begin(&l, err, FB_ERRLEN, "workload", name);
  for (int i = 0; workload_table[i]; i++)
    if (!workload_table[i]->is_trace) lookup_known(&l, workload_table[i]->name);
}

void replay_unknown_allocator(const char *name, int with_recorded, char *err) {
  struct lookup l;
  lookup_begin(&l, err, FB_ERRLEN, "allocator", name);
  for (int i = 0; allocator_table[i]; i++) lookup_known(&l, allocator_table[i]->name);
  if (with_recorded) lookup_known(&l, "recorded");
}

/* Open the workload of a spec: a generator by name, or a trace by content. */
int replay_open_workload(const struct run_spec *s, struct workload *w, uint64_t percent_base, char *err) {
  struct workload_ctx ctx = {.rank = s->rank, .world = s->world ? s->world : 1, .seed = s->seed,
                             .path = s->trace, .trace_device = s->trace_device};
  const struct workload_ops *ops;
  if (s->trace) {
    /* already in memory (advise), or held for this command (inputs.h): no reading */
    ctx.events = s->events ? s->events : inputs_get(s->trace, s->trace_device);
    ops = ctx.events ? &trace_mem_workload : trace_detect(s->trace, err);
    if (!ops) return -1;
    if (workload_open(w, ops, NULL, &ctx, percent_base, err)) return -1;
    snprintf(w->spec, sizeof w->spec, "%s", s->trace);
    return 0;
  }
  char name[64];
  struct params tmp;
  if (params_parse_spec(s->workload, name, sizeof name, &tmp, err)) return -1;
  ops = workload_find(name);
  if (!ops) {
    replay_unknown_workload(name, err);
    return -1;
  }
  return workload_open(w, ops, s->workload, &ctx, percent_base, err);
}

int workload_peak_requested(const struct run_spec *s, uint64_t *peak, char *err) {
  struct workload w;
  *peak = 0;
  if (replay_open_workload(s, &w, SIM_TOTAL_DEFAULT, err)) return -1;
  struct livemap live;
  if (livemap_init(&live, 1024)) { workload_close(&w); snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  uint64_t cur = 0;
  struct event ev;
  int rc;
  while ((rc = workload_next(&w, &ev, err)) == 1) {
    if (ev.op == OP_ALLOC && ev.size && ev.size < HUGE_REQUEST && !livemap_get(&live, ev.id)) {
      struct live_entry *e = livemap_put(&live, ev.id);
      if (!e) { rc = -1; snprintf(err, FB_ERRLEN, "out of host memory"); break; }
      e->requested = ev.size;
      cur += ev.size;
      if (cur > *peak) *peak = cur;
    } else if (ev.op == OP_FREE) {
      struct live_entry *e = livemap_get(&live, ev.id);
      if (e) { cur -= e->requested; livemap_del(&live, e); }
    }
  }
  livemap_free(&live);
  workload_close(&w);
  return rc < 0 ? -1 : 0;
}

const struct allocator_ops *replay_open_row(const struct run_spec *s, struct workload *w, struct params *ap,
                                            uint64_t percent_base, char *err) {
  if (replay_open_workload(s, w, percent_base, err)) return NULL;
  struct workload_info info;
  memset(&info, 0, sizeof info);
  if (w->ops->info) w->ops->info(w->st, &info);
  int adopted = 0;
  const struct allocator_ops *ops = replay_resolve_allocator(s, &info, ap, percent_base, &adopted, err);
  if (!ops) workload_close(w);
  return ops;
}

int replay_identity(const struct run_spec *s, struct run_result *r, char *err) {
  struct workload w;
  struct params ap;
  const struct allocator_ops *ops = replay_open_row(s, &w, &ap, SIM_TOTAL_DEFAULT, err);
  if (!ops) return -1;
  workload_close(&w);
  replay_workload_label(s, r->workload, sizeof r->workload);
  snprintf(r->allocator, sizeof r->allocator, "%s", ops->name);
  params_format(&ap, r->params, sizeof r->params);
  replay_note_blindness(ops, &ap, r);
  return 0;
}

void replay_note_blindness(const struct allocator_ops *ops, const struct params *ap, struct run_result *r) {
  r->cap_blind = ops->cap_blind && ops->cap_blind(ap);
  r->blind_unreached = r->cap_blind || (ops->flags & ALLOC_CAP_READ_IN_USE) != 0;
}

/* Resolve "recorded", parse the allocator's params, adopt the trace's settings. */
const struct allocator_ops *replay_resolve_allocator(const struct run_spec *s, const struct workload_info *info,
                                                     struct params *p, uint64_t percent_base, int *adopted_keys, char *err) {
  char name[64];
  if (params_parse_spec(s->allocator, name, sizeof name, p, err)) return NULL;
  int recorded = !strcmp(name, "recorded");
  if (recorded) {
    if (!info->recorded_allocator[0]) {
      snprintf(err, FB_ERRLEN, "--allocator recorded needs a PyTorch snapshot that says which allocator it used");
      return NULL;
    }
    snprintf(name, sizeof name, "%s", info->recorded_allocator);
  }
  const struct allocator_ops *ops = allocator_find(name);
  if (!ops) {
    replay_unknown_allocator(name, 1, err);
    return NULL;
  }
  p->percent_base = percent_base;
  /* `recorded` runs with the snapshot's allocator_settings, unless the command line says
   * otherwise; `caching` and `expandable` named explicitly get PyTorch's defaults */
  *adopted_keys = 0;
  if (recorded && info->allocator_settings[0] && (!strcmp(name, "caching") || !strcmp(name, "expandable"))) {
    struct params adopted;
    char dummy[8];
    char text[600];
    snprintf(text, sizeof text, "x:%s", info->allocator_settings);
    if (!params_parse_spec(text, dummy, sizeof dummy, &adopted, err))
      for (int i = 0; i < adopted.n; i++)
        if (!params_has(p, adopted.key[i])) { params_set(p, adopted.key[i], adopted.val[i]); (*adopted_keys)++; }
  }
  if (params_check(p, ops->params, ops->name, err)) return NULL;
  return ops;
}

