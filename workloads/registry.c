/* registry.c - the table of workloads (generators and trace readers), format detection
 * for --trace, and the open/rewind/close wrappers. Adding a workload: one file in
 * workloads/ defining `const struct workload_ops NAME_workload`, and one line here. */
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include "workload.h"
#include "trace_src.h"

extern const struct workload_ops script_workload;
extern const struct workload_ops train_loop_workload;
extern const struct workload_ops leaky_losses_workload;
extern const struct workload_ops varlen_workload;
extern const struct workload_ops checkpointing_workload;
extern const struct workload_ops amp_workload;
extern const struct workload_ops eval_accumulate_workload;
extern const struct workload_ops model_switch_workload;
extern const struct workload_ops grad_accumulation_workload;
extern const struct workload_ops ddp_buckets_workload;
extern const struct workload_ops zero_shard_workload;
extern const struct workload_ops offload_workload;
extern const struct workload_ops random_workload;
extern const struct workload_ops train_resnet_workload;
extern const struct workload_ops pytorch_snapshot_workload;
extern const struct workload_ops rmm_log_workload;
extern const struct workload_ops native_trace_workload;

const struct workload_ops *const workload_table[] = {
  &script_workload,
  &train_loop_workload,
  &leaky_losses_workload,
  &varlen_workload,
  &checkpointing_workload,
  &amp_workload,
  &eval_accumulate_workload,
  &model_switch_workload,
  &grad_accumulation_workload,
  &ddp_buckets_workload,
  &zero_shard_workload,
  &offload_workload,
  &random_workload,
  &train_resnet_workload,
  &pytorch_snapshot_workload,
  &rmm_log_workload,
  &native_trace_workload,
  NULL,
};

const struct workload_ops *workload_find(const char *name) {
  for (int i = 0; workload_table[i]; i++)
    if (!workload_table[i]->is_trace && !strcmp(workload_table[i]->name, name)) return workload_table[i];
  return NULL;
}

const struct workload_ops *trace_detect_src(struct trace_src *src, const char *path, char *err) {
  unsigned char head[4096];
  int got = src_fill(src, sizeof head, err);
  size_t n = (size_t)(src->end - src->p);
  if (n > sizeof head) n = sizeof head;
  memcpy(head, src->p, n);
  if (got >= 0 && n < sizeof head) got = src_drain(src, err);   /* a short file: its gzip trailer checked here */
  if (got < 0) return NULL;
  if (n == 0) {
    snprintf(err, FB_ERRLEN, "%s: empty file (expected a trace)", path);
    return NULL;
  }
  for (int i = 0; workload_table[i]; i++) {
    const struct workload_ops *o = workload_table[i];
    if (o->is_trace && o->probe && o->probe(head, n)) return src_rewind(src, err) ? NULL : o;
  }
  int k = snprintf(err, FB_ERRLEN, "%s: byte 0: not a trace format fragbench reads; expected one of:", path);
  for (int i = 0; workload_table[i] && k < FB_ERRLEN; i++)
    if (workload_table[i]->is_trace) k += snprintf(err + k, FB_ERRLEN - (size_t)k, " %s", workload_table[i]->name);
  return NULL;
}

const struct workload_ops *trace_detect(const char *path, char *err) {
  struct trace_src src;   /* plain files as they are, gzip'd ones inflated (and checked) */
  if (src_open_path(&src, path, err)) return NULL;
  const struct workload_ops *o = trace_detect_src(&src, path, err);
  src_close(&src);
  return o;
}

int workload_open(struct workload *w, const struct workload_ops *ops, const char *spec_params,
                  const struct workload_ctx *ctx, uint64_t percent_base, char *err) {
  memset(w, 0, sizeof *w);
  w->ops = ops;
  w->ctx = *ctx;
  w->ctx.src = NULL;   /* an open source handed over is the reader's, once: never reused from w->ctx */
  char name[64];
  if ((spec_params && *spec_params && params_parse_spec(spec_params, name, sizeof name, &w->params, err)) ||
      (w->params.percent_base = percent_base, params_check(&w->params, ops->params, ops->name, err))) {
    if (ctx->src) src_close(ctx->src);   /* handed over: closed here, as the reader would have */
    return -1;
  }
  snprintf(w->spec, sizeof w->spec, "%s", spec_params && *spec_params ? spec_params : ops->name);
  struct workload_ctx c = w->ctx;
  c.src = ctx->src;
  if (ops->open(&w->st, &w->params, &c, err)) {
    w->st = NULL;
    return -1;
  }
  return 0;
}

int workload_rewind(struct workload *w, char *err) { return w->ops->rewind(w->st, err); }

void workload_close(struct workload *w) {
  if (w->st) w->ops->close(w->st);
  w->st = NULL;
}
