/* train_model.h - a PyTorch training step expressed as the allocations it makes: the
 * shared engine behind every synthetic generator. No numerics: only which tensors come
 * to exist, how big they are, and when the last reference to each goes away.
 *
 * What it models (eager PyTorch 2.x, read off the gpt_train and leaky_losses snapshots):
 *  - parameters allocated once; gradients allocated by AccumulateGrad on the first
 *    backward (or every step under zero_grad(set_to_none=True)), accumulated in place
 *    through a temporary otherwise;
 *  - GPT: token embedding, pre-LN transformer blocks as nn.TransformerEncoderLayer
 *    (batch_first, relu, no dropout) runs them: LayerNorm (output, mean, rstd), the
 *    batch-first transposed copy feeding in_proj, packed q/k/v, attention through SDPA's
 *    memory-efficient kernel (output + logsumexp) or the math path (scores and softmax
 *    batch*heads*seq*seq), out_proj, residual adds, linear1/relu/linear2; an untied LM head;
 *  - the tensors saved for backward per block, freed in reverse by backward, which
 *    creates gradient temporaries (grad inputs, split-K bias-gradient workspaces,
 *    attention-backward buffers) and accumulates the residual-stream gradient in place
 *    after the first block;
 *  - cross entropy as log_softmax + nll_loss (logits, log-probs, loss, total weight;
 *    backward: grad of the log-probs, grad of the logits);
 *  - the training script's own references: the batch, the logits and the loss live until
 *    the next step replaces them;
 *  - AdamW/Adam: exp_avg and exp_avg_sq per parameter at the first step, one temporary
 *    per parameter each step (the foreach implementation); SGD (momentum 0): nothing;
 *  - autocast (amp): fp32 master weights, per-forward low-precision weight copies held
 *    by autocast's cache and by autograd, fp32 residual stream (the embedding runs in
 *    fp32), LayerNorm and the loss in fp32, GradScaler's scalars for fp16;
 *  - checkpointing (only segment inputs kept, recomputation in backward), activation
 *    offload (torch.autograd.graph.save_on_cpu: saved tensors leave the GPU at their last
 *    forward use and come back before their backward), and hooks for data-parallel
 *    gradient buckets, ZeRO sharding and parameter offload. */
#ifndef FB_TRAIN_MODEL_H
#define FB_TRAIN_MODEL_H
#include <stdint.h>
#include "model_shape.h"
#include "synth.h"

/* a block's tensors saved for backward (by the op that saves them) */
enum saved_slot {
  SV_X_IN,        /* block input (LayerNorm 1 input) */
  SV_LN1_MEAN, SV_LN1_RSTD,
  SV_QKV_IN,      /* in_proj input: batch-first transposed copy (amp: the low-precision cast) */
  SV_QKV,         /* packed q, k, v */
  SV_PROBS,       /* math attention: softmax output */
  SV_ATTN, SV_LSE,/* attention output; SDPA logsumexp */
  SV_ATTN_T,      /* out_proj input */
  SV_RES1,        /* x + attention (LayerNorm 2 input) */
  SV_LN2_MEAN, SV_LN2_RSTD,
  SV_FC1_IN,      /* LayerNorm 2 output (amp: its low-precision cast) */
  SV_ACT,         /* relu output (MLP model: each hidden layer's) */
  SV_W_QKV, SV_W_OUT, SV_W_FC1, SV_W_FC2,   /* amp: low-precision weight copies */
  SV_GELU,        /* ARCH_GPT: GELU output (linear2's input); SV_ACT is then GELU's input */
  SV_SLOTS
};
struct block_rec { uint64_t id[SV_SLOTS], size[SV_SLOTS]; };

enum fwd_mode {
  FWD_GRAD,     /* saved tensors stay until backward */
  FWD_NOGRAD,   /* no_grad / checkpointed segment: each freed at its last forward use */
  FWD_PACK,     /* save_on_cpu: freed at last use, re-created before its backward */
};

struct model_opts {
  int amp;                  /* autocast: 0 off, 2 bf16, 1 fp16 (adds GradScaler) */
  int attn_math;            /* attention through the math path (materialized scores) */
  uint64_t ckpt_every;      /* checkpoint segments of this many blocks; 0 = none */
  uint64_t ckpt_nth;        /* checkpoint each block i with i % ckpt_nth == 0 on its own; 0 = none */
  int pack_activations;     /* save_on_cpu */
  int set_to_none;          /* zero_grad(set_to_none=True) (PyTorch's default) */
  int zero_grad_late;       /* zero_grad between forward and backward (else at the step's top) */
  int params_offloaded;     /* parameters live on the host; hooks stage them */
};

struct model;
/* units: GPT 0 = embedding, 1..layers = blocks, layers+1 = LM head; MLP: layer index */
struct model_hooks {
  void *ctx;
  void (*grad_ready)(void *ctx, struct model *m, uint64_t param);   /* after AccumulateGrad */
  void (*unit_enter)(void *ctx, struct model *m, uint64_t unit, int backward);
  void (*unit_leave)(void *ctx, struct model *m, uint64_t unit, int backward);
  void (*backward_end)(void *ctx, struct model *m);
};

/* what the training script holds between steps */
struct script_refs { uint64_t inputs, targets, logits, loss; };

struct model {
  struct model_shape sh;
  struct model_opts o;
  uint64_t pdt, adt, rdt;          /* bytes: parameters, matmul outputs, residual stream */
  struct evq *q;
  uint64_t np;                     /* parameter tensors */
  uint64_t *pbytes, *pid, *gid, *s1, *s2, *tmp;
  struct block_rec *rec;           /* per layer */
  uint64_t batch, seq, rows;       /* this step's shape */
  struct script_refs out;
  /* step-internal */
  uint64_t head_in, head_w, logp, total_weight, seed, scaled_loss, gres;
  uint64_t lnf_in, lnf_mean, lnf_rstd;   /* ARCH_GPT: the final LayerNorm's saved tensors */
  int gres_shared;                 /* the residual gradient buffer is a view: accumulate out of place */
  struct idlist cast_cache;        /* autocast's cache entries not saved by autograd */
  uint64_t scaler_scale, scaler_tracker;
  int states_ready;
  struct model_hooks h;
};

int model_init(struct model *m, const struct model_shape *sh, const struct model_opts *o, struct evq *q,
               const char *owner, char *err);
void model_reset(struct model *m);       /* forget every id (rewind) */
void model_destroy(struct model *m);     /* host memory */
void model_set_step(struct model *m, uint64_t batch, uint64_t seq);

uint64_t model_act_bytes(const struct model *m);   /* one batch*seq*hidden activation (adt) */
uint64_t model_param_bytes(const struct model *m); /* all parameters */

void model_alloc_params(struct model *m);
void model_zero_grad(struct model *m);
void model_new_batch(struct model *m);   /* the next batch replaces the previous one */
/* embedding .. loss; the new logits and loss replace out.logits/out.loss (the old ones,
 * if the script still holds them, are freed only now: Python's reassignment) */
void model_forward(struct model *m, int grad);
void model_backward(struct model *m);
void model_optimizer_step(struct model *m);
/* zero_grad, new batch, forward, backward, step, and the step's logits and loss dropped
 * (a step function returning loss.item()): at the ITER that follows, what is live is the
 * model, its gradients and states, and the batch */
void model_train_step(struct model *m);
void model_drop_outputs(struct model *m);           /* the script drops logits, loss */
void model_release_outputs(struct model *m);        /* ... and the batch */
void model_teardown(struct model *m);    /* everything the model holds, freed */

/* used by the block file and the generators */
void model_grad_produce(struct model *m, uint64_t p);
uint64_t model_block_forward(struct model *m, uint64_t layer, enum fwd_mode mode, int keep_input);
void model_block_backward(struct model *m, uint64_t layer);
/* ARCH_GPT's block (gpt_block.c) */
uint64_t gpt_block_forward(struct model *m, uint64_t layer, enum fwd_mode mode, int keep_input);
void gpt_block_backward(struct model *m, uint64_t layer);
/* a linear layer's backward: grad input (optional), weight (and bias) gradients (amp:
 * computed in low precision, then cast to the fp32 master's dtype), and for a bias with
 * a 3-D (batch_first) input its split-K reduction workspace and semaphores */
uint64_t model_linear_backward(struct model *m, uint64_t rows, uint64_t in, uint64_t out, uint64_t pw,
                               int has_bias, int need_grad_input, int bias_workspace);

#endif
