/* transformer_block.c - one pre-LN transformer block's forward and backward as the
 * allocations PyTorch makes for it (nn.TransformerEncoderLayer, norm_first, batch_first,
 * relu, dropout 0), the sequence read off the gpt_train snapshot; see train_model.h.
 * Sizes: U = batch*seq*hidden, F = batch*seq*ffn, scores = batch*heads*seq*seq elements.
 * ARCH_GPT's block (torch_jobs.py's decoder) is at the end of the file. */
#include "train_model.h"

struct block_sizes { uint64_t u_a, u_r, f_a, stats, lse, scores; };

static struct block_sizes sizes_of(const struct model *m) {
  struct block_sizes z;
  uint64_t B = m->batch, S = m->seq, H = m->sh.hidden;
  z.u_a = m->rows * H * m->adt;
  z.u_r = m->rows * H * m->rdt;
  z.f_a = m->rows * m->sh.ffn * m->adt;
  z.stats = m->rows * 4;                      /* LayerNorm mean/rstd are fp32 */
  z.lse = B * m->sh.heads * S * 4;            /* SDPA logsumexp, fp32 */
  z.scores = B * m->sh.heads * S * S * m->adt;
  return z;
}

static uint64_t A(struct model *m, uint64_t bytes) { return evq_alloc(m->q, bytes); }
static void Fr(struct model *m, uint64_t id) { evq_free(m->q, id); }

static void save(struct model *m, struct block_rec *r, int slot, uint64_t bytes) {
  r->id[slot] = A(m, bytes);
  r->size[slot] = bytes;
}
/* the forward's last use of a saved tensor: under grad it stays for backward */
static void done(struct model *m, struct block_rec *r, int slot, enum fwd_mode mode) {
  if (mode == FWD_GRAD) return;
  Fr(m, r->id[slot]);
  r->id[slot] = 0;
  if (mode == FWD_NOGRAD) r->size[slot] = 0;   /* PACK keeps the size: re-created before backward */
}
/* backward released the saved tensor */
static void drop(struct model *m, struct block_rec *r, int slot) {
  Fr(m, r->id[slot]);
  r->id[slot] = 0;
  r->size[slot] = 0;
}

/* autocast's low-precision copy of a weight: saved by the linear under grad, otherwise
 * only in autocast's cache until the autocast region exits */
static void cast_weight(struct model *m, struct block_rec *r, int slot, uint64_t p, enum fwd_mode mode) {
  if (!m->o.amp) return;
  uint64_t bytes = model_param_numel(&m->sh, p) * m->adt;
  if (mode == FWD_GRAD) {
    save(m, r, slot, bytes);
    return;
  }
  if (idlist_push(&m->cast_cache, A(m, bytes))) m->q->oom = 1;
  if (mode == FWD_PACK) r->size[slot] = bytes;
}
static void cast_bias(struct model *m, uint64_t p) {
  if (m->o.amp && idlist_push(&m->cast_cache, A(m, model_param_numel(&m->sh, p) * m->adt))) m->q->oom = 1;
}

/* fc2 (its weight cast under amp), the activation fc2 read and both weights done, then the
 * second residual: the block's output. Both block shapes end so. */
static uint64_t fc2_and_residual(struct model *m, struct block_rec *r, uint64_t P, const struct block_sizes *z,
                                 enum fwd_mode mode, int act) {
  cast_weight(m, r, SV_W_FC2, P + BP_FC2_W, mode);
  cast_bias(m, P + BP_FC2_B);
  uint64_t mlp = A(m, z->u_a);
  done(m, r, act, mode);
  done(m, r, SV_W_FC1, mode);
  done(m, r, SV_W_FC2, mode);
  uint64_t out = A(m, z->u_r);
  Fr(m, mlp);
  done(m, r, SV_RES1, mode);
  return out;
}

uint64_t model_block_forward(struct model *m, uint64_t layer, enum fwd_mode mode, int keep_input) {
  if (m->sh.arch == ARCH_GPT) return gpt_block_forward(m, layer, mode, keep_input);
  struct block_sizes z = sizes_of(m);
  struct block_rec *r = &m->rec[layer];
  uint64_t P = model_block_param(layer, 0);

  uint64_t ln1 = A(m, z.u_r);
  save(m, r, SV_LN1_MEAN, z.stats);
  save(m, r, SV_LN1_RSTD, z.stats);
  done(m, r, SV_LN1_MEAN, mode);
  done(m, r, SV_LN1_RSTD, mode);
  save(m, r, SV_QKV_IN, z.u_a);
  cast_weight(m, r, SV_W_QKV, P + BP_QKV_W, mode);
  cast_bias(m, P + BP_QKV_B);
  uint64_t proj3 = A(m, 3 * z.u_a);
  save(m, r, SV_QKV, 3 * z.u_a);           /* heads-major contiguous q, k, v */
  Fr(m, proj3);
  done(m, r, SV_QKV_IN, mode);
  if (m->o.attn_math) {
    uint64_t scores = A(m, z.scores);
    save(m, r, SV_PROBS, z.scores);
    Fr(m, scores);
    save(m, r, SV_ATTN, z.u_a);
    done(m, r, SV_PROBS, mode);
  } else {
    save(m, r, SV_ATTN, z.u_a);
    save(m, r, SV_LSE, z.lse);
  }
  done(m, r, SV_QKV, mode);
  save(m, r, SV_ATTN_T, z.u_a);
  done(m, r, SV_ATTN, mode);
  done(m, r, SV_LSE, mode);
  cast_weight(m, r, SV_W_OUT, P + BP_OUT_W, mode);
  cast_bias(m, P + BP_OUT_B);
  uint64_t proj = A(m, z.u_a);
  done(m, r, SV_ATTN_T, mode);
  done(m, r, SV_W_QKV, mode);
  done(m, r, SV_W_OUT, mode);
  Fr(m, ln1);
  save(m, r, SV_RES1, z.u_r);
  Fr(m, proj);
  if (!keep_input) done(m, r, SV_X_IN, mode);

  uint64_t ln2 = A(m, z.u_r);
  save(m, r, SV_LN2_MEAN, z.stats);
  save(m, r, SV_LN2_RSTD, z.stats);
  done(m, r, SV_LN2_MEAN, mode);
  done(m, r, SV_LN2_RSTD, mode);
  if (m->o.amp) {
    save(m, r, SV_FC1_IN, z.u_a);
    Fr(m, ln2);
  } else {
    r->id[SV_FC1_IN] = ln2;
    r->size[SV_FC1_IN] = z.u_r;
  }
  cast_weight(m, r, SV_W_FC1, P + BP_FC1_W, mode);
  cast_bias(m, P + BP_FC1_B);
  uint64_t h = A(m, z.f_a);
  save(m, r, SV_ACT, z.f_a);
  Fr(m, h);
  done(m, r, SV_FC1_IN, mode);
  return fc2_and_residual(m, r, P, &z, mode, SV_ACT);
}

uint64_t model_linear_backward(struct model *m, uint64_t rows, uint64_t in, uint64_t out, uint64_t pw, int has_bias,
                         int need_grad_input, int bias_workspace) {
  uint64_t gin = need_grad_input ? A(m, rows * in * m->adt) : 0;
  for (uint64_t p = pw; p <= pw + (has_bias ? 1 : 0); p++) {
    uint64_t low = m->o.amp ? A(m, model_param_numel(&m->sh, p) * m->adt) : 0;
    model_grad_produce(m, p);
    Fr(m, low);
  }
  if (has_bias && bias_workspace) {
    uint64_t ws = A(m, rows * out * m->adt), sem = A(m, 4 * ((out + 127) / 128));
    Fr(m, sem);
    Fr(m, ws);
  }
  return gin;
}

/* the block's output gradient arrives in m->gres; LayerNorm backward's input gradient is
 * accumulated into it (in place unless the buffer is shared) */
static void accumulate_residual(struct model *m, uint64_t gx, uint64_t bytes) {
  if (m->gres_shared) {
    uint64_t sum = A(m, bytes);
    Fr(m, m->gres);
    m->gres = sum;
    m->gres_shared = 0;
  }
  Fr(m, gx);
}

void model_block_backward(struct model *m, uint64_t layer) {
  if (m->sh.arch == ARCH_GPT) {
    gpt_block_backward(m, layer);
    return;
  }
  struct block_sizes z = sizes_of(m);
  struct block_rec *r = &m->rec[layer];
  uint64_t P = model_block_param(layer, 0), H = m->sh.hidden, FF = m->sh.ffn, rows = m->rows;

  /* MLP: linear2, relu, linear1, LayerNorm 2 */
  uint64_t gm = m->o.amp ? A(m, z.u_a) : 0;          /* grad cast to the branch's dtype */
  uint64_t ga = model_linear_backward(m, rows, FF, H, P + BP_FC2_W, 1, 1, 1);
  Fr(m, gm);
  drop(m, r, SV_W_FC2);
  uint64_t gh = A(m, z.f_a);
  Fr(m, ga);
  drop(m, r, SV_ACT);
  uint64_t gl = model_linear_backward(m, rows, H, FF, P + BP_FC1_W, 1, 1, 1);
  Fr(m, gh);
  drop(m, r, SV_FC1_IN);
  drop(m, r, SV_W_FC1);
  if (m->o.amp) {
    uint64_t g32 = A(m, z.u_r);
    Fr(m, gl);
    gl = g32;
  }
  uint64_t gx = A(m, z.u_r);
  model_grad_produce(m, P + BP_LN2_W);
  model_grad_produce(m, P + BP_LN2_B);
  Fr(m, gl);
  drop(m, r, SV_RES1);
  drop(m, r, SV_LN2_MEAN);
  drop(m, r, SV_LN2_RSTD);
  accumulate_residual(m, gx, z.u_r);

  /* attention: out_proj, attention kernel, q/k/v regrouping, in_proj, LayerNorm 1 */
  uint64_t gt = A(m, z.u_a);
  uint64_t gi = model_linear_backward(m, rows, H, H, P + BP_OUT_W, 1, 1, 1);
  Fr(m, gt);
  drop(m, r, SV_ATTN_T);
  drop(m, r, SV_W_OUT);
  uint64_t go = A(m, z.u_a);
  Fr(m, gi);
  uint64_t dq, dk, dv;
  if (m->o.attn_math) {
    uint64_t gp = A(m, z.scores), gs = A(m, z.scores);
    Fr(m, gp);
    drop(m, r, SV_PROBS);
    dq = A(m, z.u_a), dk = A(m, z.u_a), dv = A(m, z.u_a);
    Fr(m, gs);
  } else {
    dq = A(m, z.u_a), dk = A(m, z.u_a), dv = A(m, z.u_a);
    uint64_t delta = A(m, z.lse), ws = A(m, z.u_a + z.stats);
    Fr(m, delta);
    Fr(m, ws);
  }
  Fr(m, go);
  drop(m, r, SV_QKV);
  drop(m, r, SV_LSE);
  drop(m, r, SV_ATTN);
  uint64_t gqkv = A(m, 3 * z.u_a);
  Fr(m, dq);
  Fr(m, dk);
  Fr(m, dv);
  uint64_t gin = model_linear_backward(m, rows, H, 3 * H, P + BP_QKV_W, 1, 1, 1);
  Fr(m, gqkv);
  drop(m, r, SV_QKV_IN);
  drop(m, r, SV_W_QKV);
  if (m->o.amp) {
    uint64_t g32 = A(m, z.u_r);
    Fr(m, gin);
    gin = g32;
  }
  gx = A(m, z.u_r);
  model_grad_produce(m, P + BP_LN1_W);
  model_grad_produce(m, P + BP_LN1_B);
  uint64_t tmp = A(m, z.u_r);
  Fr(m, tmp);
  Fr(m, gin);
  drop(m, r, SV_X_IN);
  drop(m, r, SV_LN1_MEAN);
  drop(m, r, SV_LN1_RSTD);
  accumulate_residual(m, gx, z.u_r);
}

/* ---- ARCH_GPT: x + proj(sdpa(qkv(ln1(x)))), then + fc2(gelu(fc1(ln2(.)))) ----
 * No transposed copies: q/k/v are views of the packed qkv output, and the attention
 * output's memory is already (batch, seq, heads, dim), so proj reads it as it is. GELU
 * saves its input (fc1's output) and fc2 saves GELU's output: two ffn-wide tensors per
 * block where relu keeps one. Under autocast the LayerNorms and residual stay fp32 and
 * their outputs are cast for the linears. */
/* A LayerNorm whose output a linear reads: fp32 saved as the linear's input, or under amp
 * an fp32 output cast (the cast is what the linear saves); its mean and rstd kept while
 * the output is made, then done. */
static void layernorm_for_linear(struct model *m, struct block_rec *r, int in, int mean, int rstd,
                                 const struct block_sizes *z, enum fwd_mode mode) {
  uint64_t ln = 0;
  if (m->o.amp) ln = A(m, z->u_r);
  else save(m, r, in, z->u_r);
  save(m, r, mean, z->stats);
  save(m, r, rstd, z->stats);
  if (ln) {
    save(m, r, in, z->u_a);
    Fr(m, ln);
  }
  done(m, r, mean, mode);
  done(m, r, rstd, mode);
}

uint64_t gpt_block_forward(struct model *m, uint64_t layer, enum fwd_mode mode, int keep_input) {
  struct block_sizes z = sizes_of(m);
  struct block_rec *r = &m->rec[layer];
  uint64_t P = model_block_param(layer, 0);

  layernorm_for_linear(m, r, SV_QKV_IN, SV_LN1_MEAN, SV_LN1_RSTD, &z, mode);
  cast_weight(m, r, SV_W_QKV, P + BP_QKV_W, mode);
  cast_bias(m, P + BP_QKV_B);
  save(m, r, SV_QKV, 3 * z.u_a);
  done(m, r, SV_QKV_IN, mode);
  save(m, r, SV_ATTN, z.u_a);
  save(m, r, SV_LSE, z.lse);
  done(m, r, SV_QKV, mode);
  cast_weight(m, r, SV_W_OUT, P + BP_OUT_W, mode);
  cast_bias(m, P + BP_OUT_B);
  uint64_t proj = A(m, z.u_a);
  done(m, r, SV_ATTN, mode);
  done(m, r, SV_LSE, mode);
  done(m, r, SV_W_QKV, mode);
  done(m, r, SV_W_OUT, mode);
  save(m, r, SV_RES1, z.u_r);   /* x + proj: LayerNorm 2's input, and the second residual's */
  Fr(m, proj);
  if (!keep_input) done(m, r, SV_X_IN, mode);

  layernorm_for_linear(m, r, SV_FC1_IN, SV_LN2_MEAN, SV_LN2_RSTD, &z, mode);
  cast_weight(m, r, SV_W_FC1, P + BP_FC1_W, mode);
  cast_bias(m, P + BP_FC1_B);
  save(m, r, SV_ACT, z.f_a);    /* fc1's output, GELU's input */
  done(m, r, SV_FC1_IN, mode);
  save(m, r, SV_GELU, z.f_a);
  done(m, r, SV_ACT, mode);
  return fc2_and_residual(m, r, P, &z, mode, SV_GELU);
}

/* a LayerNorm's backward into the residual gradient (amp: the linear's grad cast first) */
static void gpt_ln_backward(struct model *m, struct block_rec *r, uint64_t gl, int in, int mean, int rstd, uint64_t pw,
                            struct block_sizes *z) {
  if (m->o.amp) {
    uint64_t g32 = A(m, z->u_r);
    Fr(m, gl);
    gl = g32;
  }
  uint64_t gx = A(m, z->u_r);
  model_grad_produce(m, pw);
  model_grad_produce(m, pw + 1);
  Fr(m, gl);
  drop(m, r, in);
  drop(m, r, mean);
  drop(m, r, rstd);
  accumulate_residual(m, gx, z->u_r);
}

void gpt_block_backward(struct model *m, uint64_t layer) {
  struct block_sizes z = sizes_of(m);
  struct block_rec *r = &m->rec[layer];
  uint64_t P = model_block_param(layer, 0), H = m->sh.hidden, FF = m->sh.ffn, rows = m->rows;

  uint64_t gm = m->o.amp ? A(m, z.u_a) : 0;          /* the residual's grad cast for fc2 */
  uint64_t ga = model_linear_backward(m, rows, FF, H, P + BP_FC2_W, 1, 1, 1);
  Fr(m, gm);
  drop(m, r, SV_GELU);
  drop(m, r, SV_W_FC2);
  uint64_t gh = A(m, z.f_a);                          /* GELU backward */
  Fr(m, ga);
  drop(m, r, SV_ACT);
  uint64_t gl = model_linear_backward(m, rows, H, FF, P + BP_FC1_W, 1, 1, 1);
  Fr(m, gh);
  drop(m, r, SV_FC1_IN);
  drop(m, r, SV_W_FC1);
  gpt_ln_backward(m, r, gl, SV_RES1, SV_LN2_MEAN, SV_LN2_RSTD, P + BP_LN2_W, &z);

  uint64_t gt = m->o.amp ? A(m, z.u_a) : 0;
  uint64_t gi = model_linear_backward(m, rows, H, H, P + BP_OUT_W, 1, 1, 1);
  Fr(m, gt);
  drop(m, r, SV_W_OUT);
  /* attention backward: one packed q/k/v gradient (a view becomes qkv's output grad),
   * the softmax row sums, and the kernel's workspace (flash: an fp32 dq accumulator) */
  uint64_t gqkv = A(m, 3 * z.u_a), delta = A(m, z.lse);
  uint64_t ws = A(m, m->o.amp ? m->rows * H * 4 : z.u_a + z.stats);
  Fr(m, ws);
  Fr(m, delta);
  Fr(m, gi);
  drop(m, r, SV_QKV);
  drop(m, r, SV_LSE);
  drop(m, r, SV_ATTN);
  uint64_t gin = model_linear_backward(m, rows, H, 3 * H, P + BP_QKV_W, 1, 1, 1);
  Fr(m, gqkv);
  drop(m, r, SV_QKV_IN);
  drop(m, r, SV_W_QKV);
  gpt_ln_backward(m, r, gin, SV_X_IN, SV_LN1_MEAN, SV_LN1_RSTD, P + BP_LN1_W, &z);
}
