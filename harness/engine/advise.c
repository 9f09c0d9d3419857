/* advise.c - the search behind `fragbench advise` (see advise.h): one pass over the
 * trace for its request sizes and peak, then coordinate descent over PyTorch's knobs from
 * the defaults with expandable segments off and on, every distinct setting replayed once
 * on the simulated device (a cache by spec), then every replayed setting ranked. */
#include "advise.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define MAX_ROUNDS_DEFAULT 6

static int knob_count_of(const struct advise_candidate *c) {
  return c->origin == ADVISE_RECORDED ? 99 : advise_knobs_count(&c->k);   /* recorded: last among equals */
}

static int cmp_u(uint64_t x, uint64_t y) { return x < y ? -1 : x > y; }

int advise_compare(const struct advise_candidate *a, const struct advise_candidate *b, uint64_t budget) {
  int d;
  if (a->fits != b->fits) return a->fits ? -1 : 1;
  if (!a->fits) {                                   /* neither completes: the one that got further */
    if ((d = cmp_u(b->r.events, a->r.events))) return d;
    if ((d = cmp_u(a->r.peak_reserved, b->r.peak_reserved))) return d;
  } else if (budget) {
    if ((d = cmp_u(a->r.modeled_driver_ns, b->r.modeled_driver_ns))) return d;
    if ((d = cmp_u(a->r.peak_reserved, b->r.peak_reserved))) return d;
  } else {
    if ((d = cmp_u(a->r.peak_reserved, b->r.peak_reserved))) return d;
    if ((d = cmp_u(a->r.modeled_driver_ns, b->r.modeled_driver_ns))) return d;
  }
  if ((d = knob_count_of(a) - knob_count_of(b))) return d;
  return strcmp(a->spec, b->spec);
}

struct search {
  const struct advise_opts *o;
  struct advise_result *res;
  struct run_spec base;
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
  struct run_spec rs = s->base;
  rs.allocator = c->spec;
  run_result_init(&c->r);
  int cls = replay_run(&rs, &c->r);
  if (cls) {
    snprintf(s->err, FB_ERRLEN, "%.200s: %.300s", spec, c->r.status);
    if (cls > s->worst) s->worst = cls;
    return -1;
  }
  c->fits = c->r.completed && !c->r.oom_count;
  return res->n++;
}

static int eval_knobs(struct search *s, const struct advise_knobs *k) {
  char spec[700];
  advise_knobs_spec(k, spec, sizeof spec);
  return evaluate(s, spec, k, ADVISE_SEARCHED);
}

/* try every value of one knob at the current point; move to the best if strictly better */
static int try_knob(struct search *s, struct advise_knobs *cur, int *cur_i, int knob) {
  const struct advise_space *sp = &s->res->space;
  int nvals = knob == 0 ? sp->nsplit : knob == 1 ? sp->nnon : knob == 2 ? sp->nroundup : sp->ngc;
  int best_i = *cur_i;
  struct advise_knobs best = *cur;
  for (int v = 0; v < nvals; v++) {
    struct advise_knobs k = *cur;
    if (knob == 0) k.max_split_mb = sp->split_mb[v];
    else if (knob == 1) k.non_split_mb = sp->non_split_mb[v];
    else if (knob == 2) memcpy(k.roundup, sp->roundup[v], sizeof k.roundup);
    else k.gc = sp->gc[v];
    if (knob != 1 && !k.max_split_mb) k.non_split_mb = 0;   /* rounding only acts with max_split_size */
    int i = eval_knobs(s, &k);
    if (i < 0) return -1;
    if (advise_compare(&s->res->c[i], &s->res->c[best_i], s->o->budget) < 0) { best_i = i; best = k; }
  }
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
    for (int knob = 0; knob < 4; knob++) {
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

/* one pass: every request size, and what the trace says about itself */
static int read_sizes(const struct advise_opts *o, uint64_t **sizes, size_t *n, struct workload_info *info, char *err) {
  const struct workload_ops *ops = trace_detect(o->trace, err);
  if (!ops) return -1;
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .path = o->trace, .trace_device = o->trace_device};
  if (workload_open(&w, ops, NULL, &ctx, SIM_TOTAL_DEFAULT, err)) return -1;
  memset(info, 0, sizeof *info);
  if (ops->info) ops->info(w.st, info);
  size_t cap = 4096;
  *n = 0;
  *sizes = malloc(cap * sizeof **sizes);
  struct event ev;
  int rc = *sizes ? 0 : -1;
  while (*sizes && (rc = workload_next(&w, &ev, err)) == 1) {
    if (ev.op != OP_ALLOC) continue;
    if (*n == cap) {
      uint64_t *more = realloc(*sizes, cap * 2 * sizeof *more);
      if (!more) { rc = -1; snprintf(err, FB_ERRLEN, "out of host memory"); break; }
      *sizes = more;
      cap *= 2;
    }
    (*sizes)[(*n)++] = ev.size;
  }
  if (!*sizes) snprintf(err, FB_ERRLEN, "out of host memory");
  workload_close(&w);
  return rc < 0 ? -1 : 0;
}

static int rank_budget_cmp(const void *a, const void *b, void *budget) {
  return advise_compare(a, b, *(const uint64_t *)budget);
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

  uint64_t *sizes = NULL;
  size_t n = 0;
  struct workload_info info;
  if (read_sizes(o, &sizes, &n, &info, err)) { free(sizes); return 2; }
  if (workload_peak_requested(&s.base, &res->peak_requested, err)) { free(sizes); return 2; }
  snprintf(res->recorded_allocator, sizeof res->recorded_allocator, "%s", info.recorded_allocator);
  if (o->budget && o->budget < res->peak_requested) {
    char a[32], b[32];
    snprintf(err, FB_ERRLEN, "--budget %llu bytes (%s) is below the trace's peak requested %llu bytes (%s): the "
             "program itself asks for more at once, so no allocator setting can fit; give at least %llu",
             (unsigned long long)o->budget, fmt_bytes(o->budget, a, sizeof a), (unsigned long long)res->peak_requested,
             fmt_bytes(res->peak_requested, b, sizeof b), (unsigned long long)res->peak_requested);
    free(sizes);
    return 2;
  }
  advise_space_from_sizes(sizes, n, res->peak_requested, o->budget, &res->space);
  free(sizes);

  if (descend(&s, 0) || descend(&s, 1)) goto done;
  if (info.recorded_allocator[0] && evaluate(&s, "recorded", NULL, ADVISE_RECORDED) < 0) goto done;
  qsort_r(res->c, (size_t)res->n, sizeof *res->c, rank_budget_cmp, (void *)&o->budget);
done:
  res->elapsed_s = (double)(now_ns() - t0) / 1e9;
  return s.worst;
}

void advise_free(struct advise_result *res) {
  free(res->c);
  res->c = NULL;
  res->n = res->cap = 0;
}
