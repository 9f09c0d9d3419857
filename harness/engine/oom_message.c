/* oom_message.c - PyTorch's "CUDA out of memory" text read for the limit (see oom_message.h):
 * every size in the text ("3.91 GiB", "512 bytes") found with the words around it, each
 * field named by those words, so the field order and the optional parts of each format
 * do not matter. */
#include "oom_message.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT (1u << 20)

struct size_tok { uint64_t lo, hi; size_t at, end; };

/* "19.79 GiB" at p: the interval of values PyTorch prints that way (2 decimals). */
static int parse_size(const char *text, size_t at, struct size_tok *t) {
  const char *p = text + at, *q = p;
  uint64_t whole = 0;
  int digits = 0;
  while (isdigit((unsigned char)*q)) { whole = whole * 10 + (uint64_t)(*q - '0'); q++; if (++digits > 15) return -1; }
  if (!digits) return -1;
  uint64_t frac = 0, scale = 1;
  if (*q == '.' && isdigit((unsigned char)q[1])) {
    q++;
    while (isdigit((unsigned char)*q)) { if (scale < 1000000) { frac = frac * 10 + (uint64_t)(*q - '0'); scale *= 10; } q++; }
  }
  while (*q == ' ') q++;
  static const struct { const char *name; uint64_t mult; } units[] = {
    {"bytes", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40}};
  uint64_t mult = 0;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    size_t len = strlen(units[i].name);
    if (!strncmp(q, units[i].name, len) && !isalpha((unsigned char)q[len])) { mult = units[i].mult; q += len; break; }
  }
  if (!mult) return -1;
  /* value = (whole + frac/scale) * mult, printed rounded to 1/scale: +/- half a step */
  long double v = ((long double)whole + (long double)frac / (long double)scale) * (long double)mult;
  long double half = mult == 1 ? 0 : (long double)mult / (long double)scale / 2;
  long double lo = v - half, hi = v + half;
  if (lo < 0) lo = 0;
  t->lo = mult == 1 ? whole : (uint64_t)(lo + 0.999999L);      /* the least whole byte count printed this way */
  t->hi = mult == 1 ? whole + 1 : (uint64_t)hi;                 /* exclusive */
  if (t->hi <= t->lo) t->hi = t->lo + 1;
  t->at = at;
  t->end = (size_t)(q - text);
  return 0;
}

/* does the text just before `at` end with word (spaces and line breaks folded)? */
static int before_is(const char *text, size_t at, const char *word) {
  size_t n = strlen(word), j = n, i = at;
  while (j > 0 && i > 0) {
    char c = text[i - 1], w = word[j - 1];
    if (isspace((unsigned char)c) && w == ' ') {
      while (i > 0 && isspace((unsigned char)text[i - 1])) i--;
      j--;
      continue;
    }
    if (c != w) return 0;
    i--; j--;
  }
  return j == 0;
}

/* does the text at `at` start with word (spaces and line breaks folded)? */
static int after_is(const char *text, size_t at, const char *word) {
  const char *p = text + at;
  for (const char *w = word; *w; w++) {
    if (*w == ' ') {
      if (!isspace((unsigned char)*p)) return 0;
      while (isspace((unsigned char)*p)) p++;
      continue;
    }
    if (*p != *w) return 0;
    p++;
  }
  return 1;
}

int oom_message_parse(const char *text, struct oom_message *m, char *err) {
  memset(m, 0, sizeof *m);
  const char *oom = strstr(text, "out of memory");
  if (!oom) {
    snprintf(err, FB_ERRLEN, "no \"out of memory\" in the text: expected PyTorch's OOM error, e.g. \"CUDA out of memory. "
             "Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.18 GiB ...\"");
    return -1;
  }
  int have_total = 0, have_tried = 0, new_format = 0, cached = 0, have_free = 0, have_reserved = 0;
  uint64_t total_hi = 0, allowed_hi = 0, free_hi = 0, allocated_hi = 0, reserved_hi = 0;
  char total_txt[32] = "", allowed_txt[32] = "";
  size_t start = (size_t)(oom - text);
  for (size_t i = start; text[i]; i++) {
    if (!isdigit((unsigned char)text[i]) || (i > 0 && (isdigit((unsigned char)text[i - 1]) || text[i - 1] == '.'))) continue;
    struct size_tok t;
    if (parse_size(text, i, &t)) continue;
    if (before_is(text, t.at, "Tried to allocate ")) { m->tried = t.lo; have_tried = 1; }
    else if (before_is(text, t.at, "total capacity of ") || before_is(text, t.at, "total capacty of ")) {
      m->total_capacity = t.lo; total_hi = t.hi; have_total = 1; new_format = 1;
      snprintf(total_txt, sizeof total_txt, "%.*s", (int)(t.end - t.at), text + t.at);
    } else if (after_is(text, t.end, " total capacity")) {
      m->total_capacity = t.lo; total_hi = t.hi; have_total = 1;
      snprintf(total_txt, sizeof total_txt, "%.*s", (int)(t.end - t.at), text + t.at);
    } else if (after_is(text, t.end, " allowed")) {
      m->allowed = t.lo; allowed_hi = t.hi; m->has_allowed = 1;
      snprintf(allowed_txt, sizeof allowed_txt, "%.*s", (int)(t.end - t.at), text + t.at);
    }
    else if (before_is(text, t.at, "this process has ")) m->in_use = t.lo;
    else if (before_is(text, t.at, "of which ") && after_is(text, t.end, " is free")) { m->free_bytes = t.lo; free_hi = t.hi; have_free = 1; }
    else if (after_is(text, t.end, " free;") || after_is(text, t.end, " free)")) { m->free_bytes = t.lo; free_hi = t.hi; have_free = 1; }
    else if (after_is(text, t.end, " already allocated") || after_is(text, t.end, " is allocated by PyTorch")) {
      m->allocated = t.lo; allocated_hi = t.hi;
    } else if (after_is(text, t.end, " is reserved by PyTorch but unallocated")) {
      m->reserved_unallocated = t.lo; reserved_hi = t.hi; have_reserved = 1;
    } else if (after_is(text, t.end, " reserved in total by PyTorch") || after_is(text, t.end, " cached")) {
      /* 1.x gives reserved in total: unallocated = reserved - allocated (set below) */
      m->reserved_unallocated = t.lo; reserved_hi = t.hi; have_reserved = 1;
      cached = 2 + after_is(text, t.end, " cached");
    }
    i = t.end - 1;
  }
  if (!have_total) {
    snprintf(err, FB_ERRLEN, "byte %zu: an OOM message, but no total capacity in it: expected \"GPU 0 has a total capacity of "
             "79.18 GiB\" (PyTorch 2.1+) or \"(GPU 0; 79.18 GiB total capacity; ...\" (1.x); give the whole message",
             start);
    return -1;
  }
  if (!have_tried) {
    snprintf(err, FB_ERRLEN, "byte %zu: an OOM message without \"Tried to allocate N GiB\": give the whole message", start);
    return -1;
  }
  /* what PyTorch could hold at the OOM: its reserved memory (allocated + reserved but
   * unallocated; 1.x: reserved in total) and what was still free on the device */
  uint64_t reachable = 0, reachable_hi = 0;
  if (have_free && have_reserved) {
    reachable = (cached ? 0 : m->allocated) + m->reserved_unallocated + m->free_bytes;
    reachable_hi = (cached ? 0 : allocated_hi) + reserved_hi + free_hi;
  }
  if (cached) {   /* 1.x: "reserved in total" / "cached" is all of PyTorch's reserved memory */
    uint64_t reserved = m->reserved_unallocated;
    m->reserved_unallocated = reserved > m->allocated ? reserved - m->allocated : 0;
  }
  m->format = new_format ? 2 : cached == 3 ? 0 : 1;
  m->limit = m->has_allowed ? m->allowed : m->total_capacity;
  m->limit_hi = m->has_allowed ? allowed_hi : total_hi;
  /* no fraction: the device's total is not PyTorch's to take (this process's CUDA context,
   * other processes); the limit is what PyTorch held plus what was free, when lower */
  m->from_free = !m->has_allowed && reachable && reachable_hi < m->limit;   /* surely below, whatever the rounding */
  if (m->from_free) {
    m->limit = reachable;
    m->limit_hi = reachable_hi < total_hi ? reachable_hi : total_hi;
  }
  /* a phrase for "limit X (N bytes): from <source>" (limit.c), under 128 characters */
  if (m->from_free)
    snprintf(m->source, sizeof m->source, "PyTorch's OOM message (PyTorch's reserved + free %.4f..%.4f GiB, low end; "
             "of %.20s total)", (double)m->limit / (double)(1ull << 30), (double)m->limit_hi / (double)(1ull << 30), total_txt);
  else
    snprintf(m->source, sizeof m->source, "PyTorch's OOM message (%s %.20s = %.4f..%.4f GiB: the low end)",
             m->has_allowed ? "\"allowed\"" : "total capacity", m->has_allowed ? allowed_txt : total_txt,
             (double)m->limit / (double)(1ull << 30), (double)m->limit_hi / (double)(1ull << 30));
  return 0;
}

int oom_message_read(const char *path, struct oom_message *m, char *err) {
  int dash = !strcmp(path, "-");
  FILE *f = dash ? stdin : fopen(path, "rb");
  if (!f) { snprintf(err, FB_ERRLEN, "%s: cannot open: %s", path, strerror(errno)); return -1; }
  char *buf = malloc(MAX_TEXT + 1);
  if (!buf) { if (!dash) fclose(f); snprintf(err, FB_ERRLEN, "%s: out of host memory", path); return -1; }
  size_t n = fread(buf, 1, MAX_TEXT, f);
  int rd_err = ferror(f);
  if (!dash) fclose(f);
  if (rd_err) { free(buf); snprintf(err, FB_ERRLEN, "%s: read error", path); return -1; }
  buf[n] = 0;
  if (memchr(buf, 0, n)) {
    size_t at = strlen(buf);
    free(buf);
    snprintf(err, FB_ERRLEN, "%s: byte %zu: a NUL byte: expected the text of PyTorch's OOM error", path, at);
    return -1;
  }
  char inner[FB_ERRLEN];
  int rc = oom_message_parse(buf, m, inner);
  free(buf);
  if (rc) { snprintf(err, FB_ERRLEN, "%s: %.450s", dash ? "<stdin>" : path, inner); return -1; }
  return 0;
}
