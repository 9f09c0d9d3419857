/* caching_config.c - the knobs of PyTorch's caching allocator (PYTORCH_CUDA_ALLOC_CONF),
 * their defaults and checks as c10/core/AllocatorConfig.cpp has them, and request
 * rounding (round_size, roundup_power2_next_division). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "caching_policy.h"
#include "event.h"

const struct param_spec caching_param_spec[] = {
  {"max_split_size_mb", P_STR, "",
   "MiB (>= 20, or none): cached blocks this large are never split, and serve only requests "
   "of at least this size that are within max_non_split_rounding_mb of them"},
  {"max_non_split_rounding_mb", P_INT, "20",
   "MiB (>= 20): how much larger than an oversize request (>= max_split_size_mb) a cached "
   "block it takes may be"},
  {"roundup_power2_divisions", P_STR, "",
   "round sizes up to one of N equal steps between powers of two: one power of two for all "
   "sizes, or per interval [256:1,512:2,>:8] (keys in MiB, powers of two; values 0 or powers "
   "of two; 0 or 1 = plain 512 B rounding); none = 512 B rounding"},
  {"garbage_collection_threshold", P_FLOAT, "0",
   "with a cap set: when reserved exceeds this fraction of it, free cached unsplit large "
   "blocks not reused for longer than average before calling cudaMalloc (0 = off, else "
   "0 < t < 1)"},
  {NULL, 0, NULL, NULL},
};

/* digits only, no sign; 0 or -1 */
static int parse_count(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > 19) return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return 0;
}

/* Per-interval form as AcceleratorAllocatorConfig::parseRoundUpPower2Divisions reads it:
 * the first key also fills every interval below it; ">" fills every interval above the
 * last key given. */
static int parse_roundup_list(const char *t, uint64_t div[CACHING_ROUNDUP_INTERVALS], char *err, const char *orig) {
  const char *p = t + 1;
  int first = 1;
  int last_index = 0;
  while (*p != ']') {
    const char *k = p;
    while (*p && *p != ':' && *p != ',' && *p != ']') p++;
    if (*p != ':' || p == k) {
      snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: expected KEY:VALUE at '%s'", orig, k);
      return -1;
    }
    size_t klen = (size_t)(p - k);
    p++;
    const char *v = p;
    while (*p && *p != ',' && *p != ']') p++;
    uint64_t value;
    if (parse_count(v, (size_t)(p - v), &value)) {
      snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: expected a number of divisions after '%.*s:'", orig, (int)klen, k);
      return -1;
    }
    if (value != 0 && !caching_is_pow2(value)) {
      snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: divisions %llu must be a power of two or 0",
               orig, (unsigned long long)value);
      return -1;
    }
    if (klen == 1 && k[0] == '>') {
      for (int i = last_index + 1; i < CACHING_ROUNDUP_INTERVALS; i++) div[i] = value;
    } else {
      uint64_t boundary;
      if (parse_count(k, klen, &boundary) || !caching_is_pow2(boundary)) {
        snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: interval '%.*s' must be a power of two (MiB) or '>'",
                 orig, (int)klen, k);
        return -1;
      }
      int index = caching_log2_floor(boundary);
      if (index > CACHING_ROUNDUP_INTERVALS - 1) index = CACHING_ROUNDUP_INTERVALS - 1;
      if (first) {
        for (int i = 0; i < index; i++) div[i] = value;
        first = 0;
      }
      div[index] = value;
      last_index = index;
    }
    if (*p == ',') {
      p++;
      if (*p == ']') {
        snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: expected KEY:VALUE after ','", orig);
        return -1;
      }
    } else if (*p != ']') {
      snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: expected ']' at the end", orig);
      return -1;
    }
  }
  if (p[1]) {
    snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: unexpected '%s' after ']'", orig, p + 1);
    return -1;
  }
  return 0;
}

int caching_parse_roundup(const char *text, uint64_t div[CACHING_ROUNDUP_INTERVALS], char *err) {
  char t[256];
  size_t n = 0;
  for (const char *s = text; *s && n + 1 < sizeof t; s++)
    if (*s != ' ') t[n++] = *s;            /* PyTorch's lexer drops spaces */
  t[n] = 0;
  for (int i = 0; i < CACHING_ROUNDUP_INTERVALS; i++) div[i] = 0;
  if (n == 0) return 0;
  if (t[0] == '[') return parse_roundup_list(t, div, err, text);
  uint64_t value;
  if (parse_count(t, n, &value) || (value != 0 && !caching_is_pow2(value))) {
    snprintf(err, FB_ERRLEN, "roundup_power2_divisions=%s: expected a power of two (e.g. 4), "
             "or per interval [256:1,512:2,>:8] with keys in MiB", text);
    return -1;
  }
  for (int i = 0; i < CACHING_ROUNDUP_INTERVALS; i++) div[i] = value;
  return 0;
}

/* A size in MiB >= 20 (PyTorch's min_allowed_split_size_mb), capped at SIZE_MAX / MiB. */
static int parse_mib_at_least_20(const char *key, const char *v, uint64_t *out, char *err) {
  uint64_t mb;
  if (parse_count(v, strlen(v), &mb)) {
    snprintf(err, FB_ERRLEN, "%s=%s: expected a whole number of MiB", key, v);
    return -1;
  }
  if (mb < CACHING_LARGE_BUFFER / CACHING_MIB) {
    snprintf(err, FB_ERRLEN, "%s=%s: too small, must be >= %llu (MiB)", key, v,
             (unsigned long long)(CACHING_LARGE_BUFFER / CACHING_MIB));
    return -1;
  }
  if (mb > UINT64_MAX / CACHING_MIB) mb = UINT64_MAX / CACHING_MIB;
  *out = mb * CACHING_MIB;
  return 0;
}

int caching_config_parse(const struct params *p, struct caching_config *cfg, char *err) {
  char sub[FB_ERRLEN];
  memset(cfg, 0, sizeof *cfg);
  cfg->max_split_size = CACHING_UNLIMITED;
  cfg->max_non_split_rounding = CACHING_LARGE_BUFFER;

  const char *v = param_str(p, "max_split_size_mb");
  if (v[0] && strcmp(v, "none") && strcmp(v, "-1")) {
    if (parse_mib_at_least_20("max_split_size_mb", v, &cfg->max_split_size, sub)) goto fail;
  }
  v = param_str(p, "max_non_split_rounding_mb");
  if (v[0] && parse_mib_at_least_20("max_non_split_rounding_mb", v, &cfg->max_non_split_rounding, sub)) goto fail;
  v = param_str(p, "roundup_power2_divisions");
  if (caching_parse_roundup(v, cfg->roundup_divisions, sub)) goto fail;
  cfg->plain_rounding = 1;
  for (int i = 0; i < CACHING_ROUNDUP_INTERVALS; i++)
    if (cfg->roundup_divisions[i] > 1) cfg->plain_rounding = 0;
  v = param_str(p, "garbage_collection_threshold");
  if (v[0]) {
    char *end;
    double t = strtod(v, &end);
    if (*end || !(t == 0 || (t > 0 && t < 1))) {
      snprintf(sub, sizeof sub, "garbage_collection_threshold=%s: must be 0 (off) or in (0.0, 1.0)", v);
      goto fail;
    }
    cfg->gc_threshold = t;
  }
  return 0;
fail:
  snprintf(err, FB_ERRLEN, "caching: %.480s", sub);
  return -1;
}

