/* offload.c - `offload`: training that moves tensors to host memory and back.
 *   target=activations  torch.autograd.graph.save_on_cpu: every tensor a block saves for
 *                       backward is copied to (pinned) host memory and its GPU memory
 *                       freed at its last forward use; before the block's backward the
 *                       saved tensors are copied back into fresh GPU buffers. The LM head
 *                       and loss keep theirs on the GPU.
 *   target=params       ZeRO-Offload / FSDP CPU offload: parameters live on the host; each
 *                       unit (embedding, every block, LM head) is staged into a flat GPU
 *                       buffer before it runs, forward and backward alike, and freed after,
 *                       with the next unit prefetched while one runs (`prefetch=1`);
 *                       gradients are copied to the host as soon as they are produced and
 *                       the optimizer steps on the CPU (no GPU optimizer state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train_gen.h"

static const struct param_spec offload_params[] = {
  MODEL_GPT_PARAMS("8"),
  TRAIN_STEP_PARAMS,
  {"target", P_STR, "activations", "activations (save_on_cpu) | params (host-resident parameters staged per unit, CPU optimizer)"},
  {"prefetch", P_BOOL, "1", "params: stage the next unit while the current one runs"},
  {NULL, 0, NULL, NULL},
};

struct offload {
  struct train_gen g;
  int prefetch;
  uint64_t units, *unit_bytes, *staged;   /* per unit: parameter bytes, staging buffer */
};

/* GPT units: 0 embedding, 1..layers blocks, layers+1 LM head */
static uint64_t unit_of(const struct model *m, uint64_t p) {
  return p == 0 ? 0 : p == m->np - 1 ? m->sh.layers + 1 : 1 + (p - 1) / BLOCK_PARAMS;
}

static void stage(struct offload *o, uint64_t u) {
  if (u < o->units && !o->staged[u]) o->staged[u] = evq_alloc(&o->g.s.q, o->unit_bytes[u]);
}

static void offload_enter(void *ctx, struct model *m, uint64_t unit, int backward) {
  (void)m;
  struct offload *o = ctx;
  stage(o, unit);
  if (o->prefetch) stage(o, backward ? unit - 1 : unit + 1);   /* unit 0 - 1 wraps past `units` */
}

static void offload_leave(void *ctx, struct model *m, uint64_t unit, int backward) {
  (void)m, (void)backward;
  struct offload *o = ctx;
  evq_release(&o->g.s.q, &o->staged[unit]);
}

static void offload_grad_ready(void *ctx, struct model *m, uint64_t p) {
  (void)ctx;
  evq_release(m->q, &m->gid[p]);   /* device-to-host copy, then the GPU gradient goes */
}

static void params_iteration(struct train_gen *g) {   /* the optimizer runs on the host */
  model_new_batch(&g->m);
  model_forward(&g->m, 1);
  model_backward(&g->m);
  model_drop_outputs(&g->m);
}

static void offload_finish(struct train_gen *g) {
  struct offload *o = (struct offload *)g;
  for (uint64_t u = 0; u < o->units; u++) evq_release(&g->s.q, &o->staged[u]);
}

static void offload_restart(struct train_gen *g) {
  struct offload *o = (struct offload *)g;
  memset(o->staged, 0, o->units * sizeof *o->staged);
}

static void offload_cleanup(struct train_gen *g) {
  struct offload *o = (struct offload *)g;
  free(o->unit_bytes);
  free(o->staged);
}

int offload_open_with(void **st, const struct params *p, const struct workload_ctx *ctx, int target, int prefetch,
                      const char *owner, char *err) {
  struct model_opts mo = {.pack_activations = target == 0, .params_offloaded = target == 1};
  if (train_gen_open(st, sizeof(struct offload), p, ctx, MODEL_GPT, mo, owner, err)) return -1;
  struct offload *o = *st;
  struct model *m = &o->g.m;
  if (target == 0) return 0;
  o->prefetch = prefetch;
  o->units = m->sh.layers + 2;
  o->unit_bytes = calloc(o->units, sizeof *o->unit_bytes);
  o->staged = calloc(o->units, sizeof *o->staged);
  o->g.cleanup = offload_cleanup;
  if (!o->unit_bytes || !o->staged) {
    snprintf(err, FB_ERRLEN, "offload: out of host memory");
    synth_close(o);
    *st = NULL;
    return -1;
  }
  for (uint64_t i = 0; i < m->np; i++) o->unit_bytes[unit_of(m, i)] += m->pbytes[i];
  o->g.iteration = params_iteration;
  o->g.finish = offload_finish;
  o->g.restart = offload_restart;
  m->h = (struct model_hooks){.ctx = o, .grad_ready = offload_grad_ready, .unit_enter = offload_enter,
                              .unit_leave = offload_leave};
  return 0;
}

static int offload_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  int target = param_choice(p, "target", "activations|params", "offload", err);
  if (target < 0) return -1;
  return offload_open_with(st, p, ctx, target, param_bool(p, "prefetch"), "offload", err);
}

SYNTH_WORKLOAD(offload,
               "GPT training moving saved activations (save_on_cpu) or parameters (staged per unit) to the host and back",
               offload_params, offload_open);
