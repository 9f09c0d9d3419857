/* amp.c - `amp`: mixed-precision training under torch.autocast. Parameters, gradients and
 * optimizer states stay fp32 (master weights); every forward casts each weight it uses
 * to bf16/fp16 once (autocast's cache: the copies the linears save live until their
 * backward, the bias copies until the autocast region exits); matmul outputs are low
 * precision while the residual stream (the embedding runs in fp32), LayerNorm and the
 * loss stay fp32, with the casts between them; weight gradients are computed in low
 * precision and cast to fp32. fp16 adds GradScaler's scale, scaled loss and unscale
 * scalars. Combines with checkpointing (`checkpoint_every`). */
#include "train_gen.h"

static const struct param_spec amp_params[] = {
  MODEL_GPT_PARAMS("12"),
  TRAIN_STEP_PARAMS,
  {"amp_dtype", P_STR, "bf16", "bf16 | fp16 (fp16 adds GradScaler)"},
  TRAIN_ACCUM_PARAM,
  {"checkpoint_every", P_INT, "0", "also checkpoint segments of this many blocks (0 = no checkpointing)"},
  {NULL, 0, NULL, NULL},
};

static int amp_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int dt = param_choice(p, "amp_dtype", "bf16|fp16", "amp", err);
  if (dt < 0) return -1;
  int64_t every;
  if (param_int_in(p, "checkpoint_every", 0, 4096, &every, "amp", err)) return -1;
  struct model_opts o = {.amp = dt == 0 ? 2 : 1, .ckpt_every = (uint64_t)every};
  return train_gen_open(st, sizeof(struct train_gen), p, ctx, MODEL_GPT, o, "amp", err);
}

SYNTH_WORKLOAD(amp,
               "GPT training under autocast: fp32 master weights, per-step bf16/fp16 weight copies, fp32 loss",
               amp_params, amp_open);
