/* grad_accumulation.c - `grad_accumulation`: gradient accumulation over `accum`
 * micro-batches per optimizer step. The first micro-batch's backward creates the
 * gradients (after zero_grad(set_to_none=True)); the others add into them in place, each
 * through a temporary. Each micro-batch's loss is divided by `accum` before backward (a
 * temporary), and the script's `logits` variable keeps the previous micro-batch's logits
 * alive until the next forward has produced its own. One iteration = one optimizer step.
 * ckpt= and amp= combine checkpointing and autocast with it. (train_loop:accum=N is the
 * other reading: the batch split into N micro-batches, as torch_jobs.py does.) */
#include "train_gen.h"

static const struct param_spec grad_accumulation_params[] = {
  MODEL_ARCH_PARAMS("8", "1024", "16", "4096", "32000"),
  MODEL_DATA_PARAMS("8", "512"),
  MODEL_TRAIN_PARAMS("adamw", "6"),
  TRAIN_STEP_PARAMS,
  TRAIN_CKPT_PARAM,
  TRAIN_AMP_PARAM,
  {"accum", P_INT, "4", "micro-batches (of `batch` sequences) per optimizer step"},
  {NULL, 0, NULL, NULL},
};

struct grad_accumulation {
  struct train_gen g;
  uint64_t accum;
};

static void grad_accumulation_iteration(struct train_gen *g) {
  struct model *m = &g->m;
  uint64_t accum = ((struct grad_accumulation *)g)->accum;
  model_zero_grad(m);
  for (uint64_t k = 0; k < accum; k++) {
    model_new_batch(m);
    model_forward(m, 1);
    uint64_t scaled = evq_alloc(m->q, m->o.amp ? 4 : m->adt);   /* loss / accum */
    model_backward(m);
    evq_free(m->q, scaled);
  }
  model_optimizer_step(m);
  model_drop_outputs(m);
}

static int grad_accumulation_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int64_t accum;
  if (param_int_in(p, "accum", 1, 4096, &accum, "grad_accumulation", err)) return -1;
  if (train_gen_open(st, sizeof(struct grad_accumulation), p, ctx, MODEL_GPT, (struct model_opts){0},
                     "grad_accumulation", err))
    return -1;
  struct grad_accumulation *a = *st;
  a->accum = (uint64_t)accum;
  a->g.iteration = grad_accumulation_iteration;
  return 0;
}

SYNTH_WORKLOAD(grad_accumulation,
               "GPT training with gradients accumulated over micro-batches, an optimizer step every `accum`",
               grad_accumulation_params, grad_accumulation_open);
