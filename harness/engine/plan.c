/* plan.c - the rows of a run built once, their caps resolved in one place, run by one
 * loop; see plan.h. */
#include "plan.h"
#include "plan_ahead.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "inputs.h"
#include "row_pool.h"
#include "model_bound.h"
#include "replay_open.h"
#include "uncapped_rows.h"

int plan_check_selection(const struct plan_opts *o, char *err) {
  char name[64], e[FB_ERRLEN];
  struct params p;
  for (int i = 0; i < o->nworkloads; i++) {
    if (params_parse_spec(o->workloads[i], name, sizeof name, &p, e)) { snprintf(err, FB_ERRLEN, "--workload %.400s", e); return 2; }
    const struct workload_ops *w = workload_find(name);
    if (!w) { replay_unknown_workload(name, err); return 2; }
    p.percent_base = SIM_TOTAL_DEFAULT;
    if (params_check(&p, w->params, w->name, err)) return 2;
  }
  for (int i = 0; i < o->nallocators; i++) {
    if (params_parse_spec(o->allocators[i], name, sizeof name, &p, e)) { snprintf(err, FB_ERRLEN, "--allocator %.400s", e); return 2; }
    if (!strcmp(name, "recorded")) continue;   /* resolved per trace */
    const struct allocator_ops *a = allocator_find(name);
    if (!a) { replay_unknown_allocator(name, 1, err); return 2; }
    p.percent_base = SIM_TOTAL_DEFAULT;
    if (params_check(&p, a->params, a->name, err)) return 2;
  }
  return 0;
}

int plan_sources(const struct plan_opts *o, struct plan_source *out, int max, int *n, char *err) {
  *n = 0;
  if (plan_check_selection(o, err)) return 2;
  for (int i = 0; i < o->nworkloads && *n < max; i++)
    out[(*n)++] = (struct plan_source){.workload = o->workloads[i], .trace_device = -1};
  for (int i = 0; i < o->ntraces; i++) {
    if (o->trace_device >= 0) {
      if (*n < max) out[(*n)++] = (struct plan_source){.trace = o->traces[i], .trace_device = o->trace_device};
      continue;
    }
    /* every device trace with events: ask the reader (the trace held for the command, its
     * first device trace's rows replay it) */
    struct workload_info info;
    memset(&info, 0, sizeof info);
    const struct event_buffer *held = inputs_get(o->traces[i], -1);
    if (held) info = held->info;
    else {
      const struct workload_ops *ops = trace_detect(o->traces[i], err);
      struct workload w;
      struct workload_ctx ctx = {.world = 1, .path = o->traces[i], .trace_device = -1};
      if (!ops || workload_open(&w, ops, NULL, &ctx, SIM_TOTAL_DEFAULT, err)) return 2;
      if (ops->info) ops->info(w.st, &info);
      workload_close(&w);
    }
    int any = 0;
    for (int d = 0; d < 64; d++)
      if (info.device_mask >> d & 1) {
        if (*n < max) out[(*n)++] = (struct plan_source){.trace = o->traces[i], .trace_device = any || d ? d : -1};
        any = 1;
      }
    if (!any && *n < max) out[(*n)++] = (struct plan_source){.trace = o->traces[i], .trace_device = -1};
  }
  return 0;
}

static int add_row(struct plan *p, int cap_rows, const struct plan_source *src, int g, int slot, const char *alloc,
                   const struct plan_cap *cap, const char *label) {
  if (p->n >= cap_rows) return -1;
  struct plan_row *r = &p->rows[p->n++];
  memset(r, 0, sizeof *r);
  r->group = g;
  r->slot = slot;
  r->source = g;
  r->cap = *cap;
  struct run_spec *s = &r->spec;
  *s = p->o.base;
  s->workload = src->workload;
  s->trace = src->trace;
  s->trace_device = src->trace_device;
  s->allocator = alloc;
  s->device = p->o.devices[p->o.multi ? slot : 0];
  s->rank = p->o.multi ? slot : 0;
  s->world = p->o.multi ? p->width : 1;
  s->seed = p->o.base.seed + (uint64_t)slot * 1000003u;   /* per-rank seeds */
  if (p->o.multi) s->progress = 0;
  s->cap_bytes = 0;
  s->cap_x = 0;
  s->cap_source = p->o.ncaps ? "given" : NULL;
  if (cap->kind == PLAN_CAP_INFERRED) {
    s->cap_source = p->lim.from == LIMIT_INFERRED ? "inferred" : p->lim.side_file ? "side_file" : "oom_message";
    s->cap_lo = p->lim.ci.has_oom ? p->lim.ci.lo : 0;
    s->cap_hi = p->lim.ci.has_oom ? p->lim.ci.hi : 0;
  }
  if (label) {
    const char *name = src->workload ? src->workload : src->trace;
    if (p->o.multi) snprintf(r->label, sizeof r->label, "%s@%s:%d", name, s->device.kind, s->device.index);
    else snprintf(r->label, sizeof r->label, "%s", name);
  }
  return 0;
}

int plan_build(const struct plan_opts *o, struct plan *p, char *err) {
  memset(p, 0, sizeof *p);
  p->o = *o;
  static const char *const raw[] = {"raw"};
  const char *const *allocs = o->nallocators ? o->allocators : raw;
  int nalloc = o->nallocators ? o->nallocators : 1;
  if (o->ndevices < 1 || o->ndevices > PLAN_MAX) { snprintf(err, FB_ERRLEN, "1..%d devices", PLAN_MAX); return 2; }
  p->width = o->multi ? o->ndevices : 1;
  struct plan_source *src = calloc(PLAN_MAX * 4, sizeof *src);
  if (!src) { snprintf(err, FB_ERRLEN, "out of host memory"); return 2; }
  int nsrc = 0;
  if (!o->multi) {
    if (plan_sources(o, src, PLAN_MAX * 4, &nsrc, err)) { free(src); return 2; }
  } else {
    if (plan_check_selection(o, err)) { free(src); return 2; }
    nsrc = o->nworkloads + (o->ntraces ? 1 : 0);   /* each workload on every device; the traces together */
  }
  /* the limit of rows with no cap given: the OOM message's, or one snapshot's inferred one */
  struct limit_ask ask = {.oom_message = o->ncaps ? NULL : o->oom_message, .no_infer = o->no_infer_cap || o->ncaps,
                          .trace = !o->ncaps && !o->multi && nsrc == 1 && src[0].trace ? src[0].trace : NULL,
                          .trace_device = src[0].trace_device, .trust_message = o->trust_message};
  if (limit_resolve(&ask, &p->lim, err)) { free(src); return 2; }
  struct plan_cap none = {PLAN_CAP_NONE, 0, 0}, inferred = {PLAN_CAP_INFERRED, 0, p->lim.bytes};
  const struct plan_cap *caps = o->ncaps ? o->caps : p->lim.from != LIMIT_NONE ? &inferred : &none;
  int ncap = o->ncaps ? o->ncaps : 1;
  int cap_rows = nsrc * nalloc * ncap * p->width;
  p->rows = calloc((size_t)(cap_rows ? cap_rows : 1), sizeof *p->rows);
  p->nsources = nsrc;
  p->peak = calloc((size_t)(nsrc ? nsrc : 1) * (size_t)p->width, sizeof *p->peak);
  if (!p->rows || !p->peak) { free(src); plan_release(p); snprintf(err, FB_ERRLEN, "out of host memory"); return 2; }
  const char *label = o->timeline && (nsrc > 1 || o->multi) ? "" : NULL;
  for (int g = 0; g < nsrc; g++)
    for (int a = 0; a < nalloc; a++)
      for (int c = 0; c < ncap; c++)
        for (int slot = 0; slot < p->width; slot++) {
          struct plan_source s = src[g];
          if (o->multi) {
            s = (struct plan_source){.trace_device = -1};
            if (g < o->nworkloads) s.workload = o->workloads[g];
            else if (o->ntraces > 1) s.trace = o->traces[slot % o->ntraces];
            else { s.trace = o->traces[0]; s.trace_device = slot; }
          }
          add_row(p, cap_rows, &s, g, slot, allocs[a], &caps[c], label);
        }
  p->ngroups = p->width ? p->n / p->width : 0;
  free(src);
  return 0;
}

void plan_release(struct plan *p) {
  for (int i = 0; p->rows && i < p->n; i++) { free(p->rows[i].timeline); free(p->rows[i].warn); }
  free(p->rows);
  free(p->peak);
  p->rows = NULL;
  p->peak = NULL;
  p->n = 0;
}

static pthread_mutex_t lazy_mu = PTHREAD_MUTEX_INITIALIZER;   /* the lazily computed totals and peaks: rows run on several threads */

static uint64_t slot_total(struct plan *p, const struct plan_row *row) {
  pthread_mutex_lock(&lazy_mu);
  uint64_t *t = &p->total[row->slot];
  if (!*t) *t = limit_device_total(&row->spec.device);
  uint64_t v = *t;
  pthread_mutex_unlock(&lazy_mu);
  return v;
}

static int row_error(struct run_result *r, const char *msg) {
  snprintf(r->status, sizeof r->status, "error: %.400s", msg);
  r->exit_class = 2;
  return 2;
}

int plan_row_run(struct plan *p, struct plan_row *row, struct run_result *r) {
  struct run_spec s = row->spec;
  run_result_init(r);
  char err[FB_ERRLEN];
  switch (row->cap.kind) {
  case PLAN_CAP_NONE: break;
  case PLAN_CAP_FRACTION:
    s.cap_bytes = limit_on_device(1, row->cap.value, 0, slot_total(p, row));   /* against the row's own device */
    if (!s.cap_bytes && slot_total(p, row)) {   /* a limit of nothing is no limit a device can hold: never "uncapped" */
      snprintf(err, sizeof err, "a limit of %.3g of the device's total is below one byte", row->cap.value);
      return row_error(r, err);
    }
    break;
  case PLAN_CAP_BYTES: case PLAN_CAP_INFERRED:
    s.cap_bytes = row->cap.bytes;
    if (row->cap.kind == PLAN_CAP_BYTES && slot_total(p, row) && s.cap_bytes > slot_total(p, row)) {   /* no headroom that is not there */
      char a[32], b[32];
      snprintf(err, sizeof err, "the limit %s is above the device's total %s: give one the device can hold", fmt_bytes(s.cap_bytes, a, sizeof a),
               fmt_bytes(slot_total(p, row), b, sizeof b));
      return row_error(r, err);
    }
    break;
  case PLAN_CAP_X: {
    pthread_mutex_lock(&lazy_mu);   /* once per input, whichever of its rows comes first */
    uint64_t *peak = &p->peak[row->source * p->width + row->slot];
    int bad = !*peak && workload_peak_requested(&s, peak, err);
    uint64_t pk = *peak;
    pthread_mutex_unlock(&lazy_mu);
    if (bad) return row_error(r, err);
    s.cap_x = row->cap.value;
    s.cap_bytes = (uint64_t)ceil(row->cap.value * (double)pk);
    break;
  }
  }
  if (p->o.uncapped && !p->o.multi && !p->o.timeline && !p->o.breakdown && uncapped_row_for(p->o.uncapped, &s, s.cap_bytes, r)) {
    pthread_mutex_lock(&lazy_mu);
    p->nby_uncapped++;
    pthread_mutex_unlock(&lazy_mu);
    model_bound_row(&s, r);   /* its other bound at the cap, as after a replay */
    return 0;
  }
  FILE *tl = NULL;
  if (p->o.timeline) {
    free(row->timeline);
    row->timeline = NULL;
    tl = open_memstream(&row->timeline, &row->timeline_len);
    if (!tl) return row_error(r, "out of host memory (timeline)");
    s.timeline = tl;
    s.timeline_label = row->label[0] ? row->label : NULL;
  }
  if (p->o.breakdown) { stream_acct_init(&row->acct); s.breakdown = &row->acct; }
  FILE *warn = NULL;
  if (p->pooled) {   /* rows side by side: this row's warnings kept, written in row order */
    free(row->warn);
    row->warn = NULL;
    warn = open_memstream(&row->warn, &row->warn_len);
    s.warn = warn;
  }
  int cls = replay_run(&s, r);
  if (!cls) model_bound_row(&s, r);   /* async's second bound: after the row's own time */
  if (warn) fclose(warn);
  if (tl && fclose(tl)) return row_error(r, "out of host memory (timeline)");
  return cls;
}

void plan_exec_here(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx) {
  (void)ctx;
  for (int i = 0; i < n; i++) plan_row_run(p, &rows[i], &res[i]);
}

/* after group g: the traces no later row replays are no longer held (inputs.h) */
static void forget_done(struct plan *p, int g) {
  for (int i = g * p->width; i < (g + 1) * p->width; i++) {
    const char *t = p->rows[i].spec.trace;
    int later = 0;
    for (int j = (g + 1) * p->width; t && !later && j < p->n; j++) later = p->rows[j].spec.trace && !strcmp(p->rows[j].spec.trace, t);
    if (t && !later) inputs_forget(t);
  }
}

/* group g's results emitted, its rows' timelines and accounts freed, and the traces no
 * later row replays released: emit's class */
static int emit_group(struct plan *p, int g, struct run_result *res, plan_emit_fn emit, void *emit_ctx) {
  struct plan_row *rows = &p->rows[g * p->width];
  int w = emit(p, rows, p->width, res, emit_ctx);
  for (int i = 0; i < p->width; i++) {
    free(rows[i].timeline);
    rows[i].timeline = NULL;
    if (p->o.breakdown) stream_acct_free(&rows[i].acct);
  }
  forget_done(p, g);
  return w;
}

/* one device of the simulated kind, one row a group: the rows on the engine's pool, one
 * worker per core, emitted in order (row_pool.h) */
struct pooled {
  struct plan *p;
  struct run_result *res;
  plan_emit_fn emit;
  void *emit_ctx;
  int worst;
  struct row_pool_line line;  /* one progress line for the rows */
  char *said_once;            /* the "not modelled" lines written so far, each once ("\n"-joined) */
  size_t said_len;
};

/* a row's warnings to stderr, a "not modelled" line only the first time (as one row after
 * another says it: unmodelled.c) */
static void write_warnings(struct pooled *q, const char *text, size_t len) {
  for (const char *l = text, *end = text + len; l < end;) {
    const char *nl = memchr(l, '\n', (size_t)(end - l));
    size_t n = nl ? (size_t)(nl - l) + 1 : (size_t)(end - l);
    int once = memmem(l, n, ": not modelled: ", 16) != NULL, seen = 0;
    if (once && q->said_once) seen = memmem(q->said_once, q->said_len, l, n) != NULL;
    if (!seen) fwrite(l, 1, n, stderr);
    if (once && !seen) {
      char *more = realloc(q->said_once, q->said_len + n);
      if (more) { memcpy(more + q->said_len, l, n); q->said_once = more; q->said_len += n; }
    }
    l += n;
  }
}

static void pooled_row(int i, void *ctx) {
  struct pooled *q = ctx;
  plan_row_run(q->p, &q->p->rows[i], &q->res[i]);
}

static int pooled_done(int i, void *ctx) {
  struct pooled *q = ctx;
  struct plan_row *row = &q->p->rows[i];
  row_pool_line_clear(&q->line);   /* the progress line gives way to what emit says */
  if (row->warn) write_warnings(q, row->warn, row->warn_len);
  free(row->warn);
  row->warn = NULL;
  int w = emit_group(q->p, i, &q->res[i], q->emit, q->emit_ctx);   /* one row a group */
  if (w > q->worst) q->worst = w;
  return q->worst >= 2;
}

static void pooled_wait(int k, int n, int running, void *ctx) { row_pool_line_wait(&((struct pooled *)ctx)->line, k, n, running); }

static int pooled_ok(const struct plan *p, plan_exec_fn exec) {
  if (exec != plan_exec_here || p->width != 1 || p->n < 2) return 0;
  for (int i = 0; i < p->n; i++)
    if (!p->rows[i].spec.device.kind || strcmp(p->rows[i].spec.device.kind, "sim")) return 0;   /* a GPU's rows: one at a time on it */
  return 1;
}

/* rows on one GPU run one after another here: what their strategies make from the workload
 * alone is made ahead on a helper thread (plan_ahead.h), where a second thread may run
 * (FB_THREADS, --threads: not 1), each row's device total asked here first */
static void start_ahead(struct plan *p, plan_exec_fn exec, struct plan_ahead *a) {
  memset(a, 0, sizeof *a);
  if (exec != plan_exec_here || row_pool_threads(p->o.threads) < 2) return;   /* a thread more than the rows' own */
  int gpu = 0;
  for (int i = 0; i < p->n && !gpu; i++) gpu = p->rows[i].spec.device.kind && strcmp(p->rows[i].spec.device.kind, "sim");
  if (!gpu || p->n < 2) return;
  struct run_spec *specs = malloc((size_t)p->n * sizeof *specs);
  uint64_t *base = malloc((size_t)p->n * sizeof *base);
  if (specs && base) {
    for (int i = 0; i < p->n; i++) {
      specs[i] = p->rows[i].spec;
      base[i] = slot_total(p, &p->rows[i]);
    }
    plan_ahead_start(a, specs, base, p->n);
  }
  free(specs);
  free(base);
}

int plan_run(struct plan *p, plan_exec_fn exec, void *exec_ctx, plan_emit_fn emit, void *emit_ctx) {
  if (pooled_ok(p, exec) && row_pool_threads(p->o.threads) > 1) {
    struct pooled q = {.p = p, .emit = emit, .emit_ctx = emit_ctx};
    row_pool_line_start(&q.line, "fragbench", "rows", p->o.base.progress);
    q.res = calloc((size_t)p->n, sizeof *q.res);
    if (q.res) {
      for (int i = 0; i < p->n; i++) p->rows[i].spec.progress = 0;   /* one line for all rows instead (pooled_wait) */
      p->pooled = 1;
      int handed = row_pool_run(p->n, p->o.threads, pooled_row, pooled_done, pooled_wait, &q);
      p->pooled = 0;
      row_pool_line_end(&q.line);
      free(q.res);
      free(q.said_once);
      if (handed >= 0) return q.worst;
    }
  }
  int worst = 0;
  struct run_result *res = calloc((size_t)p->width, sizeof *res);
  if (!res) return 1;
  struct plan_ahead ahead;
  start_ahead(p, exec, &ahead);
  for (int g = 0; g < p->ngroups && worst < 2; g++) {
    struct plan_row *rows = &p->rows[g * p->width];
    exec(p, rows, p->width, res, exec_ctx);
    int w = emit_group(p, g, res, emit, emit_ctx);
    if (w > worst) worst = w;
  }
  plan_ahead_stop(&ahead);
  free(res);
  return worst;
}
