/* train_resnet.c - `train_resnet`: training a torchvision ResNet (bottleneck blocks:
 * 50, 101 or 152 layers) on batch x 3 x size x size images with SGD + momentum, as eager
 * PyTorch allocates it (tests/validate/torch_jobs.py's resnet job):
 *  - model.cuda(): module by module, each conv weight, each BatchNorm's weight, bias,
 *    running mean/var and step counter, the fc layer;
 *  - forward: each conv's output (it saves its input), each BatchNorm's output and its
 *    saved mean/invstd (it saves its input), ReLU in place (saves its result), the max
 *    pool's output and int64 indices, `out += identity` in place, the pooled features,
 *    logits, log-softmax and loss; the downsample branch's BatchNorm output lives until
 *    the add;
 *  - backward in reverse: ReLU, BatchNorm and conv input gradients (a new buffer each),
 *    weight gradients as AccumulateGrad makes them, the identity branch's gradient added
 *    in place into the block input's;
 *  - SGD: a momentum buffer per parameter at the first step, in place after; zero_grad
 *    (set_to_none) after the step.
 * cuDNN's workspaces are `ws_mb` around every conv (default 0: PyTorch falls back to an
 * algorithm with less workspace when the allocation fails, so they do not decide what
 * fits; see docs/fit.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "synth.h"
#include "model_shape.h"
#include "train_gen.h"

static const struct param_spec resnet_params[] = {
  {"depth", P_INT, "50", "50 | 101 | 152 (bottleneck blocks per stage 3-4-6-3, 3-4-23-3, 3-8-36-3)"},
  {"batch", P_INT, "64", "images per step"},
  {"size", P_INT, "224", "image side (pixels)"},
  {"classes", P_INT, "1000", "fc outputs"},
  {"iters", P_INT, "4", "training iterations (optimizer steps)"},
  {"momentum", P_BOOL, "1", "SGD with momentum (a buffer per parameter) | plain SGD"},
  {"ws_mb", P_INT, "0", "cuDNN workspace allocated and freed around every conv, MiB"},
  {NULL, 0, NULL, NULL},
};

#define MAX_T 1024   /* tensors (parameters and buffers): ResNet-152 has ~ 780 */

struct resnet {
  struct synth s;
  int stages[4];
  uint64_t batch, size, classes, iters, iter, ws;
  int momentum, started;
  int nt;
  uint64_t tbytes[MAX_T];
  int is_param[MAX_T];
  uint64_t tid[MAX_T], gid[MAX_T], mom[MAX_T];
  int cursor;                 /* the next parameter tensor, in module order */
  struct idlist saved;        /* the forward's saved tensors, freed by backward in reverse */
  uint64_t x, y, loss;
};

static uint64_t A(struct resnet *r, uint64_t b) { return evq_alloc(&r->s.q, b); }
static void Fr(struct resnet *r, uint64_t id) { evq_free(&r->s.q, id); }
static void keep(struct resnet *r, uint64_t id) { if (idlist_push(&r->saved, id)) r->s.q.oom = 1; }
static uint64_t out_side(uint64_t h, int stride) { return stride == 1 ? h : (h - 1) / 2 + 1; }

static void add_t(struct resnet *r, uint64_t numel, int param) {
  if (r->nt < MAX_T) {
    r->tbytes[r->nt] = numel * 4;
    r->is_param[r->nt++] = param;
  }
}
static void conv_t(struct resnet *r, uint64_t cin, uint64_t cout, uint64_t k) { add_t(r, cin * cout * k * k, 1); }
static void bn_t(struct resnet *r, uint64_t c) {
  add_t(r, c, 1), add_t(r, c, 1), add_t(r, c, 0), add_t(r, c, 0);
  r->tbytes[r->nt] = 8;   /* num_batches_tracked, int64 */
  r->is_param[r->nt++] = 0;
}

/* the tensor list in model.cuda()'s order */
static void build(struct resnet *r) {
  conv_t(r, 3, 64, 7), bn_t(r, 64);
  uint64_t in = 64;
  for (int st = 0; st < 4; st++) {
    uint64_t w = 64ull << st, out = 4 * w;
    for (int b = 0; b < r->stages[st]; b++) {
      conv_t(r, in, w, 1), bn_t(r, w), conv_t(r, w, w, 3), bn_t(r, w), conv_t(r, w, out, 1), bn_t(r, out);
      if (b == 0) conv_t(r, in, out, 1), bn_t(r, out);
      in = out;
    }
  }
  add_t(r, 2048 * r->classes, 1), add_t(r, r->classes, 1);
}

/* the param tensor indices in use order: conv/bn helpers take the next ones */
static int next_param(struct resnet *r) {
  while (r->cursor < r->nt && !r->is_param[r->cursor]) r->cursor++;
  return r->cursor++;
}
static void workspace(struct resnet *r) { Fr(r, A(r, r->ws)); }

/* forward helpers: each returns its output id; what backward needs is pushed to saved */
static uint64_t conv_fwd(struct resnet *r, uint64_t in, uint64_t cout, uint64_t ho) {
  (void)in;
  next_param(r);
  workspace(r);
  return A(r, r->batch * cout * ho * ho * 4);
}
static uint64_t bn_fwd(struct resnet *r, uint64_t c, uint64_t h) {
  next_param(r), next_param(r);
  uint64_t out = A(r, r->batch * c * h * h * 4);
  keep(r, A(r, c * 4));   /* save_mean */
  keep(r, A(r, c * 4));   /* save_invstd */
  return out;
}

static void forward(struct resnet *r) {
  uint64_t B = r->batch, h = out_side(r->size, 2);
  r->cursor = 0;
  uint64_t c = conv_fwd(r, r->x, 64, h);   /* its input, the batch, is the script's */
  keep(r, c);
  uint64_t x = bn_fwd(r, 64, h);   /* relu in place: saved by relu and the pool */
  keep(r, x);
  h = out_side(h, 2);
  uint64_t pool = A(r, B * 64 * h * h * 4);
  keep(r, A(r, B * 64 * h * h * 8));   /* indices */
  x = pool;
  keep(r, x);
  uint64_t in = 64;
  for (int st = 0; st < 4; st++) {
    uint64_t w = 64ull << st, out = 4 * w;
    for (int b = 0; b < r->stages[st]; b++) {
      int stride = st > 0 && b == 0 ? 2 : 1;
      uint64_t ho = out_side(h, stride);
      uint64_t a1 = conv_fwd(r, x, w, h);
      keep(r, a1);
      uint64_t a2 = bn_fwd(r, w, h);
      keep(r, a2);
      uint64_t a3 = conv_fwd(r, a2, w, ho);
      keep(r, a3);
      uint64_t a4 = bn_fwd(r, w, ho);
      keep(r, a4);
      uint64_t a5 = conv_fwd(r, a4, out, ho);
      keep(r, a5);
      uint64_t a6 = bn_fwd(r, out, ho);
      if (b == 0) {   /* downsample: conv + bn; its output lives until the add */
        uint64_t d1 = conv_fwd(r, x, out, ho);
        keep(r, d1);
        uint64_t d2 = bn_fwd(r, out, ho);
        Fr(r, d2);
      }
      keep(r, a6);    /* += identity, relu: in place; the block's output */
      x = a6;
      h = ho;
      in = out;
    }
  }
  (void)in;
  uint64_t pooled = A(r, B * 2048 * 4);
  keep(r, pooled);
  next_param(r), next_param(r);
  uint64_t logits = A(r, B * r->classes * 4);
  uint64_t logp = A(r, B * r->classes * 4);
  keep(r, logp);
  uint64_t loss = A(r, 4), tw = A(r, 4);
  keep(r, tw);
  Fr(r, logits);   /* the script keeps only the loss */
  r->loss = loss;
}

/* AccumulateGrad for the parameter before `*pc` in module order (backward walks them in
 * reverse): the first gradient becomes .grad */
static void grad_prev(struct resnet *r, int *pc) {
  while (*pc > 0 && !r->is_param[*pc - 1]) (*pc)--;
  if (*pc <= 0) return;
  int p = --(*pc);
  if (r->gid[p]) Fr(r, A(r, r->tbytes[p]));
  else r->gid[p] = A(r, r->tbytes[p]);
}
static void bn_grads(struct resnet *r, int *pc) { grad_prev(r, pc), grad_prev(r, pc); }

/* backward, in autograd's order (the reverse of creation): the saved tensors are popped
 * in the reverse of the order forward pushed them */
static void backward(struct resnet *r) {
  uint64_t B = r->batch, h0 = out_side(r->size, 2), hp = out_side(h0, 2), hs[4];
  hs[0] = hp;
  for (int st = 1; st < 4; st++) hs[st] = out_side(hs[st - 1], 2);
  size_t k = r->saved.n;
#define POP() (k ? r->saved.id[--k] : 0)
  int pc = r->nt;
  uint64_t seed = A(r, 4);
  uint64_t glp = A(r, B * r->classes * 4);   /* nll backward: grad of the log-probs */
  Fr(r, POP());                               /* total weight */
  uint64_t g = A(r, B * r->classes * 4);     /* log_softmax backward: grad of the logits */
  Fr(r, glp);
  Fr(r, POP());                               /* log-probs */
  uint64_t gpool = A(r, B * 2048 * 4);       /* fc: input grad, weight and bias grads */
  bn_grads(r, &pc);
  Fr(r, g);
  Fr(r, POP());                               /* pooled features */
  uint64_t cur = A(r, B * 2048 * hs[3] * hs[3] * 4);   /* avgpool backward */
  Fr(r, gpool);
  for (int st = 3; st >= 0; st--) {
    uint64_t w = 64ull << st, out = 4 * w, ho = hs[st];
    uint64_t hin = st == 0 ? hp : hs[st - 1];
    for (int b = r->stages[st] - 1; b >= 0; b--) {
      uint64_t h = b == 0 ? hin : ho, cin = b == 0 ? (st == 0 ? 64 : 2 * w) : out;
      uint64_t sz_out = B * out * ho * ho * 4, sz_w = B * w * ho * ho * 4, sz_wi = B * w * h * h * 4, sz_in = B * cin * h * h * 4;
      uint64_t gr = A(r, sz_out);   /* relu backward (its saved result: the block output) */
      Fr(r, cur);
      Fr(r, POP());
      uint64_t gdx = 0;
      if (b == 0) {   /* the downsample branch was created last: its backward runs first */
        uint64_t s1 = POP(), s2 = POP(), d1 = POP();
        uint64_t gd = A(r, sz_out);
        bn_grads(r, &pc);
        Fr(r, d1), Fr(r, s2), Fr(r, s1);
        workspace(r);
        gdx = A(r, sz_in);
        grad_prev(r, &pc);
        Fr(r, gd);
      }
      uint64_t s1 = POP(), s2 = POP(), a5 = POP();
      uint64_t g5 = A(r, sz_out);   /* bn3 */
      bn_grads(r, &pc);
      Fr(r, a5), Fr(r, s2), Fr(r, s1);
      uint64_t a4 = POP();
      workspace(r);
      uint64_t g4 = A(r, sz_w);     /* conv3 */
      grad_prev(r, &pc);
      Fr(r, g5);
      uint64_t g4r = A(r, sz_w);    /* relu 2 */
      Fr(r, g4), Fr(r, a4);
      s1 = POP(), s2 = POP();
      uint64_t a3 = POP();
      uint64_t g3 = A(r, sz_w);     /* bn2 */
      bn_grads(r, &pc);
      Fr(r, g4r), Fr(r, a3), Fr(r, s2), Fr(r, s1);
      uint64_t a2 = POP();
      workspace(r);
      uint64_t g2 = A(r, sz_wi);    /* conv2 */
      grad_prev(r, &pc);
      Fr(r, g3);
      uint64_t g2r = A(r, sz_wi);   /* relu 1 */
      Fr(r, g2), Fr(r, a2);
      s1 = POP(), s2 = POP();
      uint64_t a1 = POP();
      uint64_t g1 = A(r, sz_wi);    /* bn1 */
      bn_grads(r, &pc);
      Fr(r, g2r), Fr(r, a1), Fr(r, s2), Fr(r, s1);
      workspace(r);
      uint64_t gx = A(r, sz_in);    /* conv1 */
      grad_prev(r, &pc);
      Fr(r, g1);
      if (b == 0) {   /* the two input gradients summed in place */
        Fr(r, gdx);
        Fr(r, gr);
      } else {        /* added into the identity's gradient in place */
        Fr(r, gx);
        gx = gr;
      }
      cur = gx;
    }
  }
  /* the stem: pool (its output was layer1's input), relu + bn1, conv1 (no input gradient) */
  Fr(r, POP());                      /* pool output */
  uint64_t idx = POP();
  uint64_t gp = A(r, B * 64 * h0 * h0 * 4);
  Fr(r, cur), Fr(r, idx);
  uint64_t bn1 = POP(), s1 = POP(), s2 = POP();
  uint64_t gb = A(r, B * 64 * h0 * h0 * 4);
  bn_grads(r, &pc);
  Fr(r, gp), Fr(r, bn1), Fr(r, s1), Fr(r, s2);
  uint64_t c1 = POP();
  workspace(r);
  grad_prev(r, &pc);
  Fr(r, gb), Fr(r, c1);
  r->saved.n = 0;
  Fr(r, seed);
#undef POP
}

static void step(struct resnet *r) {
  if (!r->momentum) return;
  for (int i = 0; i < r->nt; i++)
    if (r->is_param[i] && !r->mom[i]) r->mom[i] = A(r, r->tbytes[i]);
}

static int resnet_fill(struct synth *s, char *err) {
  (void)err;
  struct resnet *r = (struct resnet *)s;
  uint64_t B = r->batch;
  if (!r->started) {
    for (int i = 0; i < r->nt; i++) r->tid[i] = A(r, r->tbytes[i]);
    r->started = 1;
  } else if (r->iter < r->iters) {
    r->x = A(r, B * 3 * r->size * r->size * 4);
    r->y = A(r, B * 8);
    forward(r);
    backward(r);
    step(r);
    for (int i = 0; i < r->nt; i++) evq_release(&s->q, &r->gid[i]);   /* zero_grad(set_to_none) */
    evq_release(&s->q, &r->x), evq_release(&s->q, &r->y), evq_release(&s->q, &r->loss);
    evq_mark(&s->q, OP_ITER);
    r->iter++;
  } else {
    for (int i = 0; i < r->nt; i++) evq_release(&s->q, &r->mom[i]);
    for (int i = 0; i < r->nt; i++) evq_release(&s->q, &r->tid[i]);
    s->done = 1;
  }
  return 0;
}

static void resnet_reset(struct synth *s) {
  struct resnet *r = (struct resnet *)s;
  r->iter = 0;
  r->started = 0;
  memset(r->tid, 0, sizeof r->tid), memset(r->gid, 0, sizeof r->gid), memset(r->mom, 0, sizeof r->mom);
  r->saved.n = 0;
  r->x = r->y = r->loss = 0;
}

static void resnet_destroy(struct synth *s) { idlist_destroy(&((struct resnet *)s)->saved); }

static int resnet_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  (void)ctx;
  int64_t depth, batch, size, classes, iters, ws;
  if (param_int_in(p, "depth", 50, 152, &depth, "train_resnet", err) || param_int_in(p, "batch", 1, 1 << 16, &batch, "train_resnet", err) ||
      param_int_in(p, "size", 32, 8192, &size, "train_resnet", err) || param_int_in(p, "classes", 1, 1 << 20, &classes, "train_resnet", err) ||
      param_int_in(p, "iters", 1, 1000000, &iters, "train_resnet", err) || param_int_in(p, "ws_mb", 0, 1 << 16, &ws, "train_resnet", err))
    return -1;
  if (depth != 50 && depth != 101 && depth != 152) {
    snprintf(err, FB_ERRLEN, "train_resnet: parameter 'depth=%lld': expected 50, 101 or 152", (long long)depth);
    return -1;
  }
  struct resnet *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, FB_ERRLEN, "train_resnet: out of host memory");
    return -1;
  }
  static const int blocks[3][4] = {{3, 4, 6, 3}, {3, 4, 23, 3}, {3, 8, 36, 3}};
  memcpy(r->stages, blocks[depth == 50 ? 0 : depth == 101 ? 1 : 2], sizeof r->stages);
  r->batch = (uint64_t)batch, r->size = (uint64_t)size, r->classes = (uint64_t)classes, r->iters = (uint64_t)iters;
  r->ws = (uint64_t)ws << 20;
  r->momentum = param_bool(p, "momentum");
  build(r);
  r->s.q.next_id = 1;
  r->s.fill = resnet_fill;
  r->s.reset = resnet_reset;
  r->s.destroy = resnet_destroy;
  *st = r;
  return 0;
}

SYNTH_WORKLOAD(train_resnet,
               "torchvision ResNet-50/101/152 training, SGD momentum: conv/BatchNorm/ReLU saved activations, max-pool indices",
               resnet_params, resnet_open);
