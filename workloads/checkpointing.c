/* checkpointing.c - `checkpointing`: activation checkpointing (torch.utils.checkpoint,
 * non-reentrant) over segments of `every` transformer blocks. The forward runs each
 * segment without saving anything but the segment's input (intermediate tensors are
 * freed as soon as they are consumed); backward, reaching a segment, first recomputes its
 * forward with grad - a burst of the segment's saved activations - then runs its backward,
 * which frees them again. */
#include <stdio.h>
#include "train_gen.h"

static const struct param_spec checkpointing_params[] = {
  MODEL_GPT_PARAMS("12"),
  TRAIN_STEP_PARAMS,
  {"every", P_INT, "2", "blocks per checkpointed segment (1 = checkpoint every block)"},
  {NULL, 0, NULL, NULL},
};

static int checkpointing_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int64_t every = param_int(p, "every");
  if (every < 1 || every > 4096) {
    snprintf(err, FB_ERRLEN, "checkpointing: parameter 'every=%lld': expected 1..4096", (long long)every);
    return -1;
  }
  struct model_opts o = {.ckpt_every = (uint64_t)every};
  return train_gen_open(st, sizeof(struct train_gen), p, ctx, MODEL_GPT, o, "checkpointing", err);
}

const struct workload_ops checkpointing_workload = {
  .name = "checkpointing",
  .help = "GPT training with activation checkpointing: segment inputs kept, recomputation bursts in backward",
  .params = checkpointing_params,
  .open = checkpointing_open,
  .next = synth_next,
  .rewind = synth_rewind,
  .close = synth_close,
};
