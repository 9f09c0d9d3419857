/* trace_native.c - the `native` trace reader and writer (format in trace_native.h).
 * open() reads the file once to check every row and learn which devices have events
 * (constant memory), then rewinds; next() hands out the rows of the selected device
 * (ctx->trace_device, -1 = the lowest device with events). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "trace_native.h"
#include "trace_src.h"

#define NATIVE_MAX_DEVICES 64

struct native {
  struct trace_src src;
  int device;
  uint64_t mask;
  uint64_t last_line;
  char where[300];
};

int native_trace_write_header(FILE *f) {
  return fprintf(f, "%s\n%s\n", NATIVE_TRACE_MAGIC, NATIVE_TRACE_COLUMNS) < 0 ? -1 : 0;
}

int native_trace_write_event(FILE *f, const struct event *ev) {
  int rc;
  char pool[16] = "";   /* the pool column only where the event has one (older files have 5 columns) */
  if (ev->pool) snprintf(pool, sizeof pool, ",%u", ev->pool);
  switch (ev->op) {
  case OP_ALLOC:
    rc = fprintf(f, "alloc,%llu,%llu,%llu,%d%s\n", (unsigned long long)ev->id, (unsigned long long)ev->size,
                 (unsigned long long)ev->stream, ev->device, pool);
    break;
  case OP_FREE:   /* a free that waited for other streams (record_stream) keeps its mark */
    rc = fprintf(f, "free,%llu,,%s,%d\n", (unsigned long long)ev->id, ev->stream == EV_FREE_RECORDED ? "recorded" : "", ev->device);
    break;
  case OP_EMPTY_CACHE: rc = fprintf(f, "empty_cache,,,,%d%s\n", ev->device, pool); break;
  case OP_ITER: rc = fprintf(f, "iter,,,,%d\n", ev->device); break;
  case OP_POOL_RELEASE: rc = fprintf(f, "pool_release,,,,%d,%u\n", ev->device, ev->pool); break;
  default: return -1;
  }
  return rc < 0 ? -1 : 0;
}

__attribute__((format(printf, 3, 4)))
static int row_error(struct native *t, char *err, const char *fmt, ...) {   /* "FILE:LINE: what" */
  va_list ap;
  va_start(ap, fmt);
  src_verror_at(&t->src, 0, t->src.line_no, err, fmt, ap);
  va_end(ap);
  return -1;
}

/* a numeric field: required, or optional (empty = 0) */
static int field(struct native *t, const char *s, const char *name, const char *op, int required, int hex_ok,
                 uint64_t *out, char *err) {
  if (!*s) {
    if (required) return row_error(t, err, "%s without %s %s", op, name[0] == 'i' ? "an" : "a", name);
    *out = 0;
    return 0;
  }
  if (csv_u64(s, hex_ok, out)) return row_error(t, err, "%s '%.40s': expected a non-negative integer", name, s);
  return 0;
}

/* next valid row of any device: 1, 0 at the end, -1 */
static int read_row(struct native *t, struct event *ev, char *err) {
  size_t len;
  int rc;
  while ((rc = src_line(&t->src, &len, err)) > 0) {
    char *line = t->src.line;
    if (len == 0 || line[0] == '#') continue;
    if (memchr(line, 0, len)) return row_error(t, err, "unexpected NUL byte (expected a CSV row of text)");
    if (!strcmp(line, NATIVE_TRACE_COLUMNS)) continue;
    char *f[6];
    int n = csv_split(line, f, 6);
    if (n != 5 && n != 6)
      return row_error(t, err, "%d fields, expected 5 (%s) or 6 (with a pool)", n > 6 ? 7 : n, NATIVE_TRACE_COLUMNS);
    enum op op;
    if (!strcmp(f[0], "alloc")) op = OP_ALLOC;
    else if (!strcmp(f[0], "free")) op = OP_FREE;
    else if (!strcmp(f[0], "empty_cache")) op = OP_EMPTY_CACHE;
    else if (!strcmp(f[0], "iter")) op = OP_ITER;
    else if (!strcmp(f[0], "pool_release")) op = OP_POOL_RELEASE;
    else return row_error(t, err, "op '%.40s': expected alloc, free, empty_cache, iter or pool_release", f[0]);
    uint64_t id, size, stream, device, pool = 0;
    int pooled = op == OP_ALLOC || op == OP_EMPTY_CACHE || op == OP_POOL_RELEASE;
    if (n == 6 && !pooled) return row_error(t, err, "%s with a pool field (only alloc, empty_cache and pool_release have one)", f[0]);
    if (n == 6 && field(t, f[5], "pool", f[0], 0, 0, &pool, err)) return -1;
    if (op == OP_POOL_RELEASE && !pool) return row_error(t, err, "pool_release without a pool (expected 1..%d)", EV_POOL_MAX);
    if (pool > EV_POOL_MAX) return row_error(t, err, "pool %llu out of range (expected 0..%d)", (unsigned long long)pool, EV_POOL_MAX);
    uint64_t unused = 0;
    if (op == OP_POOL_RELEASE && (field(t, f[1], "id", f[0], 0, 1, &unused, err) || unused))
      return unused ? row_error(t, err, "pool_release with an id (expected an empty field)") : -1;
    int recorded = op == OP_FREE && !strcmp(f[3], "recorded");   /* a free that waited for other streams */
    if (field(t, f[1], "id", f[0], op == OP_ALLOC || op == OP_FREE, 1, &id, err) ||
        field(t, f[2], "size", f[0], op == OP_ALLOC, 0, &size, err) ||
        (!recorded && field(t, f[3], "stream", f[0], 0, 1, &stream, err)) ||
        field(t, f[4], "device", f[0], 1, 0, &device, err))
      return -1;
    if (size > TRACE_MAX_SIZE)
      return row_error(t, err, "size %llu out of range (expected at most 2^50)", (unsigned long long)size);
    if (op == OP_ALLOC && src_stream(&t->src, stream))
      return row_error(t, err, "stream %llu: more than %d distinct streams (the bound on streams in a trace)", (unsigned long long)stream,
                       TRACE_STREAMS_MAX);
    if (device >= NATIVE_MAX_DEVICES)
      return row_error(t, err, "device %llu out of range (expected 0..%d)", (unsigned long long)device, NATIVE_MAX_DEVICES - 1);
    *ev = (struct event){.op = op, .id = id, .size = op == OP_ALLOC ? size : 0,
                         .stream = op == OP_ALLOC ? stream : recorded ? EV_FREE_RECORDED : 0,
                         .device = (int)device, .pool = (uint32_t)pool};
    t->last_line = t->src.line_no;
    return 1;
  }
  return rc;
}

static int skip_magic(struct native *t, char *err) {
  size_t len;
  int rc = src_line(&t->src, &len, err);
  if (rc < 0) return -1;
  if (rc == 0 || strcmp(t->src.line, NATIVE_TRACE_MAGIC)) {
    snprintf(err, FB_ERRLEN, "%s:1: expected '%s' (this reader knows version 1 of the native trace format)",
             t->src.name, NATIVE_TRACE_MAGIC);
    return -1;
  }
  return 0;
}

static void native_close(void *st) {
  struct native *t = st;
  if (!t) return;
  src_close(&t->src);
  free(t);
}

int native_trace_open_src(void **st, struct trace_src *src, const struct workload_ctx *ctx, char *err) {
  struct native *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, FB_ERRLEN, "%s: out of memory", src->name);
    src_close(src);
    return -1;
  }
  t->src = *src;
  struct event ev;
  int rc;
  if (skip_magic(t, err)) goto fail;
  while ((rc = read_row(t, &ev, err)) > 0) t->mask |= 1ULL << ev.device;
  if (rc < 0) goto fail;
  t->device = ctx->trace_device;
  if (t->device == -1) t->device = t->mask ? __builtin_ctzll(t->mask) : 0;
  if (t->device < 0 || t->device >= NATIVE_MAX_DEVICES || (t->mask && !(t->mask & (1ULL << t->device)))) {
    snprintf(err, FB_ERRLEN, "%s: device %d has no events in this trace", t->src.name, ctx->trace_device);
    goto fail;
  }
  if (src_rewind(&t->src, err) || skip_magic(t, err)) goto fail;
  *st = t;
  return 0;
fail:
  native_close(t);
  return -1;
}

static int native_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  (void)p;
  if (ctx->src) return native_trace_open_src(st, ctx->src, ctx, err);   /* opened once by the caller (trace_mem.c) */
  struct trace_src src;
  if (src_open_path(&src, ctx->path, err)) return -1;
  return native_trace_open_src(st, &src, ctx, err);
}

static int native_next(void *st, struct event *ev, char *err) {
  struct native *t = st;
  int rc;
  while ((rc = read_row(t, ev, err)) > 0)
    if (ev->device == t->device) return 1;
  return rc;
}

static int native_rewind(void *st, char *err) {
  struct native *t = st;
  if (src_rewind(&t->src, err)) return -1;
  return skip_magic(t, err);
}

static void native_info(void *st, struct workload_info *out) {
  memset(out, 0, sizeof *out);
  out->device_mask = ((struct native *)st)->mask;
}

static const char *native_where(void *st) {
  struct native *t = st;
  snprintf(t->where, sizeof t->where, "%s:%llu", t->src.name, (unsigned long long)t->last_line);
  return t->where;
}

static int native_probe(const unsigned char *head, size_t n) {
  size_t m = strlen(NATIVE_TRACE_MAGIC);
  return n >= m && !memcmp(head, NATIVE_TRACE_MAGIC, m) && (n == m || head[m] == '\n' || head[m] == '\r');
}

const struct workload_ops native_trace_workload = {
  .name = "native",
  .help = "fragbench's own trace CSV ('# fragbench-trace v1', then op,id,size,stream,device), as `fragbench export` writes it",
  .params = NULL,
  .is_trace = 1,
  .probe = native_probe,
  .open = native_open,
  .next = native_next,
  .rewind = native_rewind,
  .info = native_info,
  .where = native_where,
  .close = native_close,
};
