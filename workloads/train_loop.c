/* train_loop.c - `train_loop`: a plain training loop over a GPT-style transformer, as
 * eager PyTorch allocates it (see train_model.h): parameters at start; per step
 * zero_grad, the next batch, forward with every block's saved activations, cross
 * entropy, backward freeing them in reverse while gradients and temporaries appear,
 * AdamW's states at the first step. The defaults are the shape of the shared gpt_train
 * snapshot, whose peak requested bytes it reproduces to within a few percent.
 * One job's patterns combine as parameters: ckpt=N (checkpoint every N-th block), amp=
 * bf16|fp16 (autocast), accum=N (the batch in N micro-batches), arch=gpt (the decoder of
 * tests/validate/torch_jobs.py, whose loop it then follows: logits dropped before the
 * optimizer step); zero=1|2 and offload=activations|params are zero_shard's and offload's
 * generators (each alone, for now). */
#include <stdio.h>
#include <string.h>
#include "train_gen.h"

static const struct param_spec train_loop_params[] = {
  MODEL_GPT_PARAMS("12"),
  TRAIN_STEP_PARAMS,
  TRAIN_JOB_PARAMS,
  TRAIN_SHARD_PARAMS,
  {NULL, 0, NULL, NULL},
};

static int train_loop_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int64_t zero;
  if (param_int_in(p, "zero", 0, 2, &zero, "train_loop", err)) return -1;
  int off = param_choice(p, "offload", "none|activations|params", "train_loop", err);
  if (off < 0) return -1;
  if ((zero || off) && (param_int(p, "accum") > 1 || param_int(p, "ckpt") || strcmp(param_str(p, "amp"), "off") ||
                        strcmp(param_str(p, "arch"), "encoder") || (zero && off))) {
    snprintf(err, FB_ERRLEN, "train_loop: zero= and offload= combine with none of accum, ckpt, amp, arch=gpt or each other yet");
    return -1;
  }
  if (zero) return zero_shard_open_with(st, p, ctx, zero, 25, "train_loop", err);
  if (off) return offload_open_with(st, p, ctx, off - 1, 1, "train_loop", err);
  return train_gen_open(st, sizeof(struct train_gen), p, ctx, MODEL_GPT, (struct model_opts){0}, "train_loop", err);
}

SYNTH_WORKLOAD(train_loop,
               "GPT training loop: parameters, saved activations freed in reverse by backward, gradients, AdamW states",
               train_loop_params, train_loop_open);
