/* checkpointing.c - `checkpointing`: activation checkpointing (torch.utils.checkpoint,
 * non-reentrant) over segments of `every` transformer blocks. The forward runs each
 * segment without saving anything but the segment's input (intermediate tensors are
 * freed as soon as they are consumed); backward, reaching a segment, first recomputes its
 * forward with grad - a burst of the segment's saved activations - then runs its backward,
 * which frees them again. amp=bf16|fp16 runs it under autocast (as amp:checkpoint_every=). */
#include "train_gen.h"

static const struct param_spec checkpointing_params[] = {
  MODEL_GPT_PARAMS("12"),
  TRAIN_STEP_PARAMS,
  TRAIN_AMP_PARAM,
  {"every", P_INT, "2", "blocks per checkpointed segment (1 = checkpoint every block)"},
  {NULL, 0, NULL, NULL},
};

static int checkpointing_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int64_t every;
  if (param_int_in(p, "every", 1, 4096, &every, "checkpointing", err)) return -1;
  struct model_opts o = {.ckpt_every = (uint64_t)every};
  return train_gen_open(st, sizeof(struct train_gen), p, ctx, MODEL_GPT, o, "checkpointing", err);
}

SYNTH_WORKLOAD(checkpointing,
               "GPT training with activation checkpointing: segment inputs kept, recomputation bursts in backward",
               checkpointing_params, checkpointing_open);
