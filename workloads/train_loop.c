/* train_loop.c - `train_loop`: a plain training loop over a GPT-style transformer, as
 * eager PyTorch allocates it (see train_model.h): parameters at start; per step
 * zero_grad, the next batch, forward with every block's saved activations, cross
 * entropy, backward freeing them in reverse while gradients and temporaries appear,
 * AdamW's states at the first step. The defaults are the shape of the shared gpt_train
 * snapshot, whose peak requested bytes it reproduces to within a few percent.
 * One job's patterns combine as parameters: ckpt=N (checkpoint every N-th block), amp=
 * bf16|fp16 (autocast), accum=N (the batch in N micro-batches), arch=gpt (the decoder of
 * tests/validate/torch_jobs.py, whose loop it then follows: logits dropped before the
 * optimizer step). */
#include "train_gen.h"

static const struct param_spec train_loop_params[] = {
  MODEL_GPT_PARAMS("12"),
  TRAIN_STEP_PARAMS,
  TRAIN_JOB_PARAMS,
  {NULL, 0, NULL, NULL},
};

static int train_loop_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  return train_gen_open(st, sizeof(struct train_gen), p, ctx, MODEL_GPT, (struct model_opts){0}, "train_loop", err);
}

SYNTH_WORKLOAD(train_loop,
               "GPT training loop: parameters, saved activations freed in reverse by backward, gradients, AdamW states",
               train_loop_params, train_loop_open);
