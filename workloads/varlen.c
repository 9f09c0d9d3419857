/* varlen.c - `varlen`: training where every step's batch and sequence length are drawn
 * anew, as with unpadded variable-length data: every activation, logits and gradient
 * temporary changes size from step to step while parameters, gradients and optimizer
 * states stay put. This is the pattern that fragments a caching allocator: freed blocks
 * of the last step's sizes rarely fit the next step's requests.
 *   dist=uniform    batch uniform in [batch_min, batch_max], seq uniform over
 *                   seq_min..seq_max in steps of seq_step
 *   dist=bucketed   seq one of `buckets` (uniformly), batch as above
 *   dist=lognormal  seq = exp(mu + sigma*N(0,1)) rounded up to seq_step, clamped to
 *                   [seq_min, seq_max] (natural text lengths), batch as above
 *   dist=torch      tests/validate/torch_jobs.py's draws exactly: per step batch, seq and
 *                   a data seed from torch.randint on a CPU torch.Generator seeded with
 *                   the seed (mt19937; randint = low + 32-bit draw % range; the data
 *                   seed takes two draws), batch in
 *                   [batch_min, batch_max], seq in [seq_min, seq_max] (seq_step ignored)
 * Draws come from (seed, rank): each rank of a data-parallel job sees its own stream. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"
#include "train_gen.h"

#define MAX_BUCKETS 64

static const struct param_spec varlen_params[] = {
  MODEL_ARCH_PARAMS("8", "1024", "16", "4096", "32000"),
  MODEL_TRAIN_PARAMS("adamw", "30"),
  TRAIN_STEP_PARAMS,
  TRAIN_JOB_PARAMS,
  {"dist", P_STR, "uniform", "uniform | bucketed | lognormal: how seq is drawn each step | torch: batch and seq as torch_jobs.py draws them"},
  {"batch_min", P_INT, "4", "smallest batch"},
  {"batch_max", P_INT, "32", "largest batch"},
  {"seq_min", P_INT, "64", "shortest sequence"},
  {"seq_max", P_INT, "1024", "longest sequence"},
  {"seq_step", P_INT, "32", "sequence lengths are multiples of this (uniform, lognormal)"},
  {"buckets", P_STR, "[128,256,512,1024]", "bucketed: the sequence lengths, e.g. [128,256,512,1024]"},
  {"mu", P_FLOAT, "5.5", "lognormal: mean of log(seq)"},
  {"sigma", P_FLOAT, "0.7", "lognormal: standard deviation of log(seq)"},
  {NULL, 0, NULL, NULL},
};

enum dist { DIST_UNIFORM, DIST_BUCKETED, DIST_LOGNORMAL, DIST_TORCH };

/* mt19937 as torch's CPU generator runs it (ATen's MT19937RNGEngine) */
struct mt19937 { uint32_t s[624]; int i; };
static void mt_seed(struct mt19937 *m, uint64_t seed) {
  m->s[0] = (uint32_t)seed;
  for (int j = 1; j < 624; j++) m->s[j] = 1812433253u * (m->s[j - 1] ^ (m->s[j - 1] >> 30)) + (uint32_t)j;
  m->i = 624;
}
static uint32_t mt_next(struct mt19937 *m) {
  if (m->i >= 624) {
    for (int j = 0; j < 624; j++) {
      uint32_t y = (m->s[j] & 0x80000000u) | (m->s[(j + 1) % 624] & 0x7fffffffu);
      m->s[j] = m->s[(j + 397) % 624] ^ (y >> 1) ^ (y & 1 ? 0x9908b0dfu : 0);
    }
    m->i = 0;
  }
  uint32_t y = m->s[m->i++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  return y ^ (y >> 18);
}
/* torch.randint(lo, hi + 1, (1,), generator=g) */
static uint64_t mt_randint(struct mt19937 *m, uint64_t lo, uint64_t hi) { return lo + mt_next(m) % (hi - lo + 1); }

struct varlen {
  struct train_gen g;
  enum dist dist;
  uint64_t batch_min, batch_max, seq_min, seq_max, seq_step;
  uint64_t bucket[MAX_BUCKETS];
  int nbuckets;
  double mu, sigma;
  struct rng rng;
  struct mt19937 mt;
};

static uint64_t draw_seq(struct varlen *v) {
  switch (v->dist) {
  case DIST_BUCKETED: return v->bucket[rng_range(&v->rng, 0, (uint64_t)v->nbuckets - 1)];
  case DIST_LOGNORMAL: {
    double x = exp(v->mu + v->sigma * rng_normal(&v->rng));
    if (x > (double)v->seq_max) return v->seq_max;
    uint64_t s = ((uint64_t)ceil(x) + v->seq_step - 1) / v->seq_step * v->seq_step;
    return s < v->seq_min ? v->seq_min : s > v->seq_max ? v->seq_max : s;
  }
  case DIST_UNIFORM: case DIST_TORCH: break;
  }
  return v->seq_min + v->seq_step * rng_range(&v->rng, 0, (v->seq_max - v->seq_min) / v->seq_step);
}

static void varlen_iteration(struct train_gen *g) {
  struct varlen *v = (struct varlen *)g;
  if (v->dist == DIST_TORCH) {
    uint64_t b = mt_randint(&v->mt, v->batch_min, v->batch_max), s = mt_randint(&v->mt, v->seq_min, v->seq_max);
    mt_next(&v->mt);   /* the step's data seed, randint(0, 2**31 - 1): two draws (as the recorded */
    mt_next(&v->mt);   /* snapshots' batch sizes show: 183936, 35616, 13376 ... bytes for seed 1) */
    model_set_step(&g->m, b, s);
    train_gen_step(g);
    return;
  }
  uint64_t batch = rng_range(&v->rng, v->batch_min, v->batch_max);
  model_set_step(&g->m, batch, draw_seq(v));
  train_gen_step(g);
}

static void varlen_restart(struct train_gen *g) {
  struct varlen *v = (struct varlen *)g;
  rng_seed(&v->rng, g->seed, (uint64_t)g->rank, 1);
  mt_seed(&v->mt, g->seed + (uint64_t)g->rank);
}

static int parse_buckets(struct varlen *v, const char *text, char *err) {
  const char *c = text;
  if (*c == '[') c++;
  v->nbuckets = 0;
  while (*c && *c != ']') {
    char *end;
    unsigned long long x = strtoull(c, &end, 10);
    if (end == c || x == 0 || x > (1u << 22) || v->nbuckets == MAX_BUCKETS) break;
    v->bucket[v->nbuckets++] = x;
    c = *end == ',' ? end + 1 : end;
  }
  if (!v->nbuckets || (*c && strcmp(c, "]"))) {
    snprintf(err, FB_ERRLEN, "varlen: parameter 'buckets=%s': expected [n,n,...] with 1..%d lengths in 1..4194304", text,
             MAX_BUCKETS);
    return -1;
  }
  return 0;
}

static int varlen_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int dist = param_choice(p, "dist", "uniform|bucketed|lognormal|torch", "varlen", err);
  if (dist < 0) return -1;
  int64_t bmin, bmax, smin, smax, step;
  if (param_int_in(p, "batch_min", 1, 1 << 20, &bmin, "varlen", err) ||
      param_int_in(p, "batch_max", bmin, 1 << 20, &bmax, "varlen", err) ||
      param_int_in(p, "seq_min", 1, 1 << 22, &smin, "varlen", err) ||
      param_int_in(p, "seq_max", smin, 1 << 22, &smax, "varlen", err) ||
      param_int_in(p, "seq_step", 1, 1 << 22, &step, "varlen", err))
    return -1;
  double sigma = param_float(p, "sigma");
  if (!(sigma >= 0) || !isfinite(param_float(p, "mu"))) {
    snprintf(err, FB_ERRLEN, "varlen: sigma must be >= 0 and mu finite");
    return -1;
  }
  if (train_gen_open(st, sizeof(struct varlen), p, ctx, MODEL_GPT, (struct model_opts){0}, "varlen", err)) return -1;
  struct varlen *v = *st;
  v->dist = (enum dist)dist;
  v->batch_min = (uint64_t)bmin, v->batch_max = (uint64_t)bmax;
  v->seq_min = (uint64_t)smin, v->seq_max = (uint64_t)smax, v->seq_step = (uint64_t)step;
  v->mu = param_float(p, "mu"), v->sigma = sigma;
  uint64_t longest = v->seq_max;
  if (v->dist == DIST_BUCKETED) {
    if (parse_buckets(v, param_str(p, "buckets"), err)) goto fail;
    for (int i = 0; i < v->nbuckets; i++) longest = v->bucket[i] > longest ? v->bucket[i] : longest;
  }
  if (model_shape_check_step(&v->g.m.sh, v->batch_max, longest, "varlen", err)) goto fail;
  v->g.iteration = varlen_iteration;
  v->g.restart = varlen_restart;
  varlen_restart(&v->g);
  return 0;
fail:
  synth_close(v);
  *st = NULL;
  return -1;
}

SYNTH_WORKLOAD(varlen,
               "GPT training with batch and sequence length drawn every step (uniform, bucketed, lognormal): fragments caches",
               varlen_params, varlen_open);
