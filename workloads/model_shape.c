/* model_shape.c - reading and checking a model shape from params, and the parameter
 * tensor list (counts and element numbers) of the GPT and MLP models. */
#include <stdio.h>
#include <string.h>
#include "model_shape.h"
#include "event.h"

/* no single tensor may exceed this (a 2^48-byte tensor is far beyond any GPU; the bound
 * keeps every product in uint64 range) */
#define MAX_TENSOR_BYTES (1ull << 48)

static const struct param_spec *spec_key(const struct params *p, const char *key) {
  for (const struct param_spec *s = p->spec; s && s->key; s++)
    if (!strcmp(s->key, key)) return s;
  return NULL;
}

/* the key to read: prefix+name when the spec has it, else name */
static const char *key_for(const struct params *p, const char *prefix, const char *name, char *buf, size_t len) {
  if (prefix && *prefix) {
    snprintf(buf, len, "%s%s", prefix, name);
    if (spec_key(p, buf)) return buf;
  }
  return name;
}

int param_int_in(const struct params *p, const char *key, int64_t lo, int64_t hi, int64_t *out, const char *owner,
                 char *err) {
  *out = param_int(p, key);
  if (*out >= lo && *out <= hi) return 0;
  snprintf(err, FB_ERRLEN, "%s: parameter '%s=%.40s': expected %lld..%lld", owner, key, param_str(p, key), (long long)lo,
           (long long)hi);
  return -1;
}

/* an integer key in [lo, hi]; absent from the spec: *out = 0 */
static int read_range(const struct params *p, const char *prefix, const char *name, int64_t lo, int64_t hi,
                      uint64_t *out, const char *owner, char *err) {
  char buf[40];
  const char *key = key_for(p, prefix, name, buf, sizeof buf);
  int64_t v = 0;
  *out = 0;
  if (!spec_key(p, key)) return 0;
  if (param_int_in(p, key, lo, hi, &v, owner, err)) return -1;
  *out = (uint64_t)v;
  return 0;
}

static int tensor_ok(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t x;
  if (__builtin_mul_overflow(a, b, &x) || __builtin_mul_overflow(x, c, &x) || __builtin_mul_overflow(x, d, &x))
    return 0;
  return x <= MAX_TENSOR_BYTES;
}

int model_shape_check_step(const struct model_shape *m, uint64_t batch, uint64_t seq, const char *owner, char *err) {
  uint64_t rows = 0, w = m->dtype_bytes < 4 ? 4 : m->dtype_bytes;   /* losses are fp32 */
  int ok = !__builtin_mul_overflow(batch, seq, &rows) && tensor_ok(rows, m->vocab, w, 1) &&
           tensor_ok(rows, m->ffn, w, 1) && tensor_ok(rows, m->hidden, 3 * w, 1) &&
           (m->kind != MODEL_GPT || tensor_ok(batch * m->heads, seq, seq, w));
  if (!ok) {
    snprintf(err, FB_ERRLEN, "%s: batch %llu x seq %llu with hidden %llu, ffn %llu, vocab %llu: a tensor would exceed 2^48 bytes",
             owner, (unsigned long long)batch, (unsigned long long)seq, (unsigned long long)m->hidden,
             (unsigned long long)m->ffn, (unsigned long long)m->vocab);
    return -1;
  }
  return 0;
}

int model_shape_read(const struct params *p, enum model_kind kind, const char *prefix, struct model_shape *m,
                     const char *owner, char *err) {
  memset(m, 0, sizeof *m);
  m->kind = kind;
  if (read_range(p, prefix, "layers", 1, 4096, &m->layers, owner, err) ||
      read_range(p, prefix, "hidden", 1, 1 << 20, &m->hidden, owner, err) ||
      read_range(p, prefix, "heads", 1, 1 << 16, &m->heads, owner, err) ||
      read_range(p, prefix, "ffn", 1, 1 << 22, &m->ffn, owner, err) ||
      read_range(p, prefix, "vocab", 1, 1 << 26, &m->vocab, owner, err) ||
      read_range(p, prefix, "batch", 1, 1 << 20, &m->batch, owner, err) ||
      read_range(p, prefix, "seq", 1, 1 << 22, &m->seq, owner, err) ||
      read_range(p, prefix, "dtype_bytes", 1, 8, &m->dtype_bytes, owner, err) ||
      read_range(p, prefix, "iters", 1, 10000000, &m->iters, owner, err))
    return -1;
  if (!m->dtype_bytes) m->dtype_bytes = 4;
  if (m->dtype_bytes & (m->dtype_bytes - 1)) {
    snprintf(err, FB_ERRLEN, "%s: parameter 'dtype_bytes=%llu': expected 1, 2, 4 or 8", owner,
             (unsigned long long)m->dtype_bytes);
    return -1;
  }
  if (kind == MODEL_GPT && m->heads && m->hidden % m->heads) {
    snprintf(err, FB_ERRLEN, "%s: heads=%llu must divide hidden=%llu", owner, (unsigned long long)m->heads,
             (unsigned long long)m->hidden);
    return -1;
  }
  if (kind == MODEL_MLP) m->seq = 1;
  const char *opt = spec_key(p, "optimizer") ? param_str(p, "optimizer") : "sgd";
  if (!strcmp(opt, "adamw")) m->optimizer = OPT_ADAMW;
  else if (!strcmp(opt, "adam")) m->optimizer = OPT_ADAM;
  else if (!strcmp(opt, "sgd")) m->optimizer = OPT_SGD;
  else {
    snprintf(err, FB_ERRLEN, "%s: parameter 'optimizer=%s': expected adamw, adam or sgd", owner, opt);
    return -1;
  }
  if (!tensor_ok(m->vocab, m->hidden, m->dtype_bytes, 1) || !tensor_ok(m->ffn, m->hidden, m->dtype_bytes, 1) ||
      !tensor_ok(3 * m->hidden, m->hidden, m->dtype_bytes, 1)) {
    snprintf(err, FB_ERRLEN, "%s: a parameter tensor would exceed 2^48 bytes", owner);
    return -1;
  }
  if (m->batch && m->seq) return model_shape_check_step(m, m->batch, m->seq, owner, err);
  return 0;
}

uint64_t model_param_count(const struct model_shape *m) {
  if (m->kind != MODEL_GPT) return 2 * m->layers;
  return 2 + m->layers * BLOCK_PARAMS + (m->arch == ARCH_GPT ? 3 : 0);
}

uint64_t model_pos_param(const struct model_shape *m) { return 1 + m->layers * BLOCK_PARAMS; }

uint64_t model_block_param(uint64_t layer, int which) { return 1 + layer * BLOCK_PARAMS + (uint64_t)which; }

uint64_t model_param_numel(const struct model_shape *m, uint64_t i) {
  uint64_t H = m->hidden;
  if (m->kind == MODEL_MLP) {
    uint64_t layer = i / 2, out = layer + 1 == m->layers ? m->vocab : H;
    return i % 2 ? out : out * H;
  }
  if (i == 0 || i == model_param_count(m) - 1) return m->vocab * H;   /* embedding, LM head */
  if (m->arch == ARCH_GPT && i >= model_pos_param(m)) return i == model_pos_param(m) ? m->pos_rows * H : H;
  switch ((int)((i - 1) % BLOCK_PARAMS)) {
  case BP_QKV_W: return 3 * H * H;
  case BP_QKV_B: return 3 * H;
  case BP_OUT_W: return H * H;
  case BP_FC1_W: case BP_FC2_W: return m->ffn * H;
  case BP_FC1_B: return m->ffn;
  default: return H;   /* out_proj.bias, linear2.bias, norms */
  }
}

uint64_t model_total_numel(const struct model_shape *m) {
  uint64_t n = 0, np = model_param_count(m);
  for (uint64_t i = 0; i < np; i++) n += model_param_numel(m, i);
  return n;
}
