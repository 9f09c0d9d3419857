/* trace_mem.c - a trace held in memory: event_buffer_load reads any trace once through
 * its reader; trace_mem_workload replays the buffer (no parsing, no decompression), for
 * searches that replay one trace many times (advise). Not in the registry: a run_spec
 * names the buffer (replay.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "workload.h"

int event_buffer_load(struct event_buffer *b, const char *path, int trace_device, char *err) {
  memset(b, 0, sizeof *b);
  const struct workload_ops *ops = trace_detect(path, err);
  if (!ops) return -1;
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .path = path, .trace_device = trace_device};
  if (workload_open(&w, ops, NULL, &ctx, 0, err)) return -1;
  if (ops->info) ops->info(w.st, &b->info);
  int rc;
  struct event ev;
  while ((rc = workload_next(&w, &ev, err)) == 1)
    if (event_buffer_push(b, &ev)) { snprintf(err, FB_ERRLEN, "%s: out of host memory holding the trace", path); rc = -1; break; }
  workload_close(&w);
  if (rc < 0) { event_buffer_free(b); return -1; }
  b->info.holds_whole_trace = 1;
  return 0;
}

int event_buffer_push(struct event_buffer *b, const struct event *e) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 4096;
    struct event *more = realloc(b->ev, cap * sizeof *more);
    if (!more) return -1;
    b->ev = more;
    b->cap = cap;
  }
  b->ev[b->n++] = *e;
  return 0;
}

void event_buffer_free(struct event_buffer *b) {
  free(b->ev);
  b->ev = NULL;
  b->n = b->cap = 0;
}

struct mem { const struct event_buffer *b; size_t pos; };

static int mem_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  (void)p;
  if (!ctx->events) { snprintf(err, FB_ERRLEN, "trace_mem: no trace in memory"); return -1; }
  struct mem *m = calloc(1, sizeof *m);
  if (!m) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  m->b = ctx->events;
  *st = m;
  return 0;
}

static int mem_next(void *st, struct event *ev, char *err) {
  (void)err;
  struct mem *m = st;
  if (m->pos >= m->b->n) return 0;
  *ev = m->b->ev[m->pos++];
  return 1;
}

static int mem_rewind(void *st, char *err) {
  (void)err;
  ((struct mem *)st)->pos = 0;
  return 0;
}

static void mem_info(void *st, struct workload_info *out) { *out = ((struct mem *)st)->b->info; }

static void mem_close(void *st) { free(st); }

const struct workload_ops trace_mem_workload = {
  .name = "trace_mem",
  .help = "a trace already read into memory (advise's replays)",
  .params = NULL,
  .is_trace = 1,
  .open = mem_open,
  .next = mem_next,
  .rewind = mem_rewind,
  .info = mem_info,
  .close = mem_close,
};
