/* zero_shard.c - `zero_shard`: one rank of ZeRO data parallelism (DeepSpeed stage 1/2).
 * Parameters stay whole on every rank; the optimizer states (and an fp32 copy of this
 * rank's parameter partition, which DeepSpeed always keeps) cover only a 1/world shard of
 * the flattened parameters. Stage 1: full gradients as usual; after backward they are
 * reduce-scattered bucket by bucket (a flat bucket copy and its 1/world output) into the
 * rank's persistent gradient partition. Stage 2: gradients are sharded too: as each
 * gradient is produced it is copied into the open reduce bucket and freed; a full bucket
 * is reduce-scattered into the partition and freed. After the sharded optimizer step the
 * updated parameters are all-gathered back in buckets (a bucket-sized gather buffer each).
 * The reduce and gather buffers are transient per bucket, as FSDP's per-unit collectives
 * allocate them; DeepSpeed instead keeps one persistent reduce bucket (contiguous_gradients)
 * and gathers into its flat parameter buffer, which would show as fewer, longer-lived blocks. */
#include "train_gen.h"

static const struct param_spec zero_params[] = {
  MODEL_GPT_PARAMS("8"),
  TRAIN_STEP_PARAMS,
  {"stage", P_INT, "2", "ZeRO stage: 1 (optimizer states sharded) | 2 (gradients too)"},
  {"bucket_mb", P_INT, "25", "reduce-scatter and all-gather bucket size, MiB"},
  {NULL, 0, NULL, NULL},
};

struct zero {
  struct train_gen g;
  int stage;
  uint64_t cap, shard, grad_shard;       /* bucket cap; this rank's partition: fp32, grad dtype */
  uint64_t master, partition, st1, st2;  /* fp32 partition copy, gradient partition, states */
  uint64_t bucket, fill, bucket_size;    /* stage 2: the open reduce bucket */
};

static uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* reduce-scatter a flat bucket of `bytes` into the partition, then free the bucket */
static void reduce_scatter(struct zero *z, uint64_t *bucket, uint64_t bytes) {
  struct evq *q = &z->g.s.q;
  if (!z->partition) z->partition = evq_alloc(q, z->grad_shard);
  uint64_t out = evq_alloc(q, div_up(bytes, (uint64_t)z->g.world));
  evq_free(q, out);
  evq_release(q, bucket);
}

static void zero_grad_ready(void *ctx, struct model *m, uint64_t p) {   /* stage 2 */
  struct zero *z = ctx;
  uint64_t b = m->pbytes[p];
  if (z->bucket && z->fill + b > z->bucket_size) reduce_scatter(z, &z->bucket, z->fill);
  if (!z->bucket) {
    z->bucket_size = b > z->cap ? b : z->cap;
    z->bucket = evq_alloc(m->q, z->bucket_size);
    z->fill = 0;
  }
  z->fill += b;
  evq_release(m->q, &m->gid[p]);   /* copied into the bucket */
}

static void zero_backward_end(void *ctx, struct model *m) {
  (void)m;
  struct zero *z = ctx;
  if (z->bucket) reduce_scatter(z, &z->bucket, z->fill);
}

/* groups of whole parameters up to the bucket cap, in (reverse) order, each getting a
 * flat buffer (stage 1's gradient buckets, the all-gather's output) */
static void bucketed(struct zero *z, int reverse, int scatter) {
  struct model *m = &z->g.m;
  struct evq *q = &z->g.s.q;
  for (uint64_t i = 0; i < m->np;) {
    uint64_t group = 0;
    while (i < m->np) {
      uint64_t b = m->pbytes[reverse ? m->np - 1 - i : i];
      if (group && group + b > z->cap) break;
      group += b;
      i++;
    }
    uint64_t flat = evq_alloc(q, group);
    if (scatter) reduce_scatter(z, &flat, group);
    else evq_release(q, &flat);
  }
}

static void zero_iteration(struct train_gen *g) {
  struct zero *z = (struct zero *)g;
  struct model *m = &g->m;
  struct evq *q = &g->s.q;
  model_zero_grad(m);
  model_new_batch(m);
  model_forward(m, 1);
  model_backward(m);
  if (z->stage == 1) bucketed(z, 1, 1);
  if (m->sh.optimizer != OPT_SGD) {   /* the optimizer over this rank's shard */
    if (!z->st1) {
      z->st1 = evq_alloc(q, z->shard);
      z->st2 = evq_alloc(q, z->shard);
    }
    evq_free(q, evq_alloc(q, z->shard));
  }
  bucketed(z, 0, 0);   /* all-gather the updated parameters */
  model_drop_outputs(m);
}

static void zero_setup(struct train_gen *g) {
  struct zero *z = (struct zero *)g;
  z->master = evq_alloc(&g->s.q, z->shard);
}

static void zero_finish(struct train_gen *g) {
  struct zero *z = (struct zero *)g;
  struct evq *q = &g->s.q;
  evq_release(q, &z->bucket);
  evq_release(q, &z->st1);
  evq_release(q, &z->st2);
  evq_release(q, &z->partition);
  evq_release(q, &z->master);
}

static void zero_restart(struct train_gen *g) {
  struct zero *z = (struct zero *)g;
  z->master = z->partition = z->st1 = z->st2 = z->bucket = z->fill = 0;
}

int zero_shard_open_with(void **st, const struct params *p, const struct workload_ctx *ctx, int64_t stage, int64_t cap,
                         const char *owner, char *err) {
  if (train_gen_open(st, sizeof(struct zero), p, ctx, MODEL_GPT, (struct model_opts){0}, owner, err)) return -1;
  struct zero *z = *st;
  struct model *m = &z->g.m;
  z->stage = (int)stage;
  z->cap = (uint64_t)cap << 20;
  z->shard = div_up(model_total_numel(&m->sh), (uint64_t)z->g.world) * 4;   /* fp32 master, states */
  z->grad_shard = z->shard / 4 * m->pdt;
  z->g.setup = zero_setup;
  z->g.iteration = zero_iteration;
  z->g.finish = zero_finish;
  z->g.restart = zero_restart;
  if (z->stage == 2) m->h = (struct model_hooks){.ctx = z, .grad_ready = zero_grad_ready, .backward_end = zero_backward_end};
  return 0;
}

static int zero_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int64_t stage, cap;
  if (param_int_in(p, "stage", 1, 2, &stage, "zero_shard", err) ||
      param_int_in(p, "bucket_mb", 1, 1 << 20, &cap, "zero_shard", err))
    return -1;
  return zero_shard_open_with(st, p, ctx, stage, cap, "zero_shard", err);
}

SYNTH_WORKLOAD(zero_shard,
               "one ZeRO-1/2 rank: optimizer states (and stage 2 gradients) sharded 1/world, reduce-scatter and all-gather buckets",
               zero_params, zero_open);
