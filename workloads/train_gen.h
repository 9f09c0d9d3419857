/* train_gen.h - the skeleton most generators share: open (read the model shape and step
 * options, build the model), then chunks of events: the parameters, one chunk per
 * iteration ending in OP_ITER, and a teardown that frees everything. A generator
 * embeds `struct train_gen` first and overrides what its mechanism changes. */
#ifndef FB_TRAIN_GEN_H
#define FB_TRAIN_GEN_H
#include "train_model.h"
#include "workload.h"

/* step options shared by generators that accept them */
#define TRAIN_STEP_PARAMS                                                                          \
  {"set_to_none", P_BOOL, "1", "zero_grad(set_to_none=True): gradients freed every step and re-created by backward"}, \
  {"attention", P_STR, "sdpa", "sdpa (memory-efficient kernel: output + logsumexp) | math (batch*heads*seq*seq scores and softmax)"}, \
  {"arch", P_STR, "encoder", "encoder (nn.TransformerEncoderLayer, relu) | gpt (torch_jobs.py's decoder: causal SDPA on packed qkv, GELU, positions, final norm)"}

/* what one job combines (tests/validate/torch_jobs.py's gpt job has the same keys) */
#define TRAIN_CKPT_PARAM                                                                           \
  {"ckpt", P_INT, "0", "activation checkpointing (non-reentrant) of every N-th block, i % N == 0 (1 = every block; 0 = off)"}
#define TRAIN_AMP_PARAM                                                                            \
  {"amp", P_STR, "off", "autocast: off | bf16 | fp16 (fp16 adds GradScaler); parameters, grads and states stay fp32"}
#define TRAIN_ACCUM_PARAM                                                                          \
  {"accum", P_INT, "1", "gradient accumulation: the batch split into this many micro-batches per optimizer step"}
#define TRAIN_JOB_PARAMS TRAIN_CKPT_PARAM, TRAIN_AMP_PARAM, TRAIN_ACCUM_PARAM
/* train_loop only: the sharding and offload of zero_shard and offload, as parameters */
#define TRAIN_SHARD_PARAMS                                                                         \
  {"zero", P_INT, "0", "ZeRO stage over the world's ranks: 1 optimizer states, 2 gradients too (25 MiB buckets); 0 = off"}, \
  {"offload", P_STR, "none", "none | activations (save_on_cpu) | params (host parameters staged per unit, CPU optimizer)"}

/* zero_shard.c and offload.c's generators opened with their mechanism given (owner names
 * the workload in messages) */
int zero_shard_open_with(void **st, const struct params *p, const struct workload_ctx *ctx, int64_t stage, int64_t bucket_mb,
                         const char *owner, char *err);
int offload_open_with(void **st, const struct params *p, const struct workload_ctx *ctx, int target, int prefetch,
                      const char *owner, char *err);

struct train_gen {
  struct synth s;
  struct model m;
  int rank, world;
  uint64_t seed;
  uint64_t iters, iter;   /* iterations to run, done */
  uint64_t accum;         /* TRAIN_ACCUM_PARAM: micro-batches per step (1 = none) */
  int started;
  /* overridable: what follows the parameters' allocation (a wrapper's constructor); one
   * iteration's events (default model_train_step); extra teardown before the model's;
   * generator-specific reset on rewind; generator-specific host memory */
  void (*setup)(struct train_gen *g);
  void (*iteration)(struct train_gen *g);
  void (*finish)(struct train_gen *g);
  void (*restart)(struct train_gen *g);
  void (*cleanup)(struct train_gen *g);
};

/* Allocates a zeroed state of `size` bytes (>= sizeof(struct train_gen)) into *st, reads
 * the shape and TRAIN_STEP_PARAMS present in p's spec (o gives the rest of the options),
 * and builds the model. */
int train_gen_open(void **st, size_t size, const struct params *p, const struct workload_ctx *ctx,
                   enum model_kind kind, struct model_opts o, const char *owner, char *err);
/* one optimizer step over g->accum micro-batches splitting the step's batch (x.chunk):
 * gradients made by the first, added in place by the others; each micro-batch's loss
 * divided by accum (a temporary) */
void train_gen_accum_step(struct train_gen *g);
/* the default iteration: train_gen_accum_step for accum > 1 or ARCH_GPT, else model_train_step */
void train_gen_step(struct train_gen *g);
/* one value among choices ("a|b|c"): its index, or -1 with err naming the key */
int param_choice(const struct params *p, const char *key, const char *choices, const char *owner, char *err);

#endif
