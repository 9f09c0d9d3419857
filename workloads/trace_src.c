/* trace_src.c - the readers' byte source: a zlib-read file (plain or gzip'd) or memory,
 * seen through one fixed window, with stream offsets and CSV line cutting. */
#include "trace_src.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TRACE_SRC_IN_BUF
#define TRACE_SRC_IN_BUF (1u << 17)   /* compressed bytes read at a time */
#endif
#define IN_BUF TRACE_SRC_IN_BUF

int src_open_path(struct trace_src *s, const char *path, char *err) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", path);
  s->f = src_held_open(path);   /* held in memory for this command (trace_hold.c), or the file */
  if (!s->f) s->f = fopen(path, "rb");
  if (!s->f) {
    snprintf(err, FB_ERRLEN, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  s->buf = malloc(TRACE_SRC_BUF);
  s->in = malloc(IN_BUF);
  if (!s->buf || !s->in) {
    src_close(s);
    snprintf(err, FB_ERRLEN, "%s: out of memory", path);
    return -1;
  }
  s->start = s->p = s->end = s->buf;
  int c0 = getc(s->f), c1 = c0 == EOF ? EOF : getc(s->f);
  s->gzip = c0 == 0x1f && c1 == 0x8b;
  rewind(s->f);
  if (s->gzip && (!(s->z = calloc(1, sizeof *s->z)) || inflateInit2(s->z, 15 + 16) != Z_OK)) {
    free(s->z);
    s->z = NULL;
    s->gzip = 0;
    src_close(s);
    snprintf(err, FB_ERRLEN, "%s: out of memory", path);
    return -1;
  }
  return 0;
}

void src_open_mem(struct trace_src *s, const void *buf, size_t n, const char *name) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->mem = buf;
  s->mem_len = n;
  s->start = s->p = s->mem;
  s->end = s->mem + n;
  s->at_eof = 1;
}

int src_rewind(struct trace_src *s, char *err) {
  s->line_no = 0;
  s->base = 0;
  if (!s->f) {
    s->p = s->start;
    return 0;
  }
  rewind(s->f);
  if (s->gzip) {
    inflateReset(s->z);
    s->z->avail_in = 0;
    s->raw_off = 0;
    s->member_end = 0;
  }
  if (ferror(s->f)) {
    snprintf(err, FB_ERRLEN, "%s: cannot rewind", s->name);
    return -1;
  }
  s->at_eof = 0;
  s->start = s->p = s->end = s->buf;
  return 0;
}

void src_close(struct trace_src *s) {
  if (s->f) fclose(s->f);
  if (s->gzip) inflateEnd(s->z);
  free(s->z);
  s->z = NULL;
  free(s->buf);
  free(s->in);
  free(s->streams);
  s->streams = NULL;
  s->nstreams = 0;
  s->f = NULL;
  s->gzip = 0;
  s->buf = s->in = NULL;
}

static int gz_error(struct trace_src *s, char *err, const char *what) {
  snprintf(err, FB_ERRLEN, "%s: compressed byte %llu: %s", s->name, (unsigned long long)s->raw_off, what);
  return -1;
}

/* up to room decompressed bytes into out: the count, 0 at the clean end of the last
 * member, -1 with err */
static long gz_read(struct trace_src *s, uint8_t *out, size_t room, char *err) {
  z_stream *z = s->z;
  z->next_out = out;
  z->avail_out = (uInt)room;
  while (z->avail_out == room) {
    if (z->avail_in == 0) {
      size_t k = fread(s->in, 1, IN_BUF, s->f);
      if (ferror(s->f)) return gz_error(s, err, "read error");
      z->next_in = s->in;
      z->avail_in = (uInt)k;
      if (k == 0) {
        if (s->member_end) return 0;
        return gz_error(s, err, "truncated gzip data: the file ends before the gzip stream does (its data or its 8-byte "
                                "CRC-32/length trailer is cut)");
      }
    }
    if (s->member_end) {   /* more bytes after a member: another member, or garbage */
      if (z->avail_in >= 2 && !(z->next_in[0] == 0x1f && z->next_in[1] == 0x8b))
        return gz_error(s, err, "trailing garbage after the gzip stream (expected the end of the file or another gzip member)");
      if (z->avail_in == 1 && z->next_in[0] != 0x1f)
        return gz_error(s, err, "trailing garbage after the gzip stream (expected the end of the file or another gzip member)");
      inflateReset(z);
      s->member_end = 0;
    }
    uInt before = z->avail_in;
    int rc = inflate(z, Z_NO_FLUSH);
    s->raw_off += before - z->avail_in;
    if (rc == Z_STREAM_END) { s->member_end = 1; continue; }
    if (rc == Z_DATA_ERROR) {
      const char *m = z->msg ? z->msg : "corrupt data";
      if (!strcmp(m, "incorrect data check"))
        return gz_error(s, err, "gzip CRC-32 mismatch: the data does not match the CRC in the trailer (corrupt file)");
      if (!strcmp(m, "incorrect length check"))
        return gz_error(s, err, "gzip length mismatch: the data is not as long as the trailer's ISIZE says (corrupt file)");
      char buf[160];
      snprintf(buf, sizeof buf, "corrupt gzip data: %s", m);
      return gz_error(s, err, buf);
    }
    if (rc == Z_MEM_ERROR) return gz_error(s, err, "out of memory");
    if (rc != Z_OK && rc != Z_BUF_ERROR) return gz_error(s, err, "corrupt gzip data");
  }
  return (long)(room - z->avail_out);
}

/* up to room bytes of the stream: the count, 0 at its end, -1 with err */
static long raw_read(struct trace_src *s, uint8_t *out, size_t room, char *err) {
  if (s->gzip) return gz_read(s, out, room, err);
  size_t k = fread(out, 1, room, s->f);
  if (!k && ferror(s->f)) {
    snprintf(err, FB_ERRLEN, "%s: byte %llu: read error: %s", s->name, (unsigned long long)src_offset(s), strerror(errno));
    return -1;
  }
  return (long)k;
}

int src_fill(struct trace_src *s, size_t n, char *err) {
  while ((size_t)(s->end - s->p) < n) {
    if (s->at_eof) return 0;
    /* slide what is left to the front, then read behind it */
    size_t left = (size_t)(s->end - s->p);
    s->base += (uint64_t)(s->p - s->start);
    memmove(s->buf, s->p, left);
    s->start = s->p = s->buf;
    s->end = s->buf + left;
    long got = raw_read(s, s->buf + left, TRACE_SRC_BUF - left, err);
    if (got < 0) return -1;
    if (got == 0) s->at_eof = 1;
    s->end += got;
  }
  return 1;
}

int src_drain(struct trace_src *s, char *err) {
  for (;;) {
    s->p = s->end;
    int rc = src_fill(s, 1, err);
    if (rc <= 0) return rc;
  }
}

int src_skip(struct trace_src *s, uint64_t n, char *err) {
  for (;;) {
    uint64_t have = (uint64_t)(s->end - s->p);
    if (have >= n) {
      s->p += n;
      return 1;
    }
    n -= have;
    s->p = s->end;
    int rc = src_fill(s, 1, err);
    if (rc <= 0) return rc;
  }
}

int src_line(struct trace_src *s, size_t *len, char *err) {
  size_t scanned = 0;
  for (;;) {
    const uint8_t *nl = memchr(s->p + scanned, '\n', (size_t)(s->end - s->p) - scanned);
    size_t n;
    if (nl) {
      n = (size_t)(nl - s->p);
    } else {
      scanned = (size_t)(s->end - s->p);
      if (scanned < TRACE_LINE_MAX) {
        int rc = src_fill(s, scanned + 1, err);
        if (rc < 0) return -1;
        if (rc > 0) continue;
      }
      if (scanned == 0) return 0;            /* clean end of stream */
      n = scanned;                           /* last line without \n, or an overlong one */
    }
    s->line_no++;
    if (n >= TRACE_LINE_MAX) {
      snprintf(err, FB_ERRLEN, "%s:%llu: line longer than %d characters (expected a CSV row)", s->name,
               (unsigned long long)s->line_no, TRACE_LINE_MAX - 1);
      return -1;
    }
    memcpy(s->line, s->p, n);
    s->p += n + (nl ? 1 : 0);
    if (n && s->line[n - 1] == '\r') n--;
    s->line[n] = 0;
    *len = n;
    return 1;
  }
}

int src_verror_at(const struct trace_src *s, int at_byte, uint64_t where, char *err, const char *fmt, va_list ap) {
  int k = at_byte ? snprintf(err, FB_ERRLEN, "%s: byte %llu: ", s->name, (unsigned long long)where)
                  : snprintf(err, FB_ERRLEN, "%s:%llu: ", s->name, (unsigned long long)where);
  if (k >= 0 && k < FB_ERRLEN) vsnprintf(err + k, (size_t)(FB_ERRLEN - k), fmt, ap);
  return -1;
}

int src_error(const struct trace_src *s, char *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  src_verror_at(s, 0, s->line_no, err, fmt, ap);
  va_end(ap);
  return -1;
}

int src_error_at(const struct trace_src *s, uint64_t byte, char *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  src_verror_at(s, 1, byte, err, fmt, ap);
  va_end(ap);
  return -1;
}

int src_stream_slow(struct trace_src *s, uint64_t id) {
  uint32_t lo = 0, hi = s->nstreams;   /* binary search: no crafted ids make it slower */
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (s->streams[mid] < id) lo = mid + 1; else hi = mid;
  }
  if (lo == s->nstreams || s->streams[lo] != id) {
    if (s->nstreams == TRACE_STREAMS_MAX) return -1;
    if (!s->streams && !(s->streams = malloc(TRACE_STREAMS_MAX * sizeof *s->streams))) return -1;
    memmove(s->streams + lo + 1, s->streams + lo, (s->nstreams - lo) * sizeof *s->streams);
    s->streams[lo] = id;
    s->nstreams++;
  }
  s->last_stream = id;
  return 0;
}

int csv_split(char *line, char **fields, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    if (n == max) return max + 1;
    fields[n++] = p;
    char *c = strchr(p, ',');
    if (!c) return n;
    *c = 0;
    p = c + 1;
  }
}

int csv_u64(const char *s, int hex_ok, uint64_t *out) {
  uint64_t v = 0;
  if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    if (!*s) return -1;
    for (; *s; s++) {
      int d;
      if (*s >= '0' && *s <= '9') d = *s - '0';
      else if (*s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
      else if (*s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
      else return -1;
      if (v >> 60) return -1;
      v = (v << 4) | (uint64_t)d;
    }
  } else {
    if (!*s) return -1;
    for (; *s; s++) {
      if (*s < '0' || *s > '9') return -1;
      uint64_t d = (uint64_t)(*s - '0');
      if (v > (UINT64_MAX - d) / 10) return -1;
      v = v * 10 + d;
    }
  }
  *out = v;
  return 0;
}
