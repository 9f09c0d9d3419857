/* model_shape.h - the model description every synthetic generator shares: a GPT-style
 * transformer (or a plain MLP classifier) given by layers, hidden, heads, ffn, vocab,
 * batch, seq, dtype bytes and optimizer, read from a workload's params; the tensor-size
 * arithmetic derived from it; and the shared param_spec entries (with per-generator
 * defaults) so `fragbench list` shows the same keys and help everywhere. */
#ifndef FB_MODEL_SHAPE_H
#define FB_MODEL_SHAPE_H
#include <stdint.h>
#include "params.h"

enum model_kind { MODEL_GPT, MODEL_MLP };
enum optimizer_kind { OPT_ADAMW, OPT_ADAM, OPT_SGD };
/* GPT block style: nn.TransformerEncoderLayer (norm_first, relu) as the gpt_train
 * snapshot's job, or the hand-written decoder of tests/validate/torch_jobs.py (pre-LN,
 * causal SDPA on the packed qkv, GELU MLP, learned positions, final LayerNorm) */
enum model_arch { ARCH_ENCODER, ARCH_GPT };

struct model_shape {
  enum model_kind kind;
  uint64_t layers, hidden, heads, ffn, vocab;   /* MLP: layers linear layers, vocab classes */
  uint64_t batch, seq;                          /* per step (MLP: seq 1) */
  uint64_t dtype_bytes;                         /* parameters; activations too unless amp */
  enum optimizer_kind optimizer;
  uint64_t iters;
  enum model_arch arch;                         /* set by the generator (train_gen.c), not read here */
  uint64_t pos_rows;                            /* ARCH_GPT: rows of the position embedding */
};

/* The shared keys, as param_spec initializers (defaults are text, as in params.h). */
#define MODEL_ARCH_PARAMS(layers, hidden, heads, ffn, vocab)                                      \
  {"layers", P_INT, layers, "transformer blocks (mlp: linear layers)"},                           \
  {"hidden", P_INT, hidden, "model width (d_model)"},                                             \
  {"heads", P_INT, heads, "attention heads (must divide hidden)"},                                \
  {"ffn", P_INT, ffn, "MLP inner width"},                                                         \
  {"vocab", P_INT, vocab, "vocabulary size: embedding and LM head rows (mlp: classes)"},          \
  {"dtype_bytes", P_INT, "4", "bytes per parameter element (4 fp32, 2 fp16/bf16)"}
#define MODEL_DATA_PARAMS(batch, seq)                                                             \
  {"batch", P_INT, batch, "sequences per step"},                                                  \
  {"seq", P_INT, seq, "tokens per sequence"}
#define MODEL_TRAIN_PARAMS(optimizer, iters)                                                      \
  {"optimizer", P_STR, optimizer, "adamw | adam (exp_avg + exp_avg_sq per parameter) | sgd (no state)"}, \
  {"iters", P_INT, iters, "training iterations (optimizer steps)"}
/* all of the above with the shape of the shared gpt_train trace */
#define MODEL_GPT_PARAMS(iters)                                                                   \
  MODEL_ARCH_PARAMS("8", "1024", "16", "4096", "32000"), MODEL_DATA_PARAMS("16", "512"),          \
  MODEL_TRAIN_PARAMS("adamw", iters)

/* Reads and checks the shape keys present in p's spec (batch/seq may be absent: varlen
 * draws them per step; they are then 0). With a prefix ("b_"), a key `prefix+name` in the
 * spec takes precedence over `name` (a second model's shape). Returns 0, or -1 with err
 * naming owner/key. */
int model_shape_read(const struct params *p, enum model_kind kind, const char *prefix, struct model_shape *m,
                     const char *owner, char *err);
/* An integer parameter within [lo, hi] into *out; -1 with err "owner: parameter 'key=v':
 * expected lo..hi" otherwise. */
int param_int_in(const struct params *p, const char *key, int64_t lo, int64_t hi, int64_t *out, const char *owner,
                 char *err);
/* Checks a (batch, seq) step shape against the tensor-size limits of m. */
int model_shape_check_step(const struct model_shape *m, uint64_t batch, uint64_t seq,
                           const char *owner, char *err);

/* Element counts of the parameters, in nn.Module.parameters() order:
 *   GPT: token embedding; per block in_proj.weight, in_proj.bias, out_proj.weight,
 *        out_proj.bias, linear1.weight, linear1.bias, linear2.weight, linear2.bias,
 *        norm1.weight, norm1.bias, norm2.weight, norm2.bias; [ARCH_GPT: position
 *        embedding, final norm weight and bias;] LM head weight (untied). (ARCH_GPT's
 *        module lists the position embedding second and the norms first in a block;
 *        here the block order is shared and the extras come before the head.)
 *   MLP: per layer weight, bias (hidden -> hidden ..., last hidden -> vocab). */
enum {
  BP_QKV_W, BP_QKV_B, BP_OUT_W, BP_OUT_B, BP_FC1_W, BP_FC1_B, BP_FC2_W, BP_FC2_B,
  BP_LN1_W, BP_LN1_B, BP_LN2_W, BP_LN2_B, BLOCK_PARAMS
};
uint64_t model_param_count(const struct model_shape *m);            /* tensors */
uint64_t model_param_numel(const struct model_shape *m, uint64_t i); /* elements of tensor i */
uint64_t model_block_param(uint64_t layer, int which);               /* GPT: tensor index */
uint64_t model_total_numel(const struct model_shape *m);
/* ARCH_GPT: the tensor index of the position embedding (the final norm's follow it) */
uint64_t model_pos_param(const struct model_shape *m);

#endif
