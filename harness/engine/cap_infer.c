/* cap_infer.c - the cap a snapshot that ended in an OOM replays under; see cap_infer.h.
 * The recorded allocator's first failure moves later as the cap grows, so the caps
 * under which it fails exactly at PyTorch's OOM event form one range [cmin, cmax]:
 * two bisections find its ends, and the cap is its middle (rounded down to a MiB when
 * that stays inside), as far as possible from either edge. */
#include "cap_infer.h"
#include "inputs.h"
#include <stdio.h>
#include <string.h>

#define MIB (1ULL << 20)
#define NEVER INT64_MAX    /* the replay completed */

struct probe {
  const struct event_buffer *b;
  struct run_spec spec;
  struct cap_inference *ci;
  char *err;
};

/* where the recorded allocator first fails under cap: an event index, NEVER, or -1 on error */
static int64_t fails_at(struct probe *p, uint64_t cap) {
  struct run_spec s = p->spec;
  s.cap_bytes = cap;
  struct run_result r;
  run_result_init(&r);
  int cls = replay_run(&s, &r);
  p->ci->replays++;
  if (cls) {
    snprintf(p->err, FB_ERRLEN, "replaying the recorded allocator under %llu bytes: %.300s", (unsigned long long)cap, r.status);
    return -1;
  }
  if (!p->ci->recorded[0]) snprintf(p->ci->recorded, sizeof p->ci->recorded, "%s", r.allocator);
  return r.first_oom_event < 0 ? NEVER : r.first_oom_event;
}

static int search(struct probe *p) {
  struct cap_inference *ci = p->ci;
  int64_t t = ci->oom_event, g;
  uint64_t a = ci->lo, b = ci->hi - 1;
  /* wide intervals: the bisections stop within a MiB (segments come in 2 MiB steps, so
   * the ends found are still caps that fail at t, just not the extreme ones) */
  uint64_t gran = b - a >= 64 * MIB ? MIB : 1;
  int64_t ga = fails_at(p, a);
  if (ga < 0) return -1;
  if (ga > t) { ci->cap = a; ci->replay_event = ga; return 0; }   /* fails later even at the low end */
  int64_t gb = a == b ? ga : fails_at(p, b);
  if (gb < 0) return -1;
  if (gb < t) { ci->cap = b; ci->replay_event = gb; return 0; }   /* fails earlier even at the high end */
  /* cmin: the smallest cap that does not fail before t */
  uint64_t cmin = a;
  int64_t gmin = ga;
  if (ga < t) {
    uint64_t l = a, r = b;        /* fails_at(l) < t <= fails_at(r) */
    gmin = gb;
    while (r - l > gran) {
      uint64_t m = l + (r - l) / 2;
      if ((g = fails_at(p, m)) < 0) return -1;
      if (g < t) l = m; else { r = m; gmin = g; }
    }
    cmin = r;
  }
  if (gmin != t) { ci->cap = cmin; ci->replay_event = gmin; return 0; }   /* jumps over t */
  /* cmax: the largest cap that fails at t */
  uint64_t cmax = b;
  if (gb != t) {
    uint64_t l = cmin, r = b;     /* fails_at(l) == t < fails_at(r) */
    while (r - l > gran) {
      uint64_t m = l + (r - l) / 2;
      if ((g = fails_at(p, m)) < 0) return -1;
      if (g == t) l = m; else r = m;
    }
    cmax = l;
  }
  uint64_t c = cmin + (cmax - cmin) / 2;
  if (c / MIB * MIB >= cmin) c = c / MIB * MIB;
  if (c != cmin && c != cmax) {
    if ((g = fails_at(p, c)) < 0) return -1;
    if (g != t) c = cmin;
  }
  ci->cap = c;
  ci->replay_event = t;
  ci->matched = 1;
  return 0;
}

int cap_infer_events(const struct event_buffer *b, const char *trace, int trace_device,
                     struct cap_inference *out, char *err) {
  memset(out, 0, sizeof *out);
  out->oom_event = out->replay_event = -1;
  const struct workload_info *info = &b->info;
  if (!info->has_oom) return 0;
  for (size_t i = 0; i < b->n; i++)
    if (b->ev[i].op == OP_ALLOC && b->ev[i].id >= TRACE_OOM_ID_BASE) { out->oom_event = (int64_t)i; break; }
  if (out->oom_event < 0) return 0;   /* an oom entry on another device */
  out->has_oom = 1;
  out->device_limit = info->oom_device_limit;
  out->lo = info->limit_lo;
  out->hi = info->limit_hi > info->limit_lo ? info->limit_hi : info->limit_lo + 1;
  out->request = info->oom_request;
  out->segment = info->oom_segment;
  out->stream = info->oom_stream;
  out->device_free = info->oom_device_free;
  out->reserved = info->oom_reserved;
  out->released = info->oom_released;
  out->retries = info->limit_retries;
  snprintf(out->frames, sizeof out->frames, "%s", info->oom_frames);
  struct probe p = {.b = b, .ci = out, .err = err};
  p.spec.trace = trace;
  p.spec.events = b;
  p.spec.trace_device = trace_device;
  p.spec.world = 1;
  p.spec.seed = 1;
  p.spec.allocator = "recorded";
  p.spec.device.kind = "sim";
  p.spec.device.sim_total = out->hi > SIM_TOTAL_DEFAULT ? out->hi : SIM_TOTAL_DEFAULT;
  p.spec.on_oom = ON_OOM_STOP;
  p.spec.quiet = 1;
  return search(&p) ? 2 : 0;
}

int cap_infer_trace(const char *trace, int trace_device, struct cap_inference *out, char *err) {
  struct event_buffer b;
  memset(out, 0, sizeof *out);
  out->oom_event = out->replay_event = -1;
  const struct event_buffer *held = inputs_get(trace, trace_device);   /* read once for the command (inputs.h) */
  if (held) return held->info.has_oom ? cap_infer_events(held, trace, trace_device, out, err) : 0;
  /* the reader's own pass says whether there is an oom: only then the trace is held in memory */
  const struct workload_ops *ops = trace_detect(trace, err);
  if (!ops) return 2;
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .path = trace, .trace_device = trace_device};
  if (workload_open(&w, ops, NULL, &ctx, SIM_TOTAL_DEFAULT, err)) return 2;
  struct workload_info info;
  memset(&info, 0, sizeof info);
  if (ops->info) ops->info(w.st, &info);
  workload_close(&w);
  if (!info.has_oom) return 0;
  if (event_buffer_load(&b, trace, trace_device, err)) return 2;
  inputs_slot(&b);
  int rc = cap_infer_events(&b, trace, trace_device, out, err);
  event_buffer_free(&b);
  return rc;
}

/* the evidence alone; with replayed, also the cap every strategy replays under */
static void sentence(const struct cap_inference *ci, char *buf, size_t n, int replayed) {
  char a[32], b[32], c[32], q[32], f[32];
  fmt_bytes(ci->lo, a, sizeof a);
  fmt_bytes(ci->hi, b, sizeof b);
  fmt_bytes(ci->cap, c, sizeof c);
  fmt_bytes(ci->request, q, sizeof q);
  fmt_bytes(ci->device_free, f, sizeof f);
  size_t k = (size_t)snprintf(buf, n, "ends in an OOM at event %lld (a request of %s on stream %llu, %s free on the device",
                              (long long)ci->oom_event, q, (unsigned long long)ci->stream, f);
  if (k < n && ci->frames[0]) {   /* the first three frames */
    const char *e = ci->frames;
    for (int i = 0; i < 3 && e; i++) e = strstr(e + (i ? 2 : 0), "; ");
    int len = e ? (int)(e - ci->frames) : (int)strlen(ci->frames);
    k += (size_t)snprintf(buf + k, n - k, ", at %.*s%s", len, ci->frames, e ? "; ..." : "");
  }
  if (k < n) k += (size_t)snprintf(buf + k, n - k, "): ");
  if (k >= n) return;
  if (ci->device_limit)
    k += (size_t)snprintf(buf + k, n - k, "the device itself was full, the limit was %s", c);
  else
    k += (size_t)snprintf(buf + k, n - k, "the limit was between %s and %s", a, b);
  if (k >= n || !replayed) return;
  k += (size_t)snprintf(buf + k, n - k, "; every strategy replayed under %s (%llu bytes)", c, (unsigned long long)ci->cap);
  if (k < n && !ci->matched) {
    if (ci->replay_event < 0 || ci->replay_event == NEVER)
      k += (size_t)snprintf(buf + k, n - k, ", under which %s completes", ci->recorded);
    else
      k += (size_t)snprintf(buf + k, n - k, ", under which %s fails at event %lld, not %lld (no cap inside the interval matches)",
                            ci->recorded, (long long)ci->replay_event, (long long)ci->oom_event);
  }
  if (k < n) snprintf(buf + k, n - k, "; --limit or --oom-message overrides, --no-infer-cap turns this off");
}

void cap_infer_sentence(const struct cap_inference *ci, char *buf, size_t n) { sentence(ci, buf, n, 1); }
void cap_infer_evidence(const struct cap_inference *ci, char *buf, size_t n) { sentence(ci, buf, n, 0); }

const char *cap_infer_place(const struct cap_inference *ci, uint64_t need) {
  return need < ci->lo ? "below" : need < ci->hi ? "inside" : "above";
}
