/* oom_message.c - PyTorch's "CUDA out of memory" text read for the limit (see oom_message.h):
 * every size in the text ("3.91 GiB", "512 bytes") found with the words around it, each
 * field named by those words, so the field order and the optional parts of each format
 * do not matter. The text is first unfolded: line breaks (and the indentation after them)
 * are taken out, each leaving a mark on the next character, so that a fold anywhere -
 * inside a number, a unit or a word - reads as if it were not there, and a mark also
 * stands for the space a word wrap turned into a line break. Each "out of memory" starts
 * one message; messages are parsed one by one and must agree. */
#include "oom_message.h"
#include "instage.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* the unfolded text: s without line breaks; brk[i]: a line break was taken out before s[i];
 * orig[i]: where s[i] was in the text as given (for messages) */
struct text { char *s; unsigned char *brk; size_t *orig; size_t n; const char *raw; };

static int unfold(const char *raw, struct text *t) {
  size_t len = strlen(raw);
  t->raw = raw;
  t->s = malloc(len + 1);
  t->brk = calloc(len + 1, 1);
  t->orig = malloc((len + 1) * sizeof *t->orig);
  if (!t->s || !t->brk || !t->orig) { free(t->s); free(t->brk); free(t->orig); return -1; }
  size_t k = 0;
  int pending = 0;   /* a break taken out, not yet marked on a character */
  for (size_t i = 0; i < len; i++) {
    char c = raw[i];
    if (c == '\n' || c == '\r') { pending = 1; continue; }
    /* the indentation at the start of a continued line is part of the fold (the mark
     * stands for a space the text may have had right at the fold) */
    if (pending && (c == ' ' || c == '\t')) continue;
    t->s[k] = c;
    t->brk[k] = (unsigned char)pending;
    t->orig[k] = i;
    pending = 0;
    k++;
  }
  t->s[k] = 0;
  t->brk[k] = (unsigned char)pending;
  t->orig[k] = len;
  t->n = k;
  return 0;
}

static void text_free(struct text *t) { free(t->s); free(t->brk); free(t->orig); }

/* the line (1-based) of a place in the unfolded text, in the text as given */
static size_t line_of(const struct text *t, size_t at) {
  size_t line = 1, end = t->orig[at];
  for (size_t i = 0; i < end; i++) if (t->raw[i] == '\n') line++;
  return line;
}

/* a space in a word matches spaces, a taken-out line break, or both */
static int space_at(const struct text *t, size_t i) { return isspace((unsigned char)t->s[i]) || t->brk[i]; }

/* does the text just before `at` end with word? */
static int before_is(const struct text *t, size_t at, const char *word) {
  size_t j = strlen(word), i = at;
  while (j > 0) {
    char w = word[j - 1];
    if (w == ' ') {
      if (!(i > 0 && isspace((unsigned char)t->s[i - 1])) && !t->brk[i]) return 0;
      while (i > 0 && isspace((unsigned char)t->s[i - 1])) i--;
      j--;
      continue;
    }
    if (i == 0 || t->s[i - 1] != w) return 0;
    i--; j--;
  }
  return 1;
}

/* does the text at `at` start with word? */
static int after_is(const struct text *t, size_t at, const char *word) {
  size_t i = at;
  for (const char *w = word; *w; w++) {
    if (*w == ' ') {
      if (!space_at(t, i)) return 0;
      while (isspace((unsigned char)t->s[i])) i++;
      continue;
    }
    if (t->s[i] != *w) return 0;
    i++;
  }
  return 1;
}

/* the next "out of memory" at or after `from` (the words may be folded); t->n if none */
static size_t find_oom(const struct text *t, size_t from) {
  for (size_t i = from; i < t->n; i++)
    if (t->s[i] == 'o' && after_is(t, i, "out of memory")) return i;
  return t->n;
}

/* a number with its unit, as found in the text: [lo, hi) bytes when it is a size PyTorch
 * prints (ok), else what is wrong with it (why) */
struct size_tok { uint64_t lo, hi; size_t at, end; int ok; const char *why; };

static void parse_size(const struct text *t, size_t at, struct size_tok *tok) {
  const char *s = t->s;
  size_t q = at;
  memset(tok, 0, sizeof *tok);
  tok->at = at;
  tok->ok = 1;
  if (at > 0 && !t->brk[at]) {
    char prev = s[at - 1];
    if (prev == '-' || prev == '+') { tok->ok = 0; tok->why = "a signed size"; tok->at = at - 1; }
    else if (isalpha((unsigned char)prev) || prev == '_') { tok->ok = 0; tok->why = "a number inside a word"; }
    else if (prev == ',' && at > 1 && isdigit((unsigned char)s[at - 2]) && !t->brk[at - 1]) {
      tok->ok = 0;
      tok->why = "a number with a comma in it (PyTorch prints 19.79)";
    }
  }
  uint64_t whole = 0;
  int digits = 0;
  while (isdigit((unsigned char)s[q])) { if (digits < 19) whole = whole * 10 + (uint64_t)(s[q] - '0'); q++; digits++; }
  if (digits > 15 && tok->ok) { tok->ok = 0; tok->why = "more digits than any device's size"; }
  uint64_t frac = 0, scale = 1;
  if (s[q] == '.' && isdigit((unsigned char)s[q + 1])) {
    q++;
    while (isdigit((unsigned char)s[q])) { if (scale < 1000000) { frac = frac * 10 + (uint64_t)(s[q] - '0'); scale *= 10; } q++; }
  }
  if ((s[q] == 'e' || s[q] == 'E') && (isdigit((unsigned char)s[q + 1]) || ((s[q + 1] == '-' || s[q + 1] == '+') && isdigit((unsigned char)s[q + 2])))) {
    q += 2;
    while (isdigit((unsigned char)s[q])) q++;
    if (tok->ok) { tok->ok = 0; tok->why = "a number with an exponent"; }
  }
  while (s[q] == ' ' || s[q] == '\t') q++;
  static const struct { const char *name; uint64_t mult; } units[] = {
    {"bytes", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40}};
  uint64_t mult = 0;
  for (size_t i = 0; i < sizeof units / sizeof units[0] && !mult; i++) {
    size_t len = strlen(units[i].name);
    if (!strncmp(s + q, units[i].name, len) && (!isalpha((unsigned char)s[q + len]) || t->brk[q + len])) {
      mult = units[i].mult;
      q += len;
    }
  }
  if (!mult) {   /* a unit-like word after the number ("19.79 GB") is named; another word is not its */
    size_t w = q;
    while (isalpha((unsigned char)s[q]) && (q == w || !t->brk[q])) q++;
    int unitish = q > w && (q - w <= 3 ? tolower((unsigned char)s[q - 1]) == 'b' : !strncasecmp(s + w, "byte", 4));
    if (!unitish) {   /* the number alone: its end is right after its digits */
      q = w;
      while (q > at && (s[q - 1] == ' ' || s[q - 1] == '\t')) q--;
    }
    if (tok->ok) { tok->ok = 0; tok->why = unitish ? "not a unit PyTorch prints (bytes, KiB, MiB, GiB)" : "a number without a unit"; }
  }
  tok->end = q;
  if (!tok->ok) return;
  /* value = (whole + frac/scale) * mult, printed rounded to 1/scale: +/- half a step */
  long double v = ((long double)whole + (long double)frac / (long double)scale) * (long double)mult;
  if (v >= 9.2e18L) { tok->ok = 0; tok->why = "more bytes than any device holds"; return; }
  long double half = mult == 1 ? 0 : (long double)mult / (long double)scale / 2;
  long double lo = v - half, hi = v + half;
  if (lo < 0) lo = 0;
  tok->lo = mult == 1 ? whole : (uint64_t)(lo + 0.999999L);      /* the least whole byte count printed this way */
  tok->hi = mult == 1 ? whole + 1 : (uint64_t)hi;                 /* exclusive */
  if (tok->hi <= tok->lo) tok->hi = tok->lo + 1;
}

enum field { F_NONE, F_TRIED, F_TOTAL_NEW, F_TOTAL_OLD, F_ALLOWED, F_IN_USE, F_FREE, F_ALLOCATED, F_RESERVED_UNALLOC,
             F_RESERVED_TOTAL, F_CACHED };
static const char *const field_name[] = {"", "the request (\"Tried to allocate\")", "the total capacity", "the total capacity",
  "the \"allowed\" limit", "the memory in use", "the free memory", "the allocated memory", "the reserved memory",
  "the reserved memory", "the cached memory"};

static enum field field_of(const struct text *t, const struct size_tok *k) {
  if (before_is(t, k->at, "Tried to allocate ")) return F_TRIED;
  if (before_is(t, k->at, "total capacity of ") || before_is(t, k->at, "total capacty of ")) return F_TOTAL_NEW;
  if (after_is(t, k->end, " total capacity")) return F_TOTAL_OLD;
  if (after_is(t, k->end, " allowed")) return F_ALLOWED;
  if (before_is(t, k->at, "this process has ")) return F_IN_USE;
  if (before_is(t, k->at, "of which ") && after_is(t, k->end, " is free")) return F_FREE;
  if (after_is(t, k->end, " free;") || after_is(t, k->end, " free)")) return F_FREE;
  if (after_is(t, k->end, " already allocated") || after_is(t, k->end, " is allocated by PyTorch")) return F_ALLOCATED;
  if (after_is(t, k->end, " is reserved by PyTorch but unallocated")) return F_RESERVED_UNALLOC;
  if (after_is(t, k->end, " reserved in total by PyTorch")) return F_RESERVED_TOTAL;
  if (after_is(t, k->end, " cached")) return F_CACHED;
  return F_NONE;
}

/* "19.79 GiB" as printed (the unfolded text, at most 40 characters) */
static void quote(const struct text *t, size_t at, size_t end, char *buf, size_t n) {
  snprintf(buf, n, "%.*s", (int)(end - at > 40 ? 40 : end - at), t->s + at);
}

/* one message: the text from `start` (its "out of memory") to `stop`. 0, 1 (no size at all
 * in it: not a message to read, e.g. a line that only names the error), or -1 with err. */
static int parse_one(const struct text *t, size_t start, size_t stop, struct oom_message *m, char *err) {
  memset(m, 0, sizeof *m);
  int have[F_CACHED + 1] = {0}, nfields = 0;
  uint64_t lo[F_CACHED + 1] = {0}, hi[F_CACHED + 1] = {0};
  char total_txt[48] = "", allowed_txt[48] = "";
  size_t allowed_at = 0;
  for (size_t i = start; i < stop; i++) {
    const char *s = t->s;
    if (!isdigit((unsigned char)s[i])) continue;
    if (i > 0 && !t->brk[i] && (isdigit((unsigned char)s[i - 1]) || (s[i - 1] == '.' && i > 1 && isdigit((unsigned char)s[i - 2]))))
      continue;
    struct size_tok k;
    parse_size(t, i, &k);
    enum field f = field_of(t, &k);
    char q[48];
    quote(t, k.at, k.end, q, sizeof q);
    if (f != F_NONE && !k.ok) {
      snprintf(err, FB_ERRLEN, "byte %zu (line %zu): '%s' where PyTorch prints %s: %s; expected a size such as "
               "\"19.79 GiB\"", t->orig[k.at], line_of(t, k.at), q, field_name[f], k.why);
      return -1;
    }
    i = (k.end > i ? k.end : i + 1) - 1;
    if (f == F_NONE) continue;
    if (f == F_TOTAL_OLD) f = F_TOTAL_NEW, m->format = 1;
    else if (f == F_TOTAL_NEW) m->format = 2;
    if (have[f] && (lo[f] != k.lo || hi[f] != k.hi)) {
      snprintf(err, FB_ERRLEN, "byte %zu (line %zu): a second, different size for %s ('%s') in one message: give one "
               "message as PyTorch printed it", t->orig[k.at], line_of(t, k.at), field_name[f], q);
      return -1;
    }
    have[f] = 1;
    nfields++;
    lo[f] = k.lo;
    hi[f] = k.hi;
    if (f == F_TOTAL_NEW) { snprintf(total_txt, sizeof total_txt, "%s", q); }
    if (f == F_ALLOWED) { snprintf(allowed_txt, sizeof allowed_txt, "%s", q); allowed_at = k.at; }
  }
  if (!nfields) return 1;
  if (!have[F_ALLOWED])   /* "allowed" after something that is no size ("inf GiB allowed"): not read around */
    for (size_t i = start + 1; i < stop; i++)
      if (t->s[i] == 'a' && after_is(t, i, "allowed") && (space_at(t, i) || isspace((unsigned char)t->s[i - 1]))) {
        snprintf(err, FB_ERRLEN, "byte %zu (line %zu): \"allowed\" without a size PyTorch prints before it: expected e.g. "
                 "\"19.79 GiB allowed\"", t->orig[i], line_of(t, i));
        return -1;
      }
  if (!have[F_TOTAL_NEW]) {
    snprintf(err, FB_ERRLEN, "byte %zu: an OOM message, but no total capacity in it: expected \"GPU 0 has a total capacity of "
             "79.18 GiB\" (PyTorch 2.1+) or \"(GPU 0; 79.18 GiB total capacity; ...\" (1.x); give the whole message",
             t->orig[start]);
    return -1;
  }
  if (!have[F_TRIED]) {
    snprintf(err, FB_ERRLEN, "byte %zu: an OOM message without \"Tried to allocate N GiB\": give the whole message", t->orig[start]);
    return -1;
  }
  uint64_t total_hi = hi[F_TOTAL_NEW];
  m->total_capacity = lo[F_TOTAL_NEW];
  m->request_bytes = m->tried = lo[F_TRIED];
  m->request_hi = hi[F_TRIED];
  m->in_use = lo[F_IN_USE];
  m->free_bytes = lo[F_FREE];
  m->allocated = lo[F_ALLOCATED];
  m->has_allowed = have[F_ALLOWED];
  m->allowed = lo[F_ALLOWED];
  if (m->has_allowed && m->allowed >= total_hi) {
    snprintf(err, FB_ERRLEN, "byte %zu (line %zu): '%s allowed' is above the device's total capacity %s: not a limit "
             "PyTorch prints; give the message as it was printed", t->orig[allowed_at], line_of(t, allowed_at), allowed_txt,
             total_txt);
    return -1;
  }
  /* 2.1+: reserved but unallocated; 1.x: reserved in total (cached = 2), before 1.4 "cached" (3) */
  int cached = 0;
  enum field rf = F_RESERVED_UNALLOC;
  if (!have[F_RESERVED_UNALLOC] && have[F_RESERVED_TOTAL]) { rf = F_RESERVED_TOTAL; cached = 2; }
  else if (!have[F_RESERVED_UNALLOC] && have[F_CACHED]) { rf = F_CACHED; cached = 3; }
  int have_reserved = have[rf];
  m->reserved_unallocated = lo[rf];
  /* what PyTorch could hold at the OOM: its reserved memory (allocated + reserved but
   * unallocated; 1.x: reserved in total) and what was still free on the device */
  uint64_t reachable = 0, reachable_hi = 0;
  if (have[F_FREE] && have_reserved) {
    reachable = (cached ? 0 : m->allocated) + lo[rf] + lo[F_FREE];
    reachable_hi = (cached ? 0 : hi[F_ALLOCATED]) + hi[rf] + hi[F_FREE];
  }
  if (cached) {   /* 1.x: "reserved in total" / "cached" is all of PyTorch's reserved memory */
    uint64_t reserved = m->reserved_unallocated;
    m->reserved_unallocated = reserved > m->allocated ? reserved - m->allocated : 0;
  }
  if (m->format != 2) m->format = cached == 3 ? 0 : 1;
  m->limit = m->has_allowed ? m->allowed : m->total_capacity;
  m->limit_hi = m->has_allowed ? hi[F_ALLOWED] : total_hi;
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

int oom_message_parse(const char *text, struct oom_message *m, char *err) {
  memset(m, 0, sizeof *m);
  struct text t;
  if (unfold(text, &t)) { snprintf(err, FB_ERRLEN, "out of host memory"); return -1; }
  size_t at = find_oom(&t, 0);
  if (at == t.n) {
    text_free(&t);
    snprintf(err, FB_ERRLEN, "no \"out of memory\" in the text: expected PyTorch's OOM error, e.g. \"CUDA out of memory. "
             "Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.18 GiB ...\"");
    return -1;
  }
  int n = 0, rc = 0;
  size_t first_at = 0;
  char first_err[FB_ERRLEN] = "";
  while (at < t.n && !rc) {
    size_t next = find_oom(&t, at + 1);
    struct oom_message one;
    char e[FB_ERRLEN];
    int r = parse_one(&t, at, next, &one, e);
    if (r < 0) { snprintf(err, FB_ERRLEN, "%s", e); rc = -1; break; }
    if (r == 1) {   /* names the error, gives no size: not a message to read, unless none is */
      if (!first_err[0])
        snprintf(first_err, sizeof first_err, "byte %zu: an OOM message, but no total capacity in it: expected \"GPU 0 has "
                 "a total capacity of 79.18 GiB\" (PyTorch 2.1+) or \"(GPU 0; 79.18 GiB total capacity; ...\" (1.x); give "
                 "the whole message", t.orig[at]);
      at = next;
      continue;
    }
    if (!n) { *m = one; first_at = at; }
    else if (one.limit != m->limit || one.limit_hi != m->limit_hi) {
      char a[48], b[48];
      snprintf(a, sizeof a, "%.4f GiB", (double)m->limit / (double)(1ull << 30));
      snprintf(b, sizeof b, "%.4f GiB", (double)one.limit / (double)(1ull << 30));
      snprintf(err, FB_ERRLEN, "OOM messages that disagree: message 1 (byte %zu, line %zu) gives the limit %s (%s), "
               "message %d (byte %zu, line %zu) %s (%s): give the message of the one process whose limit is meant",
               t.orig[first_at], line_of(&t, first_at), a, m->has_allowed ? "allowed" : m->from_free ? "reserved + free" : "total capacity",
               n + 1, t.orig[at], line_of(&t, at), b, one.has_allowed ? "allowed" : one.from_free ? "reserved + free" : "total capacity");
      rc = -1;
      break;
    }
    n++;
    at = next;
  }
  if (!rc && !n) { snprintf(err, FB_ERRLEN, "%s", first_err); rc = -1; }
  if (!rc) m->nmessages = n;
  text_free(&t);
  if (rc) { struct oom_message z; memset(&z, 0, sizeof z); *m = z; }
  return rc;
}

int oom_message_read(const char *path, struct oom_message *m, char *err) {
  int dash = !strcmp(path, "-");
  const char *shown = dash ? "<stdin>" : instage_shown(path);   /* a staged copy: the name given */
  FILE *f = dash ? stdin : fopen(path, "rb");
  if (!f) { snprintf(err, FB_ERRLEN, "%s: cannot open: %s", shown, strerror(errno)); return -1; }
  char *buf = malloc(OOM_MESSAGE_MAX + 2);
  if (!buf) { if (!dash) fclose(f); snprintf(err, FB_ERRLEN, "%s: out of host memory", shown); return -1; }
  size_t n = fread(buf, 1, OOM_MESSAGE_MAX + 1, f);
  int rd_err = ferror(f);
  if (!dash) fclose(f);
  if (rd_err) { free(buf); snprintf(err, FB_ERRLEN, "%s: read error", shown); return -1; }
  if (n > OOM_MESSAGE_MAX) {
    free(buf);
    snprintf(err, FB_ERRLEN, "%.300s: more than 1 MiB (1048576 bytes): not read; give PyTorch's OOM message itself "
             "(e.g. grep -A3 'out of memory' in the log)", shown);
    return -1;
  }
  buf[n] = 0;
  if (memchr(buf, 0, n)) {
    size_t at = strlen(buf);
    free(buf);
    snprintf(err, FB_ERRLEN, "%s: byte %zu: a NUL byte: expected the text of PyTorch's OOM error", shown, at);
    return -1;
  }
  char inner[FB_ERRLEN];
  int rc = oom_message_parse(buf, m, inner);
  free(buf);
  if (rc) { snprintf(err, FB_ERRLEN, "%s: %.450s", shown, inner); return -1; }
  return 0;
}
