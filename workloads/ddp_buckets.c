/* ddp_buckets.c - `ddp_buckets`: one rank of DistributedDataParallel. At construction
 * DDP broadcasts the parameters from rank 0 through flattened 250 MiB groups, and its
 * Reducer allocates flat gradient buckets over the parameters in reverse order (the first
 * bucket capped at first_bucket_mb, the rest at bucket_mb; a bucket closes once it
 * reaches its cap). Every backward copies each gradient into its bucket; when a bucket's
 * last gradient is ready its communication hook runs: hook=fp16 (fp16_compress_hook)
 * allocates a half-size compressed copy that lives until the reducer's finalize waits
 * for all buckets at the end of backward; hook=allreduce (the default hook) reduces in
 * place. Before the second forward DDP rebuilds its buckets in the order gradients
 * actually became ready: all old buckets are freed, new ones allocated. With
 * gradient_as_bucket_view=1 each .grad becomes a view into its bucket (the separately
 * computed gradient is freed). Rank-aware: rank r of `world` trains on sequences
 * `imbalance * r / (world-1)` longer than rank 0's (uneven data), so ranks peak apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train_gen.h"

#define BROADCAST_BUCKET_BYTES (250ull << 20)   /* DDP _sync_module_states */

static const struct param_spec ddp_params[] = {
  MODEL_GPT_PARAMS("8"),
  TRAIN_STEP_PARAMS,
  {"bucket_mb", P_INT, "25", "bucket_cap_mb: gradient bucket size cap, MiB"},
  {"first_bucket_mb", P_INT, "1", "the first bucket's cap, MiB (DDP's _DEFAULT_FIRST_BUCKET_BYTES)"},
  {"hook", P_STR, "fp16", "communication hook: fp16 (fp16_compress_hook: a compressed copy per bucket during backward) | allreduce (in place)"},
  {"gradient_as_bucket_view", P_BOOL, "0", "grads are views into the buckets (no separate .grad tensors kept)"},
  {"imbalance", P_FLOAT, "0", "rank r's sequences are 1 + imbalance*r/(world-1) times seq (rounded up to 8)"},
  {NULL, 0, NULL, NULL},
};

struct ddp {
  struct train_gen g;
  uint64_t cap, first_cap;
  int fp16_hook, as_view;
  uint64_t nb;                 /* buckets */
  uint64_t *bucket_of, *bytes, *count, *ready, *id;   /* per param (bucket_of) / per bucket */
  uint64_t *order, norder;     /* gradient-ready order seen in the first backward */
  int rebuilt;
  struct idlist inflight;      /* compressed copies awaiting finalize */
};

static void assign_buckets(struct ddp *d, const uint64_t *order, uint64_t n) {
  struct model *m = &d->g.m;
  memset(d->bytes, 0, m->np * sizeof *d->bytes);
  memset(d->count, 0, m->np * sizeof *d->count);
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t p = order[i];
    d->bucket_of[p] = k;
    d->bytes[k] += m->pbytes[p];
    d->count[k]++;
    if (d->bytes[k] >= (k == 0 ? d->first_cap : d->cap) && i + 1 < n) k++;
  }
  d->nb = n ? k + 1 : 0;
}

static void alloc_buckets(struct ddp *d) {
  for (uint64_t k = 0; k < d->nb; k++) d->id[k] = evq_alloc(&d->g.s.q, d->bytes[k]);
}

static void free_buckets(struct ddp *d) {
  for (uint64_t k = 0; k < d->nb; k++) evq_release(&d->g.s.q, &d->id[k]);
}

static void ddp_setup(struct train_gen *g) {   /* DDP(model): broadcast, then the Reducer */
  struct ddp *d = (struct ddp *)g;
  struct model *m = &g->m;
  for (uint64_t p = 0; p < m->np;) {
    uint64_t group = 0;
    while (p < m->np && (group == 0 || group + m->pbytes[p] <= BROADCAST_BUCKET_BYTES)) group += m->pbytes[p++];
    evq_free(&g->s.q, evq_alloc(&g->s.q, group));
  }
  for (uint64_t i = 0; i < m->np; i++) d->order[i] = m->np - 1 - i;
  assign_buckets(d, d->order, m->np);
  alloc_buckets(d);
  d->norder = 0;
}

static void ddp_grad_ready(void *ctx, struct model *m, uint64_t p) {
  struct ddp *d = ctx;
  if (!d->rebuilt && d->norder < m->np) d->order[d->norder++] = p;
  if (d->as_view) evq_release(m->q, &m->gid[p]);
  uint64_t k = d->bucket_of[p];
  if (++d->ready[k] == d->count[k] && d->fp16_hook && idlist_push(&d->inflight, evq_alloc(m->q, d->bytes[k] / 2)))
    m->q->oom = 1;
}

static void ddp_backward_end(void *ctx, struct model *m) {
  struct ddp *d = ctx;
  idlist_free_all(&d->inflight, m->q);
  memset(d->ready, 0, m->np * sizeof *d->ready);
}

static void ddp_iteration(struct train_gen *g) {
  struct ddp *d = (struct ddp *)g;
  if (g->iter == 1 && !d->rebuilt && d->norder == g->m.np) {   /* _rebuild_buckets before the 2nd forward */
    free_buckets(d);
    assign_buckets(d, d->order, d->norder);
    alloc_buckets(d);
    d->rebuilt = 1;
  }
  model_train_step(&g->m);
}

static void ddp_finish(struct train_gen *g) { free_buckets((struct ddp *)g); }

static void ddp_restart(struct train_gen *g) {
  struct ddp *d = (struct ddp *)g;
  d->rebuilt = 0;
  d->norder = 0;
  d->nb = 0;
  d->inflight.n = 0;
  memset(d->ready, 0, g->m.np * sizeof *d->ready);
  memset(d->id, 0, g->m.np * sizeof *d->id);
}

static void ddp_cleanup(struct train_gen *g) {
  struct ddp *d = (struct ddp *)g;
  free(d->bucket_of);
  free(d->bytes);
  free(d->count);
  free(d->ready);
  free(d->id);
  free(d->order);
  idlist_destroy(&d->inflight);
}

static int ddp_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int hook = param_choice(p, "hook", "fp16|allreduce", "ddp_buckets", err);
  if (hook < 0) return -1;
  int64_t cap, first;
  if (param_int_in(p, "bucket_mb", 1, 1 << 20, &cap, "ddp_buckets", err) ||
      param_int_in(p, "first_bucket_mb", 1, 1 << 20, &first, "ddp_buckets", err))
    return -1;
  double imb = param_float(p, "imbalance");
  if (!(imb >= 0 && imb <= 100)) {
    snprintf(err, FB_ERRLEN, "ddp_buckets: parameter 'imbalance=%s': expected 0..100", param_str(p, "imbalance"));
    return -1;
  }
  if (train_gen_open(st, sizeof(struct ddp), p, ctx, MODEL_GPT, (struct model_opts){0}, "ddp_buckets", err)) return -1;
  struct ddp *d = *st;
  struct model *m = &d->g.m;
  d->g.setup = ddp_setup;
  d->g.iteration = ddp_iteration;
  d->g.finish = ddp_finish;
  d->g.restart = ddp_restart;
  d->g.cleanup = ddp_cleanup;
  d->cap = (uint64_t)cap << 20;
  d->first_cap = (uint64_t)first << 20;
  d->fp16_hook = hook == 0;
  d->as_view = param_bool(p, "gradient_as_bucket_view");
  uint64_t **arrays[] = {&d->bucket_of, &d->bytes, &d->count, &d->ready, &d->id, &d->order};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    if (!(*arrays[i] = calloc(m->np, sizeof(uint64_t)))) {
      snprintf(err, FB_ERRLEN, "ddp_buckets: out of host memory");
      goto fail;
    }
  if (d->g.world > 1) {   /* this rank's sequence length */
    double f = 1 + imb * (double)d->g.rank / (double)(d->g.world - 1);
    uint64_t seq = ((uint64_t)((double)m->sh.seq * f + 0.999999) + 7) / 8 * 8;
    if (model_shape_check_step(&m->sh, m->sh.batch, seq, "ddp_buckets", err)) goto fail;
    m->sh.seq = seq;
    model_set_step(m, m->sh.batch, seq);
  }
  m->h = (struct model_hooks){.ctx = d, .grad_ready = ddp_grad_ready, .backward_end = ddp_backward_end};
  return 0;
fail:
  synth_close(d);
  *st = NULL;
  return -1;
}

SYNTH_WORKLOAD(ddp_buckets,
               "one DDP rank: parameter broadcast, flat gradient buckets (rebuilt after step 1), per-bucket hook buffers in backward",
               ddp_params, ddp_open);
