/* eval_accumulate.c - `eval_accumulate`: training with a validation pass every
 * `eval_every` steps that runs `eval_batches` batches under torch.no_grad() (no saved
 * activations: each block's tensors die as soon as they are consumed) but keeps every
 * batch's outputs on the GPU for metrics at the end (`outs.append(logits)`, or the
 * argmax predictions with keep=preds) along with each batch's loss; then torch.cat()s
 * them (a second copy of everything kept), computes a metric, and lets it all go. The
 * training step's batch stays referenced across the pass. A pass happens between
 * iterations, so the ITER points (and leak_bytes_per_iter) do not see it. */
#include <string.h>
#include "train_gen.h"

static const struct param_spec eval_params[] = {
  MODEL_GPT_PARAMS("12"),
  TRAIN_STEP_PARAMS,
  {"eval_every", P_INT, "4", "a validation pass after every this many training steps"},
  {"eval_batches", P_INT, "4", "batches per validation pass (same shape as training)"},
  {"keep", P_STR, "logits", "what each eval batch keeps on the GPU: logits (batch*seq*vocab) | preds (argmax, int64)"},
  {NULL, 0, NULL, NULL},
};

struct eval_acc {
  struct train_gen g;
  uint64_t every, batches;
  int keep_preds;
  struct idlist kept;
};

static void validation_pass(struct eval_acc *e) {
  struct model *m = &e->g.m;
  struct evq *q = &e->g.s.q;
  struct script_refs train = m->out;   /* the training loop's references stay alive */
  memset(&m->out, 0, sizeof m->out);
  uint64_t per_batch = e->keep_preds ? m->rows * 8 : m->rows * m->sh.vocab * m->adt;
  for (uint64_t b = 0; b < e->batches; b++) {
    model_new_batch(m);
    model_forward(m, 0);
    if (e->keep_preds) {
      if (idlist_push(&e->kept, evq_alloc(q, per_batch))) q->oom = 1;
    } else {
      if (idlist_push(&e->kept, m->out.logits)) q->oom = 1;
      m->out.logits = 0;
    }
    if (idlist_push(&e->kept, m->out.loss)) q->oom = 1;
    m->out.loss = 0;
  }
  uint64_t all = evq_alloc(q, per_batch * e->batches), metric = evq_alloc(q, 4);
  evq_free(q, metric);
  evq_free(q, all);
  idlist_free_all(&e->kept, q);
  model_release_outputs(m);
  m->out = train;
}

static void eval_iteration(struct train_gen *g) {
  struct eval_acc *e = (struct eval_acc *)g;
  model_train_step(&g->m);
  if ((g->iter + 1) % e->every == 0) validation_pass(e);
}

static void eval_restart(struct train_gen *g) { ((struct eval_acc *)g)->kept.n = 0; }
static void eval_cleanup(struct train_gen *g) { idlist_destroy(&((struct eval_acc *)g)->kept); }

static int eval_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int keep = param_choice(p, "keep", "logits|preds", "eval_accumulate", err);
  if (keep < 0) return -1;
  int64_t every, batches;
  if (param_int_in(p, "eval_every", 1, 10000000, &every, "eval_accumulate", err) ||
      param_int_in(p, "eval_batches", 1, 100000, &batches, "eval_accumulate", err))
    return -1;
  if (train_gen_open(st, sizeof(struct eval_acc), p, ctx, MODEL_GPT, (struct model_opts){0}, "eval_accumulate", err))
    return -1;
  struct eval_acc *e = *st;
  e->every = (uint64_t)every;
  e->batches = (uint64_t)batches;
  e->keep_preds = keep == 1;
  e->g.iteration = eval_iteration;
  e->g.restart = eval_restart;
  e->g.cleanup = eval_cleanup;
  return 0;
}

SYNTH_WORKLOAD(eval_accumulate,
               "GPT training with no_grad validation passes that keep every batch's outputs on the GPU, then cat and free them",
               eval_params, eval_open);
