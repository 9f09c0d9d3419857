/* advise.c - the search behind `fragbench advise` (see advise.h): one pass over the
 * trace for its request sizes and peak, then coordinate descent over PyTorch's knobs from
 * the defaults with expandable segments off and on, every distinct setting replayed once
 * on the simulated device (a cache by spec) from the trace held in memory (trace_mem.c:
 * read and decompressed once), then every replayed setting ranked. */
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

/* 0 and 1 divisions both mean plain 512 B rounding: one spelling per setting, 1 inside
 * a list that rounds somewhere ("[32:8,>:1]"), all 0 when it rounds nowhere */
static void normalize_roundup(struct advise_knobs *k) {
  int any = 0;
  for (int i = 0; i < ADVISE_INTERVALS; i++) any |= k->roundup[i] > 1;
  for (int i = 0; i < ADVISE_INTERVALS; i++) if (k->roundup[i] <= 1) k->roundup[i] = any;
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
  struct advise_knobs best = *cur;
  for (int v = 0; v < nvals; v++) {
    struct advise_knobs k = *cur;
    if (knob == 0) k.max_split_mb = sp->split_mb[v];
    else if (knob == 1) k.non_split_mb = sp->non_split_mb[v];
    else if (knob == 2) memcpy(k.roundup, sp->roundup[v], sizeof k.roundup);
    else if (knob == 3) k.gc = sp->gc[v];
    else k.roundup[sp->interval[knob - 4]] = per_interval[v];   /* knob 4 + j: the j-th interval */
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

/* how much there is to write: knobs, then the pieces of a roundup list, then characters */
static int simpler(const struct advise_candidate *a, const struct advise_candidate *b) {
  int d = knob_count_of(a) - knob_count_of(b);
  if (d) return d < 0;
  int ra = 0, rb = 0;
  for (int i = 1; i < ADVISE_INTERVALS; i++) {
    ra += a->k.roundup[i] != a->k.roundup[i - 1];
    rb += b->k.roundup[i] != b->k.roundup[i - 1];
  }
  if (ra != rb) return ra < rb;
  return strlen(a->spec) < strlen(b->spec);
}

/* The recommendation: of the settings as good as the best one, give or take
 * ADVISE_DRIVER_TIE of its driver time (and, with a budget, of its peak reserved; without
 * one, the same peak reserved), the simplest goes first: a knob that saves 0.1% of the
 * driver time is not worth setting. */
static void simplest_first(struct advise_result *res, uint64_t budget) {
  const struct advise_candidate *best = &res->c[0];
  if (!res->n || !best->fits) return;
  double tie = 1 + ADVISE_DRIVER_TIE;
  int pick = 0;
  for (int i = 1; i < res->n; i++) {
    const struct advise_candidate *c = &res->c[i];
    if (!c->fits || (double)c->r.modeled_driver_ns > (double)best->r.modeled_driver_ns * tie) continue;
    if (budget ? (double)c->r.peak_reserved > (double)best->r.peak_reserved * tie : c->r.peak_reserved != best->r.peak_reserved)
      continue;
    if (simpler(c, &res->c[pick])) pick = i;
  }
  if (!pick) return;
  struct advise_candidate *tmp = malloc(sizeof *tmp);
  if (!tmp) return;
  *tmp = res->c[pick];
  memmove(&res->c[1], &res->c[0], (size_t)pick * sizeof *res->c);
  res->c[0] = *tmp;
  free(tmp);
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

  /* the trace read once; every candidate replays it from memory */
  struct event_buffer buf;
  if (event_buffer_load(&buf, o->trace, o->trace_device, err)) return 2;
  s.base.events = &buf;
  size_t n = 0;
  uint64_t *sizes = request_sizes(&buf, &n);
  if (!sizes) { snprintf(err, FB_ERRLEN, "out of host memory"); event_buffer_free(&buf); return 1; }
  if (workload_peak_requested(&s.base, &res->peak_requested, err)) { free(sizes); event_buffer_free(&buf); return 2; }
  const struct workload_info *info = &buf.info;
  snprintf(res->recorded_allocator, sizeof res->recorded_allocator, "%s", info->recorded_allocator);
  if (o->budget && o->budget < res->peak_requested) {
    char a[32], b[32];
    snprintf(err, FB_ERRLEN, "--budget %llu bytes (%s) is below the trace's peak requested %llu bytes (%s): the "
             "program itself asks for more at once, so no allocator setting can fit; give at least %llu",
             (unsigned long long)o->budget, fmt_bytes(o->budget, a, sizeof a), (unsigned long long)res->peak_requested,
             fmt_bytes(res->peak_requested, b, sizeof b), (unsigned long long)res->peak_requested);
    free(sizes);
    event_buffer_free(&buf);
    return 2;
  }
  advise_space_from_sizes(sizes, n, res->peak_requested, o->budget, &res->space);
  free(sizes);

  if (descend(&s, 0) || descend(&s, 1)) goto done;
  if (info->recorded_allocator[0] && evaluate(&s, "recorded", NULL, ADVISE_RECORDED) < 0) goto done;
  qsort_r(res->c, (size_t)res->n, sizeof *res->c, rank_budget_cmp, (void *)&o->budget);
  simplest_first(res, o->budget);
done:
  event_buffer_free(&buf);
  res->elapsed_s = (double)(now_ns() - t0) / 1e9;
  return s.worst;
}

void advise_free(struct advise_result *res) {
  free(res->c);
  res->c = NULL;
  res->n = res->cap = 0;
}
