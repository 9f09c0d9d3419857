/* trace_rmm.c - the `rmm_log` trace reader: RAPIDS RMM logging_resource_adaptor CSV logs
 * (plain or gzip'd):
 *
 *   Thread,Time,Action,Pointer,Size,Stream
 *   2342727,01:27:50.125087,allocate,0x7ff7e0000000,67108864,0
 *
 * allocate -> OP_ALLOC (id = pointer), free -> OP_FREE, allocate failure -> the failed
 * request replayed as OP_ALLOC of a synthetic id then OP_FREE of it (as the snapshot
 * reader does with oom entries). Rows replay in file order: times are checked
 * (HH:MM:SS.uuuuuu; a jump back of more than 12 hours is midnight) but threads interleave,
 * so an earlier time than the row before is a warning on stderr (once), not an error.
 * An RMM log is one device's resource: every event is device 0. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_src.h"

#define RMM_HEADER "Thread,Time,Action,Pointer,Size,Stream"
#define FAILED_ID_BASE (1ULL << 63)
#define US_PER_DAY (86400ULL * 1000000ULL)

struct rmm {
  struct trace_src src;
  uint64_t prev_us;
  int have_prev, warned;
  uint64_t fail_no;
  int pending_free;
  uint64_t pending_id;
  uint64_t last_line;
  char where[300];
};

/* HH:MM:SS.f (1..9 fraction digits, read as microseconds): microseconds since midnight */
static int parse_time(const char *s, uint64_t *us) {
  int hh, mm, ss, n = 0;
  if (strlen(s) < 10 || s[2] != ':' || s[5] != ':' || s[8] != '.') return -1;
  for (int i = 0; i < 8; i++)
    if (i != 2 && i != 5 && (s[i] < '0' || s[i] > '9')) return -1;
  hh = (s[0] - '0') * 10 + (s[1] - '0');
  mm = (s[3] - '0') * 10 + (s[4] - '0');
  ss = (s[6] - '0') * 10 + (s[7] - '0');
  if (hh > 23 || mm > 59 || ss > 60) return -1;
  uint64_t frac = 0;
  const char *f = s + 9;
  for (; f[n]; n++) {
    if (n >= 9 || f[n] < '0' || f[n] > '9') return -1;
    if (n < 6) frac = frac * 10 + (uint64_t)(f[n] - '0');
  }
  if (n == 0) return -1;
  for (int i = n; i < 6; i++) frac *= 10;
  *us = (((uint64_t)hh * 60 + (uint64_t)mm) * 60 + (uint64_t)ss) * 1000000ULL + frac;
  return 0;
}

static int rmm_skip_header(struct rmm *r, char *err) {
  size_t len;
  int rc = src_line(&r->src, &len, err);
  if (rc < 0) return -1;
  const char *h = r->src.line;
  if (rc > 0 && !strncmp(h, "\xef\xbb\xbf", 3)) h += 3;   /* a UTF-8 byte order mark */
  if (rc == 0 || strcmp(h, RMM_HEADER)) {
    snprintf(err, FB_ERRLEN, "%s:1: expected the RMM log header '%s'", r->src.name, RMM_HEADER);
    return -1;
  }
  r->have_prev = 0;
  r->fail_no = 0;
  r->pending_free = 0;
  return 0;
}

static void rmm_close(void *st) {
  struct rmm *r = st;
  if (!r) return;
  src_close(&r->src);
  free(r);
}

int rmm_log_open_src(void **st, struct trace_src *src, const struct workload_ctx *ctx, char *err) {
  if (ctx->trace_device > 0) {
    snprintf(err, FB_ERRLEN, "%s: an RMM log holds one device's events (device 0); --trace-device %d does not apply",
             src->name, ctx->trace_device);
    src_close(src);
    return -1;
  }
  struct rmm *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, FB_ERRLEN, "%s: out of memory", src->name);
    src_close(src);
    return -1;
  }
  r->src = *src;
  if (rmm_skip_header(r, err)) {
    rmm_close(r);
    return -1;
  }
  *st = r;
  return 0;
}

static int rmm_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  (void)p;
  if (ctx->src) return rmm_log_open_src(st, ctx->src, ctx, err);   /* opened once by the caller (trace_mem.c) */
  struct trace_src src;
  if (src_open_path(&src, ctx->path, err)) return -1;
  return rmm_log_open_src(st, &src, ctx, err);
}

__attribute__((format(printf, 3, 4)))
static int row_error(struct rmm *r, char *err, const char *fmt, ...) {   /* "FILE:LINE: what" */
  va_list ap;
  va_start(ap, fmt);
  src_verror_at(&r->src, 0, r->src.line_no, err, fmt, ap);
  va_end(ap);
  return -1;
}

static int rmm_next(void *st, struct event *ev, char *err) {
  struct rmm *r = st;
  if (r->pending_free) {
    r->pending_free = 0;
    *ev = (struct event){.op = OP_FREE, .id = r->pending_id};
    return 1;
  }
  size_t len;
  int rc;
  while ((rc = src_line(&r->src, &len, err)) > 0) {
    char *line = r->src.line;
    if (len == 0) continue;
    if (memchr(line, 0, len)) return row_error(r, err, "unexpected NUL byte (expected a CSV row of text)");
    char *f[6];
    int n = csv_split(line, f, 6);
    if (n != 6) return row_error(r, err, "%d fields, expected 6 (%s)", n > 6 ? 7 : n, RMM_HEADER);
    uint64_t thread, us, ptr = 0, size, stream;
    if (csv_u64(f[0], 1, &thread)) return row_error(r, err, "thread '%.40s': expected a thread id (a number)", f[0]);
    if (parse_time(f[1], &us)) return row_error(r, err, "time '%.40s': expected HH:MM:SS.uuuuuu", f[1]);
    int failure = !strcmp(f[2], "allocate failure");
    int alloc = failure || !strcmp(f[2], "allocate");
    if (!alloc && strcmp(f[2], "free") && strcmp(f[2], "deallocate"))
      return row_error(r, err, "action '%.40s': expected allocate, free or allocate failure", f[2]);
    if (!(failure && (!strcmp(f[3], "(nil)") || !f[3][0])) && csv_u64(f[3], 1, &ptr))
      return row_error(r, err, "pointer '%.40s': expected a hex address (0x...)", f[3]);
    if (ptr >= FAILED_ID_BASE)   /* no device address is this high; these ids are the failed requests' */
      return row_error(r, err, "pointer %.40s out of range (expected below 0x8000000000000000)", f[3]);
    if (csv_u64(f[4], 0, &size)) return row_error(r, err, "size '%.40s': expected a number of bytes", f[4]);
    if (size > TRACE_MAX_SIZE)
      return row_error(r, err, "size %llu out of range (expected at most 2^50)", (unsigned long long)size);
    if (csv_u64(f[5], 1, &stream)) return row_error(r, err, "stream '%.40s': expected 0 or a hex stream handle", f[5]);
    if (src_stream(&r->src, stream))
      return row_error(r, err, "stream %.40s: more than %d distinct streams (the bound on streams in a trace)", f[5], TRACE_STREAMS_MAX);
    (void)thread;
    if (r->have_prev && us < r->prev_us && r->prev_us - us <= US_PER_DAY / 2 && !r->warned) {
      fprintf(stderr, "fragbench: warning: %s:%llu: time %s is earlier than the row before (threads interleave); "
              "rows are replayed in file order\n", r->src.name, (unsigned long long)r->src.line_no, f[1]);
      r->warned = 1;
    }
    r->prev_us = us;
    r->have_prev = 1;
    r->last_line = r->src.line_no;
    if (failure) {
      r->pending_id = FAILED_ID_BASE | r->fail_no++;
      r->pending_free = 1;
      *ev = (struct event){.op = OP_ALLOC, .id = r->pending_id, .size = size, .stream = stream};
    } else if (alloc) {
      *ev = (struct event){.op = OP_ALLOC, .id = ptr, .size = size, .stream = stream};
    } else {
      *ev = (struct event){.op = OP_FREE, .id = ptr};
    }
    return 1;
  }
  return rc;
}

static int rmm_rewind(void *st, char *err) {
  struct rmm *r = st;
  if (src_rewind(&r->src, err)) return -1;
  return rmm_skip_header(r, err);
}

static void rmm_info(void *st, struct workload_info *out) {
  (void)st;
  memset(out, 0, sizeof *out);
  out->device_mask = 1;
}

static const char *rmm_where(void *st) {
  struct rmm *r = st;
  snprintf(r->where, sizeof r->where, "%s:%llu", r->src.name, (unsigned long long)r->last_line);
  return r->where;
}

static int rmm_probe(const unsigned char *head, size_t n) {
  size_t h = strlen(RMM_HEADER), skip = 0;
  if (n >= 3 && !memcmp(head, "\xef\xbb\xbf", 3)) skip = 3;
  return n >= skip + h && !memcmp(head + skip, RMM_HEADER, h) &&
         (n == skip + h || head[skip + h] == '\n' || head[skip + h] == '\r');
}

const struct workload_ops rmm_log_workload = {
  .name = "rmm_log",
  .help = "RAPIDS RMM logging_resource_adaptor CSV (Thread,Time,Action,Pointer,Size,Stream), plain or gzip'd",
  .params = NULL,
  .is_trace = 1,
  .probe = rmm_probe,
  .open = rmm_open,
  .next = rmm_next,
  .rewind = rmm_rewind,
  .info = rmm_info,
  .where = rmm_where,
  .close = rmm_close,
};
