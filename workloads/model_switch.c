/* model_switch.c - `model_switch`: one process trains model A, deletes it (parameters,
 * gradients, optimizer states, everything), calls torch.cuda.empty_cache(), then trains
 * model B of another shape: a notebook or a hyper-parameter sweep. What the allocator
 * cached for A's sizes should go back to the device and B's sizes be served afresh. B
 * takes the b_* keys and shares vocab, batch, seq, dtype and optimizer with A. */
#include "train_gen.h"

static const struct param_spec model_switch_params[] = {
  MODEL_GPT_PARAMS("6"),
  TRAIN_STEP_PARAMS,
  {"b_layers", P_INT, "4", "model B: transformer blocks"},
  {"b_hidden", P_INT, "1536", "model B: width"},
  {"b_heads", P_INT, "16", "model B: attention heads"},
  {"b_ffn", P_INT, "6144", "model B: MLP inner width"},
  {"b_iters", P_INT, "6", "model B: training iterations"},
  {NULL, 0, NULL, NULL},
};

struct model_switch {
  struct train_gen g;   /* model A */
  struct model b;
  int phase;            /* 0 A's parameters, 1 A training, 2 B training */
  uint64_t b_iter;
};

static int model_switch_fill(struct synth *s, char *err) {
  (void)err;
  struct model_switch *w = (struct model_switch *)s;
  struct train_gen *g = &w->g;
  if (w->phase == 0) {
    model_alloc_params(&g->m);
    w->phase = 1;
  } else if (w->phase == 1 && g->iter < g->iters) {
    model_train_step(&g->m);
    evq_mark(&s->q, OP_ITER);
    g->iter++;
  } else if (w->phase == 1) {
    model_teardown(&g->m);
    evq_mark(&s->q, OP_EMPTY_CACHE);
    model_alloc_params(&w->b);
    w->phase = 2;
  } else if (w->b_iter < w->b.sh.iters) {
    model_train_step(&w->b);
    evq_mark(&s->q, OP_ITER);
    w->b_iter++;
  } else {
    model_teardown(&w->b);
    s->done = 1;
  }
  return 0;
}

static void model_switch_restart(struct train_gen *g) {
  struct model_switch *w = (struct model_switch *)g;
  w->phase = 0;
  w->b_iter = 0;
  model_reset(&w->b);
}

static void model_switch_cleanup(struct train_gen *g) { model_destroy(&((struct model_switch *)g)->b); }

static int model_switch_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  struct model_shape b;
  if (model_shape_read(p, MODEL_GPT, "b_", &b, "model_switch", err)) return -1;
  if (train_gen_open(st, sizeof(struct model_switch), p, ctx, MODEL_GPT, (struct model_opts){0}, "model_switch", err))
    return -1;
  struct model_switch *w = *st;
  if (model_init(&w->b, &b, &w->g.m.o, &w->g.s.q, "model_switch", err)) {
    synth_close(w);
    *st = NULL;
    return -1;
  }
  w->g.s.fill = model_switch_fill;
  w->g.restart = model_switch_restart;
  w->g.cleanup = model_switch_cleanup;
  return 0;
}

SYNTH_WORKLOAD(model_switch,
               "train GPT A, free it, empty_cache, train GPT B of another shape",
               model_switch_params, model_switch_open);
