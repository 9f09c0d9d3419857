/* advise.c - the search behind `fragbench advise` (see advise.h): one pass over the
 * trace for its request sizes and peak, the variations of the job built from it, then
 * coordinate descent over PyTorch's knobs from the defaults with expandable segments off
 * and on, every distinct setting replayed once per variation on the simulated device (a
 * cache by spec; advise_eval.c) from the traces held in memory, then every replayed
 * setting ranked and the recommendation put first (advise_rank.c). */
#include "advise.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inputs.h"
#include <unistd.h>
#include "timing.h"

#define MAX_ROUNDS_DEFAULT 6
#define DESCENT_STEP 0.001        /* the least improvement of worst-case overhead that moves the descent */

struct search {
  const struct advise_opts *o;
  struct advise_result *res;
  struct run_spec base;
  const struct variation_set *vs;
  int worst;
  char *err;
};

/* the candidate for a spec: replayed now, or found among those already replayed */
static int evaluate(struct search *s, const char *spec, const struct advise_knobs *k, enum advise_origin origin) {
  struct advise_result *res = s->res;
  for (int i = 0; i < res->n; i++) if (!strcmp(res->c[i].spec, spec)) return i;
  if (res->n == res->cap) {
    int cap = res->cap ? res->cap * 2 : 64;
    struct advise_candidate *c = realloc(res->c, (size_t)cap * sizeof *c);
    if (!c) { snprintf(s->err, FB_ERRLEN, "out of host memory"); s->worst = 1; return -1; }
    res->c = c;
    res->cap = cap;
  }
  struct advise_candidate *c = &res->c[res->n];
  memset(c, 0, sizeof *c);
  if (k) c->k = *k;
  snprintf(c->spec, sizeof c->spec, "%s", spec);
  c->origin = origin;
  int cls = advise_eval(&s->base, s->vs, res->threads, res->headroom_of, c, s->err);
  if (cls) {
    if (cls > s->worst) s->worst = cls;
    return -1;
  }
  return res->n++;
}

/* a move of the descent: ranked better, and by more than noise where both fit everywhere
 * (worst case 0.1% lower, or the same with fewer knobs): moves of 0.01% would
 * keep it going for rounds without changing the advice */
static int better_enough(const struct advise_candidate *a, const struct advise_candidate *b, uint64_t budget) {
  if (advise_compare(a, b, budget) >= 0) return 0;
  if (!a->fits || !b->fits) return 1;
  return (double)a->worst_reserved < (double)b->worst_reserved * (1 - DESCENT_STEP) ||
         advise_knobs_count(&a->k) < advise_knobs_count(&b->k);
}

/* 0 and 1 divisions both mean plain 512 B rounding: one spelling per setting, 1 inside
 * a list that rounds somewhere ("[32:8,>:1]"), all 0 when it rounds nowhere */
static void normalize_roundup(struct advise_knobs *k) {
  int any = 0;
  for (int i = 0; i < ADVISE_INTERVALS; i++) any |= k->roundup[i] > 1;
  for (int i = 0; i < ADVISE_INTERVALS; i++) if (k->roundup[i] <= 1) k->roundup[i] = any;
}

/* the candidates for n knob settings (one step of the descent), each index into idx:
 * found among those already replayed, or replayed now, all new ones as one batch of
 * settings x variations (advise_eval_many), appended in the order given. 0, or -1 */
static int evaluate_knobs(struct search *s, struct advise_knobs *ks, int nk, int *idx) {
  struct advise_result *res = s->res;
  if (res->n + nk > res->cap) {
    int cap = res->cap ? res->cap : 64;
    while (cap < res->n + nk) cap *= 2;
    struct advise_candidate *c = realloc(res->c, (size_t)cap * sizeof *c);
    if (!c) { snprintf(s->err, FB_ERRLEN, "out of host memory"); s->worst = 1; return -1; }
    res->c = c;
    res->cap = cap;
  }
  int first = res->n, nnew = 0;
  for (int j = 0; j < nk; j++) {
    normalize_roundup(&ks[j]);
    char spec[700];
    advise_knobs_spec(&ks[j], spec, sizeof spec);
    int i = 0;
    while (i < first + nnew && strcmp(res->c[i].spec, spec)) i++;
    if (i == first + nnew) {
      struct advise_candidate *c = &res->c[i];
      memset(c, 0, sizeof *c);
      c->k = ks[j];
      snprintf(c->spec, sizeof c->spec, "%s", spec);
      c->origin = ADVISE_SEARCHED;
      nnew++;
    }
    idx[j] = i;
  }
  struct advise_candidate **batch = malloc((size_t)(nnew ? nnew : 1) * sizeof *batch);
  if (!batch) { snprintf(s->err, FB_ERRLEN, "out of host memory"); s->worst = 1; return -1; }
  for (int j = 0; j < nnew; j++) batch[j] = &res->c[first + j];
  int done = 0, cls = nnew ? advise_eval_many(&s->base, s->vs, res->threads, res->headroom_of, batch, nnew, &done, s->err) : 0;
  free(batch);
  res->n = first + done;
  if (cls) {
    if (cls > s->worst) s->worst = cls;
    return -1;
  }
  return 0;
}

static int eval_knobs(struct search *s, struct advise_knobs *k) {
  normalize_roundup(k);
  char spec[700];
  advise_knobs_spec(k, spec, sizeof spec);
  return evaluate(s, spec, k, ADVISE_SEARCHED);
}

/* try every value of one knob at the current point; move to the best if strictly better.
 * Knobs: 0 max_split_size_mb, 1 max_non_split_rounding_mb, 2 roundup_power2_divisions
 * (whole lists), 3 garbage_collection_threshold, 4 + j the j-th interval's divisions. */
static int try_knob(struct search *s, struct advise_knobs *cur, int *cur_i, int knob) {
  const struct advise_space *sp = &s->res->space;
  static const uint64_t per_interval[] = {0, 2, 4, 8, 16};
  int nvals = knob == 0 ? sp->nsplit : knob == 1 ? sp->nnon : knob == 2 ? sp->nroundup : knob == 3 ? sp->ngc : 5;
  int best_i = *cur_i;
  struct advise_knobs best = *cur, ks[ADVISE_MAX_VALUES + 5];
  int idx[ADVISE_MAX_VALUES + 5];
  for (int v = 0; v < nvals; v++) {
    struct advise_knobs k = *cur;
    if (knob == 0) k.max_split_mb = sp->split_mb[v];
    else if (knob == 1) k.non_split_mb = sp->non_split_mb[v];
    else if (knob == 2) memcpy(k.roundup, sp->roundup[v], sizeof k.roundup);
    else if (knob == 3) k.gc = sp->gc[v];
    else k.roundup[sp->interval[knob - 4]] = per_interval[v];   /* knob 4 + j: the j-th interval */
    if (knob != 1 && !k.max_split_mb) k.non_split_mb = 0;   /* rounding only acts with max_split_size */
    ks[v] = k;
  }
  if (evaluate_knobs(s, ks, nvals, idx)) return -1;   /* every value of the knob at once, on every core */
  for (int v = 0; v < nvals; v++)
    if (better_enough(&s->res->c[idx[v]], &s->res->c[best_i], s->o->budget)) { best_i = idx[v]; best = ks[v]; }
  if (best_i == *cur_i) return 0;
  *cur = best;
  *cur_i = best_i;
  return 1;
}

static int descend(struct search *s, int expandable) {
  struct advise_knobs cur;
  memset(&cur, 0, sizeof cur);
  cur.expandable = expandable;
  int cur_i = eval_knobs(s, &cur);
  if (cur_i < 0) return -1;
  int max_rounds = s->o->max_rounds > 0 ? s->o->max_rounds : MAX_ROUNDS_DEFAULT;
  for (int round = 0; round < max_rounds; round++) {
    int moved = 0;
    for (int knob = 0; knob < 4 + s->res->space.ninterval; knob++) {
      if (knob == 1 && !cur.max_split_mb) continue;
      if (knob == 3 && (expandable || !s->o->budget)) continue;   /* GC frees nothing of an expandable segment */
      int rc = try_knob(s, &cur, &cur_i, knob);
      if (rc < 0) return -1;
      moved |= rc;
    }
    s->res->rounds++;
    if (s->o->progress)
      fprintf(stderr, "fragbench advise: expandable_segments:%s, round %d: %d settings replayed, best so far %s\n",
              expandable ? "True" : "False", round + 1, s->res->n, s->res->c[cur_i].spec);
    if (!moved) break;
  }
  return 0;
}

/* every request size of the trace in memory */
static uint64_t *request_sizes(const struct event_buffer *b, size_t *n) {
  uint64_t *sizes = malloc((b->n ? b->n : 1) * sizeof *sizes);
  *n = 0;
  if (!sizes) return NULL;
  for (size_t i = 0; i < b->n; i++)
    if (b->ev[i].op == OP_ALLOC) sizes[(*n)++] = b->ev[i].size;
  return sizes;
}

/* the recommendation first, the others in rank order behind it */
static void put_first(struct advise_result *res, int pick) {
  if (pick <= 0) return;
  struct advise_candidate *tmp = malloc(sizeof *tmp);
  if (!tmp) return;
  *tmp = res->c[pick];
  memmove(&res->c[1], &res->c[0], (size_t)pick * sizeof *res->c);
  res->c[0] = *tmp;
  free(tmp);
}

/* what the device lets the allocator have: headroom's measure without a budget */
static uint64_t device_usable(const struct device_config *cfg) {
  struct device d;
  char err[FB_ERRLEN];
  if (device_open(&d, cfg, err)) return cfg->sim_usable ? cfg->sim_usable : cfg->sim_total;
  uint64_t u = d.usable ? d.usable : d.total;
  device_close(&d);
  return u;
}

int advise_run(const struct advise_opts *o, struct advise_result *res, char *err) {
  memset(res, 0, sizeof *res);
  uint64_t t0 = now_ns();
  struct search s = {.o = o, .res = res, .err = err};
  s.base.trace = o->trace;
  s.base.trace_device = o->trace_device;
  s.base.world = 1;
  s.base.seed = 1;
  s.base.device = o->device;
  s.base.cap_bytes = o->budget;
  s.base.on_oom = ON_OOM_STOP;
  s.base.quiet = 1;

  /* the trace read once; every candidate replays it from memory */
  struct event_buffer own_buf;   /* read here where the command holds no copy (inputs.h) */
  const struct event_buffer *buf = inputs_get_or_load(o->trace, o->trace_device, &own_buf, err);
  if (!buf) return 2;
  s.base.events = buf;
  size_t n = 0;
  uint64_t *sizes = request_sizes(buf, &n);
  if (!sizes) { snprintf(err, FB_ERRLEN, "out of host memory"); event_buffer_free(&own_buf); return 1; }
  if (workload_peak_requested(&s.base, &res->peak_requested, err)) { free(sizes); event_buffer_free(&own_buf); return 2; }
  const struct workload_info *info = &buf->info;
  res->ends_in_oom = info->has_oom;
  snprintf(res->recorded_allocator, sizeof res->recorded_allocator, "%s", info->recorded_allocator);
  if (o->budget && o->budget < res->peak_requested) {
    char a[32], b[32];
    snprintf(err, FB_ERRLEN, "--budget %llu bytes (%s) is below the trace's peak requested %llu bytes (%s): the "
             "program itself asks for more at once, so no allocator setting can fit; give at least %llu",
             (unsigned long long)o->budget, fmt_bytes(o->budget, a, sizeof a), (unsigned long long)res->peak_requested,
             fmt_bytes(res->peak_requested, b, sizeof b), (unsigned long long)res->peak_requested);
    free(sizes);
    event_buffer_free(&own_buf);
    return 2;
  }
  advise_space_from_sizes(sizes, n, res->peak_requested, o->budget, &res->space);
  free(sizes);

  /* the reruns: variations of the job, replayed on all cores */
  struct variation_set vs;
  int nvar = o->variations > 0 ? o->variations : VARIATIONS_DEFAULT;
  if (nvar > VARIATIONS_MAX) nvar = VARIATIONS_MAX;
  if (variations_build(buf, nvar, o->seed ? o->seed : 1, &vs, err)) { event_buffer_free(&own_buf); return 1; }
  /* a variation whose own peak requested is above the limit: no setting can fit it, so
   * it is left out of every setting's count rather than vetoing them all */
  unsigned char *excluded = calloc((size_t)vs.n, 1);
  if (!excluded) { variations_free(&vs); event_buffer_free(&own_buf); snprintf(err, FB_ERRLEN, "out of host memory"); return 1; }
  for (int v = 0; o->budget && v < vs.n; v++)
    if (vs.peak[v] > o->budget) {
      excluded[v] = 1;
      res->beyond++;
      if (vs.peak[v] > res->beyond_peak) res->beyond_peak = vs.peak[v];
    }
  vs.excluded = excluded;
  s.vs = &vs;
  res->nvariations = vs.n - res->beyond;
  res->redrawn = vs.redrawn;
  res->stand_ins = vs.stand_ins;
  res->iterations = vs.iterations;
  res->head_iters = vs.head_iters;
  res->tail_iters = vs.tail_iters;
  snprintf(res->variations_how, sizeof res->variations_how, "%s", vs.how);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  res->threads = o->threads > 0 ? o->threads : cores > 0 ? (int)cores : 1;
  res->headroom_of = o->budget ? o->budget : device_usable(&o->device);
  res->limited = o->budget != 0;
  res->driver_matters_ns = vs.iterations ? ADVISE_DRIVER_MATTERS_NS * (uint64_t)vs.iterations : ADVISE_DRIVER_MATTERS_TRACE_NS;

  if (descend(&s, 0) || descend(&s, 1)) goto done;
  if (info->recorded_allocator[0] && evaluate(&s, "recorded", NULL, ADVISE_RECORDED) < 0) goto done;
  advise_rank(res);
  /* what the settings that do not fit everywhere would need (the smallest limit on the
   * variations they failed), then the recommendation first */
  struct advise_candidate **batch = malloc((size_t)(res->n ? res->n : 1) * sizeof *batch);   /* those settings, one batch */
  int nb = 0;
  if (!batch) { snprintf(err, FB_ERRLEN, "out of host memory"); s.worst = 1; goto done; }
  for (int i = 0; i < res->n; i++)
    if (!res->c[i].fits) batch[nb++] = &res->c[i];
  int cls = nb ? advise_needs_many(&s.base, &vs, res->threads, res->headroom_of, 0, batch, nb, err) : 0;
  if (cls) { if (cls > s.worst) s.worst = cls; free(batch); goto done; }
  advise_rank(res);                                 /* the needs of those that did not fit moved them */
  /* under a limit, what the leaders of the best ties and the two references need on every
   * variation: the smallest limit each completes under (mincap on sim, exact for these
   * settings). It is what they are then ranked by (advise_worst): peak reserved under a
   * limit overstates what a setting that keeps memory cached needs */
  nb = 0;   /* which they are does not depend on what their needs are: one batch */
  for (int i = 0, leaders = 0; o->budget && !o->no_needs && i < res->n; i++) {
    struct advise_candidate *c = &res->c[i];
    int ref = c->origin == ADVISE_SEARCHED && (!strcmp(c->spec, "caching") || !strcmp(c->spec, "expandable"));
    int lead = c->fits && c->origin == ADVISE_SEARCHED && (i == 0 || c->tie != res->c[i - 1].tie) && leaders < ADVISE_PICK_POOL;
    leaders += lead;
    if (c->fits && (lead || ref)) batch[nb++] = c;
  }
  cls = nb ? advise_needs_many(&s.base, &vs, res->threads, res->headroom_of, 1, batch, nb, err) : 0;
  for (int i = 0; !cls && i < nb; i++) batch[i]->headroom = (int64_t)res->headroom_of - (int64_t)advise_worst(batch[i]);
  free(batch);
  if (cls) { if (cls > s.worst) s.worst = cls; goto done; }
  advise_rank(res);
  res->pick = advise_pick(res);
  put_first(res, res->pick);
  res->default_i = -1;
  for (int i = 0; i < res->n; i++)
    if (res->c[i].origin == ADVISE_SEARCHED && !strcmp(res->c[i].spec, "caching")) res->default_i = i;
done:
  vs.excluded = NULL;
  free(excluded);
  variations_free(&vs);
  event_buffer_free(&own_buf);
  res->elapsed_s = (double)(now_ns() - t0) / 1e9;
  return s.worst;
}

void advise_free(struct advise_result *res) {
  free(res->c);
  res->c = NULL;
  res->n = res->cap = 0;
}
