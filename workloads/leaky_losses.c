/* leaky_losses.c - `leaky_losses`: a training loop whose script keeps a small GPU tensor
 * every step, the classic slow leak: `losses.append(loss)` instead of loss.item(),
 * optionally the step's outputs for "metrics later" (`preds.append(logits.argmax(-1))`),
 * and a logging dict of N scalar metrics per step (`logs.append({...: (pred == y).float().mean()})`,
 * whose comparison and float temporaries come and go). Shaped by default like the recorded
 * leaky_losses run (3-layer MLP 4096 wide, 1000 classes, batch 256, SGD, 300 steps; the
 * script calls zero_grad between forward and backward), whose leak it reproduces exactly:
 * 4 + 2048 bytes per step. The leak per iteration by construction is
 *   keep_loss * loss_bytes + keep_outputs * batch*seq*8 + keep_logs * 4
 * (loss_bytes: dtype_bytes). The kept tensors are freed at the very end, after the last
 * ITER, as the script's lists go away when it exits: every run ends with nothing live. */
#include "train_gen.h"

static const struct param_spec leaky_params[] = {
  {"model", P_STR, "mlp", "mlp (linear+relu layers `hidden` wide, `vocab` classes) | gpt (transformer; uses heads, ffn, seq)"},
  MODEL_ARCH_PARAMS("3", "4096", "32", "16384", "1000"),
  MODEL_DATA_PARAMS("256", "128"),
  MODEL_TRAIN_PARAMS("sgd", "300"),
  TRAIN_STEP_PARAMS,
  {"keep_loss", P_BOOL, "1", "keep each step's loss tensor (not loss.item())"},
  {"keep_outputs", P_BOOL, "1", "keep each step's predictions: argmax of the outputs, int64 per row"},
  {"keep_logs", P_INT, "0", "scalar metric tensors kept per step in a logging dict"},
  {NULL, 0, NULL, NULL},
};

struct leaky {
  struct train_gen g;
  int keep_loss, keep_outputs;
  uint64_t keep_logs;
  struct idlist kept;
};

static void keep(struct leaky *k, uint64_t id) {
  if (idlist_push(&k->kept, id)) k->g.s.q.oom = 1;
}

static void leaky_iteration(struct train_gen *g) {
  struct leaky *k = (struct leaky *)g;
  struct model *m = &g->m;
  struct evq *q = &g->s.q;
  model_new_batch(m);
  model_forward(m, 1);
  if (k->keep_outputs) keep(k, evq_alloc(q, m->rows * 8));
  for (uint64_t i = 0; i < k->keep_logs; i++) {
    uint64_t eq = evq_alloc(q, m->rows), f = evq_alloc(q, m->rows * 4);
    keep(k, evq_alloc(q, 4));
    evq_free(q, f);
    evq_free(q, eq);
  }
  if (k->keep_loss) {   /* the list now holds the loss; the variable's next assignment no longer frees it */
    keep(k, m->out.loss);
    m->out.loss = 0;
  }
  model_backward(m);
  model_optimizer_step(m);
  model_drop_outputs(m);
}

static void leaky_finish(struct train_gen *g) { idlist_free_all(&((struct leaky *)g)->kept, &g->s.q); }
static void leaky_restart(struct train_gen *g) { ((struct leaky *)g)->kept.n = 0; }
static void leaky_cleanup(struct train_gen *g) { idlist_destroy(&((struct leaky *)g)->kept); }

static int leaky_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int kind = param_choice(p, "model", "mlp|gpt", "leaky_losses", err);
  if (kind < 0) return -1;
  int64_t logs;
  if (param_int_in(p, "keep_logs", 0, 1000, &logs, "leaky_losses", err)) return -1;
  struct model_opts o = {.zero_grad_late = 1};
  if (train_gen_open(st, sizeof(struct leaky), p, ctx, kind ? MODEL_GPT : MODEL_MLP, o, "leaky_losses", err))
    return -1;
  struct leaky *k = *st;
  k->keep_loss = param_bool(p, "keep_loss");
  k->keep_outputs = param_bool(p, "keep_outputs");
  k->keep_logs = (uint64_t)logs;
  k->g.iteration = leaky_iteration;
  k->g.finish = leaky_finish;
  k->g.restart = leaky_restart;
  k->g.cleanup = leaky_cleanup;
  return 0;
}

SYNTH_WORKLOAD(leaky_losses,
               "training loop keeping each step's loss (and predictions, log scalars) on the GPU: a slow leak",
               leaky_params, leaky_open);
