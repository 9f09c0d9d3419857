/* trace_src.h - the byte source every trace reader parses from: a file read through zlib
 * (plain, or gzip'd: inflated here, each member's CRC-32 and length checked against its
 * trailer, anything after the last member refused) or a buffer in memory (fuzzing, tests).
 * It keeps a window of the decompressed stream, knows the byte offset of every position
 * (for messages), and cuts CSV lines. Memory is two fixed buffers, whatever the file size.
 *
 * Also declares the readers' byte-source entry points, so that fuzz targets and tests
 * can run a reader over memory without a file. */
#ifndef FB_TRACE_SRC_H
#define FB_TRACE_SRC_H
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <zlib.h>
#include "workload.h"

#ifndef TRACE_SRC_BUF                /* the fuzz targets build with a small one: more window slides per input */
#define TRACE_SRC_BUF (1u << 20)     /* file window; strings we keep are far shorter */
#endif
#define TRACE_LINE_MAX 4096          /* longest CSV line accepted */

struct trace_src {
  FILE *f;                   /* NULL: memory source */
  int gzip;                  /* the file starts with gzip's magic: inflated here */
  z_stream *z;               /* gzip: the inflate state (gzip wrapper: CRC-32 and ISIZE checked); on the
                              * heap, as zlib keeps its address and readers move this struct */
  uint8_t *in;               /* gzip: compressed bytes read, not yet inflated */
  uint64_t raw_off;          /* gzip: compressed bytes consumed by inflate so far */
  int member_end;            /* gzip: a member ended (its trailer checked); more input must be a member */
  const uint8_t *mem;        /* memory source: the whole input */
  size_t mem_len;
  uint8_t *buf;              /* file source: the window */
  const uint8_t *start;      /* window start (buf, or mem) */
  const uint8_t *p, *end;    /* current position and end of valid bytes */
  uint64_t base;             /* stream offset of *start */
  int at_eof;                /* the underlying stream has no more bytes */
  uint64_t line_no;          /* lines handed out by src_line so far */
  uint64_t *streams;         /* distinct stream ids seen, ascending (src_stream) */
  uint32_t nstreams;
  uint64_t last_stream;      /* the last id src_stream was given (valid when nstreams) */
  char line[TRACE_LINE_MAX];
  char name[256];            /* the file, for messages */
};

int  src_open_path(struct trace_src *s, const char *path, char *err);
/* trace_hold.c: the file read whole into memory once (at most max_bytes); while held,
 * src_open_path(path) reads it from there. 0 held, 1 not held (too large or empty: its
 * readers open the file), -1 it cannot be opened (err). src_release_all frees them. */
int  src_hold(const char *path, size_t max_bytes, char *err);
FILE *src_held_open(const char *path);
void src_release_all(void);
void src_open_mem(struct trace_src *s, const void *buf, size_t n, const char *name);
int  src_rewind(struct trace_src *s, char *err);
void src_close(struct trace_src *s);

/* Make n bytes available at s->p (n <= TRACE_SRC_BUF / 2): 1, 0 at end of stream (fewer
 * than n left), -1 on a read error or bad gzip data (err set: file, compressed byte, what:
 * truncated, a CRC or length that does not match the trailer, trailing garbage). */
int src_fill(struct trace_src *s, size_t n, char *err);
static inline int src_need(struct trace_src *s, size_t n, char *err) {
  return (size_t)(s->end - s->p) >= n ? 1 : src_fill(s, n, err);
}
static inline uint64_t src_offset(const struct trace_src *s) {
  return s->base + (uint64_t)(s->p - s->start);
}
/* Read the rest of the stream (a reader that stops at its format's end, as a pickle's
 * STOP, calls it so that a gzip trailer is checked): 0, or -1 with err. */
int src_drain(struct trace_src *s, char *err);
/* Skip n bytes: 1, 0 if the stream ends first, -1 on error. */
int src_skip(struct trace_src *s, uint64_t n, char *err);

/* Next line (without its \n or \r\n) copied into s->line, NUL-terminated; *len its
 * length. 1, 0 at end of stream, -1 on error (a line too long, a read error). */
int src_line(struct trace_src *s, size_t *len, char *err);

/* The one error-with-location formatter of the trace readers: "FILE:LINE: what" for the
 * line src_line handed out last (CSV readers), or "FILE: byte N: what" (byte given: the
 * pickle reader). Both return -1. */
int src_error(const struct trace_src *s, char *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int src_error_at(const struct trace_src *s, uint64_t byte, char *err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int src_verror_at(const struct trace_src *s, int at_byte, uint64_t where, char *err, const char *fmt, va_list ap);

/* Distinct stream ids a trace may use: the allocators keep a pool per stream, so a file
 * with one stream per event would grow them without bound. */
#ifndef TRACE_STREAMS_MAX
#define TRACE_STREAMS_MAX 1024
#endif
/* note a stream id: 0, or -1 when it would be the (TRACE_STREAMS_MAX + 1)th distinct one
 * (or out of memory) */
int src_stream_slow(struct trace_src *s, uint64_t id);
static inline int src_stream(struct trace_src *s, uint64_t id) {
  return s->nstreams && id == s->last_stream ? 0 : src_stream_slow(s, id);
}

/* CSV fields: split line in place at commas into at most max fields; returns the count
 * (max + 1 when there are more). */
int csv_split(char *line, char **fields, int max);
/* Unsigned integers: decimal, or hex with 0x (hex_ok). 0, or -1 if not a number / overflow. */
int csv_u64(const char *s, int hex_ok, uint64_t *out);

/* The readers over a byte source (they take ownership of src: closed by close()). */
int pytorch_snapshot_open_src(void **st, struct trace_src *src, const struct workload_ctx *ctx, char *err);
int rmm_log_open_src(void **st, struct trace_src *src, const struct workload_ctx *ctx, char *err);
int native_trace_open_src(void **st, struct trace_src *src, const struct workload_ctx *ctx, char *err);

/* Largest size a trace may carry for one allocation or segment (1 PiB): anything above
 * is a corrupt file, not a program. */
#define TRACE_MAX_SIZE (1ULL << 50)

#endif
