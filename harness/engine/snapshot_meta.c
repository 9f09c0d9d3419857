/* snapshot_meta.c - the side file capture.py writes beside a snapshot (snapshot_meta.h):
 * its name from the snapshot's, a reader of one flat JSON object, the fields checked. */
#include "snapshot_meta.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "params.h"

#define META_MAX (1u << 16)   /* a side file is a few hundred bytes */

int snapshot_meta_path(const char *snapshot, char *out, size_t n) {
  static const char *const ext[] = {".pickle.gz", ".pkl.gz", ".pickle", ".pkl", ".gz"};
  size_t len = strlen(snapshot);
  const char *base = strrchr(snapshot, '/');
  size_t base_at = base ? (size_t)(base - snapshot) + 1 : 0;
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    size_t e = strlen(ext[i]);
    if (len - base_at > e && !strcmp(snapshot + len - e, ext[i])) { len -= e; break; }
  }
  int k = snprintf(out, n, "%.*s.meta.json", (int)len, snapshot);
  return k < 0 || (size_t)k >= n ? -1 : 0;
}

struct jp { const char *path, *s; size_t i; char *err; };

static int fail(struct jp *p, const char *what) {
  snprintf(p->err, FB_ERRLEN, "%.300s: byte %zu: %s (the side file capture.py writes: one flat JSON object)", p->path, p->i, what);
  return -1;
}
static void ws(struct jp *p) { while (p->s[p->i] && isspace((unsigned char)p->s[p->i])) p->i++; }

/* a JSON string at p->i into out (UTF-8; \u escapes of the BMP) */
static int str(struct jp *p, char *out, size_t n) {
  if (p->s[p->i] != '"') return fail(p, "expected a string in double quotes");
  p->i++;
  size_t k = 0;
  for (;;) {
    unsigned char c = (unsigned char)p->s[p->i];
    if (!c) return fail(p, "a string is not closed");
    if (c < 0x20) return fail(p, "a control character inside a string");
    p->i++;
    if (c == '"') break;
    unsigned cp = c;
    if (c == '\\') {
      char e = p->s[p->i++];
      switch (e) {
      case '"': cp = '"'; break;
      case '\\': cp = '\\'; break;
      case '/': cp = '/'; break;
      case 'b': cp = '\b'; break;
      case 'f': cp = '\f'; break;
      case 'n': cp = '\n'; break;
      case 'r': cp = '\r'; break;
      case 't': cp = '\t'; break;
      case 'u': {
        cp = 0;
        for (int j = 0; j < 4; j++) {
          char h = p->s[p->i++];
          if (!isxdigit((unsigned char)h)) { p->i--; return fail(p, "expected 4 hex digits after \\u"); }
          cp = cp * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower((unsigned char)h) - 'a' + 10));
        }
        if (cp >= 0xd800 && cp < 0xe000) cp = '?';   /* a surrogate half: not needed in these fields */
        break;
      }
      default: p->i--; return fail(p, "an unknown escape in a string");
      }
    }
    char u[4];
    size_t m = 0;
    if (cp < 0x80) u[m++] = (char)cp;
    else if (cp < 0x800) { u[m++] = (char)(0xc0 | cp >> 6); u[m++] = (char)(0x80 | (cp & 0x3f)); }
    else { u[m++] = (char)(0xe0 | cp >> 12); u[m++] = (char)(0x80 | (cp >> 6 & 0x3f)); u[m++] = (char)(0x80 | (cp & 0x3f)); }
    if (k + m >= n) return fail(p, "a string too long");
    memcpy(out + k, u, m);
    k += m;
  }
  out[k] = 0;
  return 0;
}

enum jtype { J_STR, J_NUM, J_BOOL, J_NULL };

/* a scalar value: its text into out (a string's content, a number as written) */
static int value(struct jp *p, enum jtype *t, char *out, size_t n) {
  const char *s = p->s + p->i;
  if (*s == '"') { *t = J_STR; return str(p, out, n); }
  if (*s == '{' || *s == '[') return fail(p, "a nested object or list: expected a string, a number, true, false or null");
  static const char *const words[] = {"true", "false", "null"};
  for (int w = 0; w < 3; w++)
    if (!strncmp(s, words[w], strlen(words[w]))) {
      *t = w < 2 ? J_BOOL : J_NULL;
      snprintf(out, n, "%s", words[w]);
      p->i += strlen(words[w]);
      return 0;
    }
  size_t k = 0;
  while (s[k] && (isdigit((unsigned char)s[k]) || strchr("+-.eE", s[k]))) k++;
  if (!k) return fail(p, "expected a string, a number, true, false or null");
  if (k >= n) return fail(p, "a number too long");
  memcpy(out, s, k);
  out[k] = 0;
  p->i += k;
  *t = J_NUM;
  return 0;
}

static int field_fail(const char *path, const char *key, const char *val, const char *expected, char *err) {
  snprintf(err, FB_ERRLEN, "%.300s: field \"%s\": %.100s%s%.60s", path, key, expected, val ? ", got " : "", val ? val : "");
  return -1;
}

static int u64_field(const char *path, const char *key, enum jtype t, const char *v, uint64_t *out, char *err) {
  char *end;
  errno = 0;
  unsigned long long x = t == J_NUM && isdigit((unsigned char)v[0]) ? strtoull(v, &end, 10) : 0;
  if (t != J_NUM || !isdigit((unsigned char)v[0]) || *end || errno || !x)
    return field_fail(path, key, v, "expected a positive integer (bytes)", err);
  *out = x;
  return 0;
}

int snapshot_meta_parse(const char *path, const char *text, struct snapshot_meta *m, char *err) {
  memset(m, 0, sizeof *m);
  snprintf(m->path, sizeof m->path, "%s", path);
  struct jp p = {path, text, 0, err};
  int has_format = 0, has_limit = 0;
  ws(&p);
  if (text[p.i] != '{') return fail(&p, "expected '{'");
  p.i++;
  ws(&p);
  if (text[p.i] == '}') p.i++;
  else
    for (;;) {
      char key[64], val[600];
      enum jtype t;
      ws(&p);
      if (str(&p, key, sizeof key)) return -1;
      ws(&p);
      if (text[p.i] != ':') return fail(&p, "expected ':' after a key");
      p.i++;
      ws(&p);
      if (value(&p, &t, val, sizeof val)) return -1;
      if (!strcmp(key, "format")) {
        if (t != J_STR || strncmp(val, "fragbench-capture ", 18) || strcmp(val + 18, "1"))
          return field_fail(path, key, val, "expected \"fragbench-capture 1\"", err);
        has_format = 1;
      } else if (!strcmp(key, "limit_bytes")) {
        if (u64_field(path, key, t, val, &m->limit_bytes, err)) return -1;
        has_limit = 1;
      } else if (!strcmp(key, "device_total_bytes")) {
        if (t != J_NULL && u64_field(path, key, t, val, &m->device_total, err)) return -1;
      } else if (!strcmp(key, "memory_fraction")) {
        if (t != J_NULL) {
          char *end;
          double f = t == J_NUM ? strtod(val, &end) : 0;
          if (t != J_NUM || *end || !(f > 0 && f <= 1)) return field_fail(path, key, val, "expected a number in (0, 1] or null", err);
          m->fraction = f;
        }
      } else if (!strcmp(key, "alloc_conf") || !strcmp(key, "limit_source") || !strcmp(key, "torch_version") ||
                 !strcmp(key, "device_name")) {
        if (t == J_NULL) val[0] = 0;
        else if (t != J_STR) return field_fail(path, key, val, "expected a string", err);
        char *dst = !strcmp(key, "alloc_conf") ? m->alloc_conf : !strcmp(key, "limit_source") ? m->limit_source
                    : !strcmp(key, "torch_version") ? m->torch_version : m->device_name;
        size_t cap = !strcmp(key, "alloc_conf") ? sizeof m->alloc_conf : !strcmp(key, "limit_source") ? sizeof m->limit_source
                     : !strcmp(key, "torch_version") ? sizeof m->torch_version : sizeof m->device_name;
        if (strlen(val) >= cap) return field_fail(path, key, NULL, "too long", err);
        memcpy(dst, val, strlen(val) + 1);
      }
      ws(&p);
      if (text[p.i] == ',') { p.i++; continue; }
      if (text[p.i] == '}') { p.i++; break; }
      return fail(&p, "expected ',' or '}' after a value");
    }
  ws(&p);
  if (text[p.i]) return fail(&p, "text after the object");
  if (!has_format) return field_fail(path, "format", NULL, "missing: expected \"fragbench-capture 1\"", err);
  if (!has_limit) return field_fail(path, "limit_bytes", NULL, "missing: expected the limit in bytes", err);
  if (m->device_total && m->limit_bytes > m->device_total) {
    char v[64];
    snprintf(v, sizeof v, "%llu", (unsigned long long)m->limit_bytes);
    return field_fail(path, "limit_bytes", v, "expected at most device_total_bytes", err);
  }
  if (m->fraction > 0 && m->device_total) {   /* PyTorch: (size_t)(fraction * (double)total) */
    uint64_t want = (uint64_t)(m->fraction * (double)m->device_total);
    if (want != m->limit_bytes) {
      char v[64];
      snprintf(v, sizeof v, "%llu", (unsigned long long)m->limit_bytes);
      char e[160];
      snprintf(e, sizeof e, "expected memory_fraction x device_total_bytes = %llu", (unsigned long long)want);
      return field_fail(path, "limit_bytes", v, e, err);
    }
  }
  return 0;
}

int snapshot_meta_find(const char *snapshot, struct snapshot_meta *m, char *err) {
  char path[1024];
  if (!snapshot || !strcmp(snapshot, "-") || snapshot_meta_path(snapshot, path, sizeof path)) return 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (errno == ENOENT || errno == ENOTDIR) return 0;
    snprintf(err, FB_ERRLEN, "%.300s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  char *buf = malloc(META_MAX + 1);
  if (!buf) { fclose(f); snprintf(err, FB_ERRLEN, "%.300s: out of host memory", path); return -1; }
  size_t n = fread(buf, 1, META_MAX + 1, f);
  int bad = ferror(f);
  fclose(f);
  if (bad || n > META_MAX) {
    free(buf);
    snprintf(err, FB_ERRLEN, "%.300s: %s", path, bad ? "read error" : "longer than 64 KiB: expected the side file capture.py writes");
    return -1;
  }
  buf[n] = 0;
  if (memchr(buf, 0, n)) { free(buf); snprintf(err, FB_ERRLEN, "%.300s: a NUL byte: expected JSON text", path); return -1; }
  int rc = snapshot_meta_parse(path, buf, m, err);
  free(buf);
  return rc ? -1 : 1;
}

void snapshot_meta_source(const struct snapshot_meta *m, char *buf, size_t n) {
  const char *base = strrchr(m->path, '/');
  base = base ? base + 1 : m->path;
  char a[32];
  if (m->fraction > 0 && m->device_total)
    snprintf(buf, n, "%.60s beside the snapshot (memory fraction %g of %s)", base, m->fraction, fmt_bytes(m->device_total, a, sizeof a));
  else snprintf(buf, n, "%.60s beside the snapshot%s%.30s%s", base, m->limit_source[0] ? " (" : "", m->limit_source,
                m->limit_source[0] ? ")" : "");
}
