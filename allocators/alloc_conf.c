/* alloc_conf.c - PYTORCH_CUDA_ALLOC_CONF <-> strategy specs; see alloc_conf.h.
 * PyTorch's syntax (c10/cuda/CUDAAllocatorConfig.cpp, c10/core/AllocatorConfig.cpp):
 * comma-separated key:value pairs, spaces ignored, a list value in brackets
 * (roundup_power2_divisions:[256:1,512:2,>:8]), booleans True/False, backend native or
 * cudaMallocAsync. */
#include "alloc_conf.h"
#include <stdio.h>
#include <string.h>
#include "caching_policy.h"
#include "event.h"

/* keys that do not change which block goes where (host pinning, locking) */
static const char *const no_memory_effect[] = {
  "release_lock_on_cudamalloc", "pinned_use_cuda_host_register", "pinned_num_register_threads",
  "pinned_use_background_threads", "pinned_reserve_segment_size_mb", "expandable_segments_handle_type",
  "graph_capture_record_stream_reuse", NULL,
};
static const char *const knobs[] = {
  "max_split_size_mb", "max_non_split_rounding_mb", "roundup_power2_divisions", "garbage_collection_threshold", NULL,
};

static int in_list(const char *const *list, const char *s) {
  for (int i = 0; list[i]; i++) if (!strcmp(list[i], s)) return 1;
  return 0;
}

static void append(char *out, size_t n, const char *sep, const char *text) {
  size_t k = strlen(out);
  if (k + 1 >= n) return;
  snprintf(out + k, n - k, "%s%s", k ? sep : "", text);
}

int alloc_conf_to_spec(const char *conf, char *spec, size_t n, char *ignored, size_t ignored_n, char *err) {
  char t[1024];
  size_t len = 0;
  for (const char *s = conf; *s; s++) {
    if (*s == ' ' || *s == '\t' || *s == '\n') continue;   /* PyTorch's tokenizer drops spaces */
    if (len + 1 >= sizeof t) { snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF '%.60s...': too long", conf); return -1; }
    t[len++] = *s;
  }
  t[len] = 0;
  if (ignored && ignored_n) ignored[0] = 0;
  int expandable = 0, async = 0;
  char knob_text[900] = "";
  char *p = t;
  while (*p) {
    char *item = p;
    int depth = 0;
    while (*p && (depth || *p != ',')) {
      if (*p == '[') depth++;
      else if (*p == ']' && depth) depth--;
      p++;
    }
    if (depth) { snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF '%s': a '[' without its ']'", conf); return -1; }
    if (*p) *p++ = 0;
    if (!*item) {
      snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF '%s': an empty entry; expected key:value pairs separated by ','", conf);
      return -1;
    }
    char *colon = strchr(item, ':');
    if (!colon || colon == item || !colon[1]) {
      snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF '%.200s': '%.100s': expected key:value (e.g. expandable_segments:True)", conf, item);
      return -1;
    }
    *colon = 0;
    const char *key = item, *val = colon + 1;
    if (!strcmp(key, "expandable_segments")) {
      if (!strcmp(val, "True")) expandable = 1;
      else if (!strcmp(val, "False")) expandable = 0;
      else { snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF: expandable_segments:%s: expected True or False", val); return -1; }
    } else if (!strcmp(key, "backend")) {
      if (!strcmp(val, "cudaMallocAsync")) async = 1;
      else if (!strcmp(val, "native")) async = 0;
      else { snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF: backend:%s: expected native or cudaMallocAsync", val); return -1; }
    } else if (in_list(knobs, key)) {
      char kv[400];
      snprintf(kv, sizeof kv, "%.40s=%.300s", key, val);
      append(knob_text, sizeof knob_text, ",", kv);
    } else if (in_list(no_memory_effect, key)) {
      if (ignored) append(ignored, ignored_n, ",", key);
    } else {
      snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF: unknown key '%.60s'; known: backend expandable_segments "
               "max_split_size_mb max_non_split_rounding_mb roundup_power2_divisions garbage_collection_threshold "
               "(and release_lock_on_cudamalloc, pinned_*: no effect on device memory)", key);
      return -1;
    }
  }
  if (async) {
    if (ignored && knob_text[0]) append(ignored, ignored_n, ",", knob_text);
    if (ignored && expandable) append(ignored, ignored_n, ",", "expandable_segments");
    snprintf(spec, n, "async");
    return 0;
  }
  int k = snprintf(spec, n, "%s%s%s", expandable ? "expandable" : "caching", knob_text[0] ? ":" : "", knob_text);
  if (k < 0 || (size_t)k >= n) { snprintf(err, FB_ERRLEN, "PYTORCH_CUDA_ALLOC_CONF '%.60s...': too long", conf); return -1; }
  return 0;
}

void alloc_conf_roundup(const uint64_t div[16], char *out, size_t n) {
  int first_end = 0;
  while (first_end + 1 < 16 && div[first_end + 1] == div[0]) first_end++;
  if (first_end == 15) { snprintf(out, n, "%llu", (unsigned long long)div[0]); return; }
  int tail = 15;
  while (tail - 1 > first_end && div[tail - 1] == div[15]) tail--;
  size_t k = (size_t)snprintf(out, n, "[%llu:%llu", 1ull << first_end, (unsigned long long)div[0]);
  for (int i = first_end + 1; i < tail && k < n; i++)
    k += (size_t)snprintf(out + k, n - k, ",%llu:%llu", 1ull << i, (unsigned long long)div[i]);
  if (k < n) snprintf(out + k, n - k, ",>:%llu]", (unsigned long long)div[15]);
}

int alloc_conf_format(const char *name, const struct params *p, char *out, size_t n) {
  out[0] = 0;
  if (!strcmp(name, "async")) {
    if (params_has(p, "release_threshold")) return -1;   /* not a PyTorch setting */
    snprintf(out, n, "backend:cudaMallocAsync");
    return 0;
  }
  int expandable = !strcmp(name, "expandable");
  if (!expandable && strcmp(name, "caching")) return -1;
  char text[600] = "";
  if (expandable) append(text, sizeof text, ",", "expandable_segments:True");
  for (int i = 0; knobs[i]; i++) {
    if (!params_has(p, knobs[i])) continue;
    const char *v = param_str(p, knobs[i]);
    char kv[400];
    if (!strcmp(knobs[i], "roundup_power2_divisions")) {
      uint64_t div[CACHING_ROUNDUP_INTERVALS];
      char err[FB_ERRLEN], list[300];
      if (caching_parse_roundup(v, div, err)) return -1;
      int any = 0;
      for (int j = 0; j < CACHING_ROUNDUP_INTERVALS; j++) any |= div[j] > 1;
      if (!any) continue;                                  /* 0 and 1 are PyTorch's default */
      alloc_conf_roundup(div, list, sizeof list);
      snprintf(kv, sizeof kv, "%s:%s", knobs[i], list);
    } else {
      if (!v[0] || !strcmp(v, "none") || !strcmp(v, "-1")) continue;
      if (!strcmp(knobs[i], "garbage_collection_threshold") && param_float(p, knobs[i]) == 0) continue;
      if (!strcmp(knobs[i], "max_non_split_rounding_mb") && !strcmp(v, "20")) continue;
      snprintf(kv, sizeof kv, "%s:%s", knobs[i], v);
    }
    append(text, sizeof text, ",", kv);
  }
  if (!text[0]) snprintf(text, sizeof text, "expandable_segments:False");   /* PyTorch's default, said explicitly */
  snprintf(out, n, "%s", text);
  return 0;
}

const char *alloc_conf_how(const char *name) {
  if (!strcmp(name, "caching")) return "PyTorch's default (PYTORCH_CUDA_ALLOC_CONF unset)";
  if (!strcmp(name, "expandable")) return "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";
  if (!strcmp(name, "async")) return "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync";
  if (!strcmp(name, "oracle")) return "not an allocator: an offline lower bound";
  return "not in PyTorch";
}
