/* trace_src.c - the readers' byte source: a zlib-read file (plain or gzip'd) or memory,
 * seen through one fixed window, with stream offsets and CSV line cutting. */
#include "trace_src.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int src_open_path(struct trace_src *s, const char *path, char *err) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", path);
  s->gz = gzopen(path, "rb");
  if (!s->gz) {
    snprintf(err, FB_ERRLEN, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
    return -1;
  }
  gzbuffer(s->gz, 1u << 17);
  s->buf = malloc(TRACE_SRC_BUF);
  if (!s->buf) {
    gzclose(s->gz);
    s->gz = NULL;
    snprintf(err, FB_ERRLEN, "%s: out of memory", path);
    return -1;
  }
  s->start = s->p = s->end = s->buf;
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
  if (!s->gz) {
    s->p = s->start;
    return 0;
  }
  if (gzrewind(s->gz)) {
    snprintf(err, FB_ERRLEN, "%s: cannot rewind", s->name);
    return -1;
  }
  s->at_eof = 0;
  s->start = s->p = s->end = s->buf;
  return 0;
}

void src_close(struct trace_src *s) {
  if (s->gz) gzclose(s->gz);
  free(s->buf);
  s->gz = NULL;
  s->buf = NULL;
}

/* zlib's message without the "PATH: " it may start with */
static const char *zmsg(const struct trace_src *s, const char *m) {
  size_t n = strlen(s->name);
  if (m && !strncmp(m, s->name, n) && m[n] == ':' && m[n + 1] == ' ') return m + n + 2;
  return m ? m : "?";
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
    int got = gzread(s->gz, s->buf + left, (unsigned)(TRACE_SRC_BUF - left));
    if (got < 0) {
      int code;
      const char *m = gzerror(s->gz, &code);
      snprintf(err, FB_ERRLEN, "%s: byte %llu: read error: %s", s->name,
               (unsigned long long)(s->base + left), zmsg(s, m));
      return -1;
    }
    if (got == 0) {
      int code;
      const char *m = gzerror(s->gz, &code);
      if (code != Z_OK) {   /* a truncated gzip stream ends with Z_BUF_ERROR */
        snprintf(err, FB_ERRLEN, "%s: byte %llu: truncated or corrupt gzip data: %s", s->name,
                 (unsigned long long)(s->base + left), zmsg(s, m));
        return -1;
      }
      s->at_eof = 1;
    }
    s->end += got;
  }
  return 1;
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
