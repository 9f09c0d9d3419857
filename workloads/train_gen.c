/* train_gen.c - the shared generator skeleton: parameters, iterations, teardown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train_gen.h"

int param_choice(const struct params *p, const char *key, const char *choices, const char *owner, char *err) {
  const char *v = param_str(p, key);
  int i = params_word_index(choices, v);
  if (i >= 0) return i;
  snprintf(err, FB_ERRLEN, "%s: parameter '%s=%s': expected one of %s", owner, key, v, choices);
  return -1;
}

static int has_key(const struct params *p, const char *key) {
  for (const struct param_spec *s = p->spec; s && s->key; s++)
    if (!strcmp(s->key, key)) return 1;
  return 0;
}

static int train_gen_fill(struct synth *s, char *err) {
  (void)err;
  struct train_gen *g = (struct train_gen *)s;
  if (!g->started) {
    model_alloc_params(&g->m);
    if (g->setup) g->setup(g);
    g->started = 1;
  } else if (g->iter < g->iters) {
    g->iteration(g);
    evq_mark(&s->q, OP_ITER);
    g->iter++;
  } else {
    if (g->finish) g->finish(g);
    model_teardown(&g->m);
    s->done = 1;
  }
  return 0;
}

void train_gen_accum_step(struct train_gen *g) {
  struct model *m = &g->m;
  uint64_t batch = m->batch, seq = m->seq, chunk = (batch + g->accum - 1) / g->accum;
  model_zero_grad(m);
  model_new_batch(m);
  for (uint64_t done = 0; done < batch; done += chunk) {
    model_set_step(m, batch - done < chunk ? batch - done : chunk, seq);
    model_forward(m, 1);
    uint64_t scaled = evq_alloc(m->q, m->o.amp ? 4 : m->adt);   /* loss / accum */
    model_backward(m);
    evq_free(m->q, scaled);
    model_drop_outputs(m);   /* `del logits, loss` */
  }
  model_set_step(m, batch, seq);
  model_optimizer_step(m);
}

void train_gen_step(struct train_gen *g) {
  if (g->accum > 1 || g->m.sh.arch == ARCH_GPT) train_gen_accum_step(g);   /* torch_jobs.py's loop */
  else model_train_step(&g->m);
}

static void train_gen_reset(struct synth *s) {
  struct train_gen *g = (struct train_gen *)s;
  g->iter = 0;
  g->started = 0;
  model_reset(&g->m);
  if (g->restart) g->restart(g);
}

static void train_gen_destroy(struct synth *s) {
  struct train_gen *g = (struct train_gen *)s;
  if (g->cleanup) g->cleanup(g);
  model_destroy(&g->m);
}

int train_gen_open(void **st, size_t size, const struct params *p, const struct workload_ctx *ctx,
                   enum model_kind kind, struct model_opts o, const char *owner, char *err) {
  struct model_shape sh;
  if (model_shape_read(p, kind, NULL, &sh, owner, err)) return -1;
  if (has_key(p, "set_to_none")) o.set_to_none = param_bool(p, "set_to_none");
  if (has_key(p, "arch")) {
    int a = param_choice(p, "arch", "encoder|gpt", owner, err);
    if (a < 0) return -1;
    sh.arch = a == 1 ? ARCH_GPT : ARCH_ENCODER;
    uint64_t longest = sh.seq;
    if (has_key(p, "seq_max") && (uint64_t)param_int(p, "seq_max") > longest) longest = (uint64_t)param_int(p, "seq_max");
    sh.pos_rows = longest > 1024 ? longest : 1024;   /* nn.Embedding(max(seq, 1024), d) */
  }
  if (has_key(p, "ckpt")) {
    int64_t n;
    if (param_int_in(p, "ckpt", 0, 4096, &n, owner, err)) return -1;
    o.ckpt_nth = (uint64_t)n;
  }
  if (has_key(p, "amp")) {
    int a = param_choice(p, "amp", "off|bf16|fp16|none", owner, err);
    if (a < 0) return -1;
    o.amp = a == 1 ? 2 : a == 2 ? 1 : 0;
  }
  int64_t accum = 1;
  if (has_key(p, "accum") && param_int_in(p, "accum", 1, 4096, &accum, owner, err)) return -1;
  if (has_key(p, "attention")) {
    int a = param_choice(p, "attention", "sdpa|math", owner, err);
    if (a < 0) return -1;
    o.attn_math = a == 1;
  }
  if (ctx && ctx->world > 0 && (ctx->rank < 0 || ctx->rank >= ctx->world)) {
    snprintf(err, FB_ERRLEN, "%s: rank %d is not in 0..world-1 (world %d)", owner, ctx->rank, ctx->world);
    return -1;
  }
  struct train_gen *g = calloc(1, size);
  if (!g) {
    snprintf(err, FB_ERRLEN, "%s: out of host memory", owner);
    return -1;
  }
  g->s.q.next_id = 1;
  g->s.fill = train_gen_fill;
  g->s.reset = train_gen_reset;
  g->s.destroy = train_gen_destroy;
  g->iteration = train_gen_step;
  g->rank = ctx ? ctx->rank : 0;
  g->world = ctx && ctx->world > 0 ? ctx->world : 1;
  g->seed = ctx ? ctx->seed : 0;
  g->iters = sh.iters;
  g->accum = (uint64_t)accum;
  if (model_init(&g->m, &sh, &o, &g->s.q, owner, err)) {
    free(g);
    return -1;
  }
  *st = g;
  return 0;
}
