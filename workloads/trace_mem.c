/* trace_mem.c - a trace held in memory: event_buffer_load reads any trace once through
 * its reader; trace_mem_workload replays the buffer (no parsing, no decompression), for
 * a command that replays one trace many times (harness/engine/inputs.h, advise). A
 * warning's "file:line" is the reader's own: the file is read again up to that event,
 * only then (a bad event, rare). Not in the registry: a run_spec
 * names the buffer (replay.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "workload.h"
#include "trace_src.h"

int event_buffer_load(struct event_buffer *b, const char *path, int trace_device, char *err) {
  return event_buffer_load_max(b, path, trace_device, SIZE_MAX, err);
}

int event_buffer_load_max(struct event_buffer *b, const char *path, int trace_device, size_t max_events, char *err) {
  memset(b, 0, sizeof *b);
  struct trace_src src;   /* opened once: its format told from its first bytes, then read by that reader */
  if (src_open_path(&src, path, err)) return -1;
  const struct workload_ops *ops = trace_detect_src(&src, path, err);
  if (!ops) { src_close(&src); return -1; }
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .path = path, .trace_device = trace_device, .src = &src};
  if (workload_open(&w, ops, NULL, &ctx, 0, err)) return -1;
  if (ops->info) ops->info(w.st, &b->info);
  int rc;
  struct event ev;
  while ((rc = workload_next(&w, &ev, err)) == 1)
    if (b->n >= max_events) {
      snprintf(err, FB_ERRLEN, "%s: more than %zu events: not held in memory", path, max_events);
      rc = -1;
      break;
    } else if (event_buffer_push(b, &ev)) { snprintf(err, FB_ERRLEN, "%s: out of host memory holding the trace", path); rc = -1; break; }
  workload_close(&w);
  if (rc < 0) { event_buffer_free(b); return -1; }
  b->info.holds_whole_trace = 1;
  b->reader = ops;
  b->trace_device = trace_device;
  b->path = strdup(path);   /* NULL out of memory: warnings name the trace without its line */
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
  b->slot_table = 0;
  return 0;
}

void event_buffer_free(struct event_buffer *b) {
  free(b->ev);
  free(b->path);
  b->ev = NULL;
  b->path = NULL;
  b->n = b->cap = 0;
  b->slot_table = 0;
}

struct mem { const struct event_buffer *b; size_t pos; char where[320]; };

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

static int mem_span(void *st, const struct event **ev, int max, char *err) {
  (void)err;
  struct mem *m = st;
  size_t left = m->b->n - m->pos, n = left < (size_t)max ? left : (size_t)max;
  *ev = m->b->ev + m->pos;
  m->pos += n;
  return (int)n;
}

static int mem_rewind(void *st, char *err) {
  (void)err;
  ((struct mem *)st)->pos = 0;
  return 0;
}

/* the reader's "file:line" after the same events (replay pulls events in batches: the
 * last one pulled), by reading the file again that far */
static const char *mem_where(void *st) {
  struct mem *m = st;
  const struct event_buffer *b = m->b;
  if (!b->reader || !b->reader->where || !b->path) return NULL;
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .path = b->path, .trace_device = b->trace_device};
  char err[FB_ERRLEN];
  if (workload_open(&w, b->reader, NULL, &ctx, 0, err)) return NULL;
  struct event ev;
  size_t k = 0;
  while (k < m->pos && workload_next(&w, &ev, err) == 1) k++;
  const char *s = k == m->pos ? b->reader->where(w.st) : NULL;
  if (s) snprintf(m->where, sizeof m->where, "%s", s);
  workload_close(&w);
  return s ? m->where : NULL;
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
  .span = mem_span,
  .rewind = mem_rewind,
  .info = mem_info,
  .where = mem_where,
  .close = mem_close,
};
