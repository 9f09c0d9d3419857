/* train_model.c - the model-level parts of a training step: parameters, gradients,
 * the script's references, embedding, LM head / MLP layers, cross entropy, backward
 * order (checkpoint recomputation, save_on_cpu unpacking), optimizer states, autocast's
 * cache and GradScaler. The transformer block itself is in transformer_block.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train_model.h"

static uint64_t A(struct model *m, uint64_t bytes) { return evq_alloc(m->q, bytes); }
static void release(struct model *m, uint64_t *id) { evq_release(m->q, id); }

int model_init(struct model *m, const struct model_shape *sh, const struct model_opts *o, struct evq *q,
               const char *owner, char *err) {
  memset(m, 0, sizeof *m);
  m->sh = *sh;
  m->o = *o;
  m->q = q;
  m->pdt = sh->dtype_bytes;
  m->rdt = m->pdt;                       /* residual stream: the embedding's dtype */
  m->adt = o->amp ? 2 : m->pdt;
  m->np = model_param_count(sh);
  uint64_t **arrays[] = {&m->pbytes, &m->pid, &m->gid, &m->s1, &m->s2, &m->tmp};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    if (!(*arrays[i] = calloc(m->np, sizeof(uint64_t)))) goto oom;
  if (!(m->rec = calloc(sh->layers, sizeof *m->rec))) goto oom;
  for (uint64_t p = 0; p < m->np; p++) m->pbytes[p] = model_param_numel(sh, p) * m->pdt;
  model_set_step(m, sh->batch, sh->seq);
  return 0;
oom:
  model_destroy(m);
  snprintf(err, FB_ERRLEN, "%s: out of host memory for a %llu-layer model", owner, (unsigned long long)sh->layers);
  return -1;
}

void model_reset(struct model *m) {
  size_t n = m->np * sizeof(uint64_t);
  memset(m->pid, 0, n);
  memset(m->gid, 0, n);
  memset(m->s1, 0, n);
  memset(m->s2, 0, n);
  memset(m->tmp, 0, n);
  memset(m->rec, 0, m->sh.layers * sizeof *m->rec);
  memset(&m->out, 0, sizeof m->out);
  m->head_in = m->head_w = m->logp = m->total_weight = m->seed = m->scaled_loss = m->gres = 0;
  m->lnf_in = m->lnf_mean = m->lnf_rstd = 0;
  m->gres_shared = 0;
  m->cast_cache.n = 0;
  m->scaler_scale = m->scaler_tracker = 0;
  m->states_ready = 0;
  model_set_step(m, m->sh.batch, m->sh.seq);
}

void model_destroy(struct model *m) {
  free(m->pbytes);
  free(m->pid);
  free(m->gid);
  free(m->s1);
  free(m->s2);
  free(m->tmp);
  free(m->rec);
  idlist_destroy(&m->cast_cache);
  m->pbytes = m->pid = m->gid = m->s1 = m->s2 = m->tmp = NULL;
  m->rec = NULL;
}

void model_set_step(struct model *m, uint64_t batch, uint64_t seq) {
  m->batch = batch;
  m->seq = m->sh.kind == MODEL_MLP ? 1 : seq;
  m->rows = m->batch * m->seq;
}

uint64_t model_act_bytes(const struct model *m) { return m->rows * m->sh.hidden * m->adt; }

uint64_t model_param_bytes(const struct model *m) {
  uint64_t n = 0;
  for (uint64_t p = 0; p < m->np; p++) n += m->pbytes[p];
  return n;
}

static void hook_enter(struct model *m, uint64_t unit, int bwd) {
  if (m->h.unit_enter) m->h.unit_enter(m->h.ctx, m, unit, bwd);
}
static void hook_leave(struct model *m, uint64_t unit, int bwd) {
  if (m->h.unit_leave) m->h.unit_leave(m->h.ctx, m, unit, bwd);
}

void model_alloc_params(struct model *m) {
  if (m->o.params_offloaded) return;
  for (uint64_t p = 0; p < m->np; p++) m->pid[p] = A(m, m->pbytes[p]);
}

void model_zero_grad(struct model *m) {
  if (!m->o.set_to_none) return;   /* zeroed in place: nothing allocated or freed */
  for (uint64_t p = 0; p < m->np; p++) release(m, &m->gid[p]);
}

/* AccumulateGrad: the first gradient becomes .grad; later ones are added in place */
void model_grad_produce(struct model *m, uint64_t p) {
  if (m->gid[p]) {
    uint64_t t = A(m, m->pbytes[p]);
    evq_free(m->q, t);
  } else {
    m->gid[p] = A(m, m->pbytes[p]);
  }
  if (m->h.grad_ready) m->h.grad_ready(m->h.ctx, m, p);
}

/* assignment in the script: the new object exists before the old reference drops */
static void replace(struct model *m, uint64_t *ref, uint64_t bytes) {
  uint64_t n = A(m, bytes);
  release(m, ref);
  *ref = n;
}

void model_new_batch(struct model *m) {
  int gpt = m->sh.kind == MODEL_GPT;
  replace(m, &m->out.inputs, gpt ? m->rows * 8 : m->batch * m->sh.hidden * m->pdt);
  replace(m, &m->out.targets, m->rows * 8);
}

void model_drop_outputs(struct model *m) {
  release(m, &m->out.logits);
  release(m, &m->out.loss);
}

void model_release_outputs(struct model *m) {
  model_drop_outputs(m);
  release(m, &m->out.inputs);
  release(m, &m->out.targets);
}

static uint64_t loss_dt(const struct model *m) { return m->o.amp ? 4 : m->adt; }

/* F.cross_entropy = log_softmax + nll_loss (autocast runs both in fp32) */
static void loss_forward(struct model *m, uint64_t logits, int grad) {
  uint64_t V = m->sh.vocab, ldt = loss_dt(m);
  uint64_t up = m->o.amp ? A(m, m->rows * V * 4) : 0;
  m->logp = A(m, m->rows * V * ldt);
  release(m, &up);
  uint64_t loss = A(m, ldt);
  m->total_weight = A(m, ldt);
  if (!grad) {
    release(m, &m->logp);
    release(m, &m->total_weight);
  }
  release(m, &m->out.logits);
  m->out.logits = logits;
  release(m, &m->out.loss);
  m->out.loss = loss;
  if (grad && m->o.amp == 1) {   /* GradScaler: scale and growth tracker, then scale(loss) */
    if (!m->scaler_scale) {
      m->scaler_scale = A(m, 4);
      m->scaler_tracker = A(m, 4);
    }
    m->scaled_loss = A(m, 4);
  }
}

static uint64_t gpt_forward(struct model *m, int grad) {
  uint64_t L = m->sh.layers, H = m->sh.hidden, V = m->sh.vocab, u_r = m->rows * H * m->rdt;
  enum fwd_mode mode = !grad ? FWD_NOGRAD : m->o.pack_activations ? FWD_PACK : FWD_GRAD;
  hook_enter(m, 0, 0);
  uint64_t x = A(m, u_r);
  if (m->sh.arch == ARCH_GPT) {   /* emb(idx) + pos(arange(seq)) */
    uint64_t ar = A(m, m->seq * 8), pos = A(m, m->seq * H * m->rdt), sum = A(m, u_r);
    release(m, &x);
    release(m, &pos);
    release(m, &ar);
    x = sum;
  }
  hook_leave(m, 0, 0);
  for (uint64_t l = 0; l < L; l++) {
    memset(&m->rec[l], 0, sizeof m->rec[l]);
    m->rec[l].id[SV_X_IN] = x;
    m->rec[l].size[SV_X_IN] = u_r;
    enum fwd_mode lm = mode;
    int keep = 0;
    if (grad && m->o.ckpt_every) {   /* checkpointed: only each segment's input survives */
      lm = FWD_NOGRAD;
      keep = l % m->o.ckpt_every == 0;
    }
    if (grad && m->o.ckpt_nth && l % m->o.ckpt_nth == 0) {   /* this block alone checkpointed */
      lm = FWD_NOGRAD;
      keep = 1;
    }
    hook_enter(m, l + 1, 0);
    x = model_block_forward(m, l, lm, keep);
    hook_leave(m, l + 1, 0);
  }
  hook_enter(m, L + 1, 0);
  if (m->sh.arch == ARCH_GPT) {   /* the final LayerNorm: its input, mean, rstd saved */
    uint64_t y = A(m, u_r), mean = A(m, m->rows * 4), rstd = A(m, m->rows * 4);
    if (grad) {
      m->lnf_in = x, m->lnf_mean = mean, m->lnf_rstd = rstd;
    } else {
      release(m, &mean);
      release(m, &rstd);
      evq_free(m->q, x);
    }
    x = y;
  }
  uint64_t in = x;
  if (m->o.amp) {
    in = A(m, m->rows * H * m->adt);
    evq_free(m->q, x);
    uint64_t w = A(m, V * H * m->adt);
    if (grad) m->head_w = w;
    else if (idlist_push(&m->cast_cache, w)) m->q->oom = 1;
  }
  uint64_t logits = A(m, m->rows * V * m->adt);
  if (grad) m->head_in = in;
  else evq_free(m->q, in);
  hook_leave(m, L + 1, 0);
  return logits;
}

static uint64_t mlp_forward(struct model *m, int grad) {
  uint64_t L = m->sh.layers, H = m->sh.hidden, prev = 0;
  for (uint64_t l = 0;; l++) {
    memset(&m->rec[l], 0, sizeof m->rec[l]);
    hook_enter(m, l, 0);
    uint64_t out = A(m, m->batch * (l + 1 == L ? m->sh.vocab : H) * m->adt);
    if (l + 1 == L) {
      evq_free(m->q, prev);
      hook_leave(m, l, 0);
      return out;
    }
    uint64_t act = A(m, m->batch * H * m->adt);   /* relu saves its output */
    evq_free(m->q, out);
    if (grad) m->rec[l].id[SV_ACT] = act;
    else {
      evq_free(m->q, prev);
      prev = act;
    }
    hook_leave(m, l, 0);
  }
}

void model_forward(struct model *m, int grad) {
  uint64_t logits = m->sh.kind == MODEL_GPT ? gpt_forward(m, grad) : mlp_forward(m, grad);
  loss_forward(m, logits, grad);
  idlist_free_all(&m->cast_cache, m->q);   /* autocast region exits */
}

/* torch.utils.checkpoint: rerun the segment's forward with grad, from its saved input */
static void recompute_segment(struct model *m, uint64_t first, uint64_t last) {
  uint64_t x = m->rec[first].id[SV_X_IN], u_r = m->rows * m->sh.hidden * m->rdt;
  for (uint64_t l = first; l <= last; l++) {
    memset(&m->rec[l], 0, sizeof m->rec[l]);
    m->rec[l].id[SV_X_IN] = x;
    m->rec[l].size[SV_X_IN] = u_r;
    x = model_block_forward(m, l, FWD_GRAD, 0);
  }
  evq_free(m->q, x);                       /* the segment's output is not needed again */
  idlist_free_all(&m->cast_cache, m->q);
}

/* save_on_cpu: the block's saved tensors come back to the GPU */
static void unpack_saved(struct model *m, struct block_rec *r) {
  for (int s = 0; s < SV_SLOTS; s++)
    if (r->size[s] && !r->id[s]) r->id[s] = A(m, r->size[s]);
}

static void embedding_backward(struct model *m) {
  uint64_t n = m->rows * 8;   /* int64 index sort temporaries */
  uint64_t sorted = A(m, n), perm = A(m, n), t = A(m, n);
  release(m, &t);
  model_grad_produce(m, 0);
  uint64_t counts = A(m, n);
  release(m, &counts);
  release(m, &perm);
  release(m, &sorted);
  if (m->sh.arch == ARCH_GPT) {   /* the position embedding's gradient, indexed by arange(seq) */
    uint64_t k = m->seq * 8, s2 = A(m, k), p2 = A(m, k);
    model_grad_produce(m, model_pos_param(&m->sh));
    release(m, &p2);
    release(m, &s2);
  }
}

static void gpt_backward(struct model *m, uint64_t glog) {
  uint64_t L = m->sh.layers, H = m->sh.hidden, every = m->o.ckpt_every;
  hook_enter(m, L + 1, 1);
  uint64_t gin = model_linear_backward(m, m->rows, H, m->sh.vocab, m->np - 1, 0, 1, 0);
  release(m, &glog);
  release(m, &m->head_in);
  release(m, &m->head_w);
  if (m->o.amp) {
    uint64_t g32 = A(m, m->rows * H * m->rdt);
    release(m, &gin);
    gin = g32;
  }
  m->gres = gin;
  m->gres_shared = 1;   /* a view of the LM head's output gradient */
  if (m->sh.arch == ARCH_GPT) {   /* the final LayerNorm's backward */
    uint64_t gx = A(m, m->rows * H * m->rdt), pw = model_pos_param(&m->sh) + 1;
    model_grad_produce(m, pw);
    model_grad_produce(m, pw + 1);
    release(m, &gin);
    release(m, &m->lnf_in);
    release(m, &m->lnf_mean);
    release(m, &m->lnf_rstd);
    m->gres = gx;
    m->gres_shared = 0;
  }
  hook_leave(m, L + 1, 1);
  for (uint64_t l = L; l-- > 0;) {
    if (every && (l % every == every - 1 || l == L - 1)) recompute_segment(m, l - l % every, l);
    if (m->o.ckpt_nth && l % m->o.ckpt_nth == 0) recompute_segment(m, l, l);
    if (m->o.pack_activations) unpack_saved(m, &m->rec[l]);
    hook_enter(m, l + 1, 1);
    model_block_backward(m, l);
    hook_leave(m, l + 1, 1);
  }
  hook_enter(m, 0, 1);
  embedding_backward(m);
  hook_leave(m, 0, 1);
  release(m, &m->gres);
}

static void mlp_backward(struct model *m, uint64_t g) {
  uint64_t L = m->sh.layers, H = m->sh.hidden;
  for (uint64_t l = L; l-- > 0;) {
    hook_enter(m, l, 1);
    uint64_t gin = model_linear_backward(m, m->batch, H, l + 1 == L ? m->sh.vocab : H, 2 * l, 1, l > 0, 0);
    release(m, &g);
    if (l > 0) {   /* relu backward */
      g = A(m, m->batch * H * m->adt);
      release(m, &gin);
      release(m, &m->rec[l - 1].id[SV_ACT]);
    }
    hook_leave(m, l, 1);
  }
}

void model_backward(struct model *m) {
  if (m->o.zero_grad_late) model_zero_grad(m);
  uint64_t rows_v = m->rows * m->sh.vocab, ldt = loss_dt(m);
  m->seed = A(m, m->scaled_loss ? 4 : ldt);   /* ones_like(loss) */
  uint64_t glogp = A(m, rows_v * ldt);
  release(m, &m->total_weight);
  uint64_t glog = A(m, rows_v * ldt);
  release(m, &glogp);
  release(m, &m->logp);
  if (m->o.amp) {
    uint64_t g = A(m, rows_v * m->adt);
    release(m, &glog);
    glog = g;
  }
  if (m->sh.kind == MODEL_GPT) gpt_backward(m, glog);
  else mlp_backward(m, glog);
  release(m, &m->seed);
  release(m, &m->scaled_loss);
  if (m->h.backward_end) m->h.backward_end(m->h.ctx, m);
}

void model_optimizer_step(struct model *m) {
  if (m->scaler_scale) {   /* GradScaler.unscale_/step/update: found_inf, inv_scale */
    uint64_t found = A(m, 4), inv = A(m, 4);
    release(m, &inv);
    release(m, &found);
  }
  if (m->sh.optimizer == OPT_SGD) return;
  if (!m->states_ready) {
    for (uint64_t p = 0; p < m->np; p++) {
      m->s1[p] = A(m, m->pbytes[p]);   /* exp_avg */
      m->s2[p] = A(m, m->pbytes[p]);   /* exp_avg_sq */
    }
    m->states_ready = 1;
  }
  for (uint64_t p = 0; p < m->np; p++)   /* foreach: one temporary per parameter (all have grads) */
    m->tmp[p] = A(m, m->pbytes[p]);
  for (uint64_t p = 0; p < m->np; p++) release(m, &m->tmp[p]);
}

void model_train_step(struct model *m) {
  if (!m->o.zero_grad_late) model_zero_grad(m);
  model_new_batch(m);
  model_forward(m, 1);
  model_backward(m);
  model_optimizer_step(m);
  model_drop_outputs(m);
}

void model_teardown(struct model *m) {
  model_release_outputs(m);
  for (uint64_t l = 0; l < m->sh.layers; l++)
    for (int s = 0; s < SV_SLOTS; s++) release(m, &m->rec[l].id[s]);
  release(m, &m->head_in);
  release(m, &m->head_w);
  release(m, &m->logp);
  release(m, &m->total_weight);
  release(m, &m->gres);
  release(m, &m->lnf_in);
  release(m, &m->lnf_mean);
  release(m, &m->lnf_rstd);
  idlist_free_all(&m->cast_cache, m->q);
  for (uint64_t p = 0; p < m->np; p++) {
    release(m, &m->gid[p]);
    release(m, &m->s1[p]);
    release(m, &m->s2[p]);
  }
  for (uint64_t p = 0; p < m->np; p++) release(m, &m->pid[p]);
  release(m, &m->scaler_tracker);
  release(m, &m->scaler_scale);
  m->states_ready = 0;
}
