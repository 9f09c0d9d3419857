/* limit.c - see limit.h. A limit given wins over the OOM message, which wins over
 * capture.py's side file beside the snapshot (snapshot_meta.h), which wins over the
 * inference; --no-infer-cap only turns the inference off. An OOM message given with a
 * snapshot that ended in an OOM must be that OOM's (limit_message_fits). */
#include "limit.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oom_message.h"
#include "snapshot_meta.h"
#include "params.h"

#define HINT "e.g. 10GiB (10 x 2^30 bytes; 10G is the same), 10GB (10^10 bytes), 1048576B (bytes), 25% or 0.25 (of the device)"

/* the decimal number at the start of t: its length, 0 when t does not start with one */
static size_t number_len(const char *t) {
  const char *p = t;
  int d = 0;
  while (isdigit((unsigned char)*p)) { p++; d++; }
  if (*p == '.') { p++; while (isdigit((unsigned char)*p)) { p++; d++; } }
  if (!d) return 0;
  if ((*p == 'e' || *p == 'E') && (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
    p += 2;
    while (isdigit((unsigned char)*p)) p++;
  }
  return (size_t)(p - t);
}

static void unit_words(const char *u, char *out, size_t n) {
  char U = (char)toupper((unsigned char)u[0]);
  int i = u[1] == 'i' || u[1] == 'I', b = (u[1] == 'B' || u[1] == 'b');
  if (!u[0] || ((u[0] == 'B' || u[0] == 'b') && !u[1])) { snprintf(out, n, "bytes"); return; }
  const char *pw = U == 'K' ? "10" : U == 'M' ? "20" : U == 'G' ? "30" : "40";
  const char *dec = U == 'K' ? "3" : U == 'M' ? "6" : U == 'G' ? "9" : "12";
  if (b) snprintf(out, n, "%s = 10^%s bytes", u, dec);
  else if (i) snprintf(out, n, "%s = 2^%s bytes", u, pw);
  else snprintf(out, n, "%s = %ciB = 2^%s bytes", u, U, pw);
}

int limit_parse(const char *flag, const char *text, int fraction_only, uint64_t total, uint64_t max_bytes, struct limit_text *lt,
                char *err, size_t errlen) {
  char a[48], b[48];
  memset(lt, 0, sizeof *lt);
  size_t n = number_len(text);
  const char *u = text + n;
  if (!n || !strncmp(text, "0x", 2) || !strncmp(text, "0X", 2)) {
    snprintf(err, errlen, "%s '%s': expected a limit written in decimal with a unit, %s%s", flag, text, HINT,
             strpbrk(text, "xX") ? " (hexadecimal is not read)" : "");
    return 2;
  }
  errno = 0;
  double v = strtod(text, NULL);
  if (errno == ERANGE && v != 0) { snprintf(err, errlen, "%s '%s': out of range", flag, text); return 2; }
  int is_pct = u[0] == '%' && !u[1], has_point = strpbrk(text, ".eE") != NULL && u == text + strlen(text);
  if (fraction_only || is_pct || has_point) {   /* a share of the device */
    double f = is_pct ? v / 100.0 : v;
    if (*u && !is_pct) {
      snprintf(err, errlen, "%s '%s': expected a fraction of the device total in (0, 1]", flag, text);
      return 2;
    }
    if (!(f > 0) || f > 1) {
      if (is_pct) snprintf(err, errlen, "%s '%s': expected a percentage of the device total in (0%%, 100%%]", flag, text);
      else snprintf(err, errlen, "%s '%s': a number with a point is a fraction of the device total, in (0, 1]; for bytes give a unit, %s", flag,
                    text, HINT);
      return 2;
    }
    double bytes = f * (double)total;
    if (total && bytes < 1) {
      snprintf(err, errlen, "%s '%s': %.3g of the device's %s is %.3g bytes: below one byte, no limit a device can hold", flag, text, f,
               fmt_bytes(total, a, sizeof a), bytes);
      return 2;
    }
    lt->fraction = 1;
    lt->value = f;
    lt->bytes = (uint64_t)bytes;
    snprintf(lt->how, sizeof lt->how, "%s of the device's total", is_pct ? text : "a fraction");
    return 0;
  }
  if (!*u) {   /* a bare integer: bytes or GiB? said, not guessed */
    snprintf(err, errlen, "%s '%s': a limit needs a unit, %s", flag, text, HINT);
    return 2;
  }
  double mul;
  if (bytes_unit(u, &mul)) {
    snprintf(err, errlen, "%s '%s': unknown unit '%s': expected B, K/M/G/T (= KiB/MiB/GiB/TiB, 2^10n), KB/MB/GB/TB (10^3n), %%; %s", flag, text, u, HINT);
    return 2;
  }
  if (parse_bytes(text, 0, &lt->bytes)) { snprintf(err, errlen, "%s '%s': out of range", flag, text); return 2; }
  if (v > 0 && lt->bytes == 0) {
    snprintf(err, errlen, "%s '%s': below one byte, no limit a device can hold", flag, text);
    return 2;
  }
  if (!lt->bytes) { snprintf(err, errlen, "%s '%s': a limit of 0 bytes: nothing fits under it", flag, text); return 2; }
  if (max_bytes && lt->bytes > max_bytes) {
    snprintf(err, errlen, "%s '%s': %s, more than any device holds (at most %s)", flag, text, fmt_bytes(lt->bytes, a, sizeof a),
             fmt_bytes(max_bytes, b, sizeof b));
    return 2;
  }
  unit_words(u, lt->how, sizeof lt->how);
  return 0;
}

/* v inside the interval the message printed its failed request as ("Tried to allocate
 * 2.11 GiB": [request_bytes, request_hi), oom_message.c) */
static int printed_as(const struct oom_message *m, uint64_t v) { return v >= m->request_bytes && v < m->request_hi; }

int limit_message_fits(const struct oom_message *m, const struct cap_inference *ci, char *why, size_t n) {
  char a[32], b[32], c[32], d[32];
  why[0] = 0;
  if (!ci->has_oom) return 1;                       /* nothing in the snapshot to hold it against */
  if (m->request_hi > m->request_bytes && !printed_as(m, ci->request) && !printed_as(m, ci->segment)) {
    snprintf(why, n, "it says 'Tried to allocate %s', but the snapshot's failed request is %s (%llu bytes, a %s segment)",
             fmt_bytes(m->request_bytes + (m->request_hi - m->request_bytes) / 2, a, sizeof a),   /* as printed */
             fmt_bytes(ci->request, b, sizeof b), (unsigned long long)ci->request,
             fmt_bytes(ci->segment, c, sizeof c));
    return 0;
  }
  uint64_t lo = m->limit, hi = m->limit_hi > m->limit ? m->limit_hi : m->limit + 1;
  if (ci->hi > ci->lo && (hi <= ci->lo || lo >= ci->hi)) {
    snprintf(why, n, "its limit %s is outside what the snapshot proves the job ran under (%s to %s: its reserved memory and "
             "the failed request)", fmt_bytes(m->limit, a, sizeof a), fmt_bytes(ci->lo, b, sizeof b), fmt_bytes(ci->hi, d, sizeof d));
    return 0;
  }
  return 1;
}

int limit_resolve(const struct limit_ask *a, struct limit *l, char *err) {
  memset(l, 0, sizeof *l);
  l->ci.oom_event = l->ci.replay_event = -1;
  if (a->ngiven) {
    l->from = LIMIT_GIVEN;
    l->bytes = a->ngiven == 1 ? a->given_bytes : 0;
    snprintf(l->source, sizeof l->source, "%s", a->given_text ? a->given_text : "given");
    return 0;
  }
  if (a->oom_message) {
    struct oom_message m;
    if (oom_message_read(a->oom_message, &m, err)) return 2;
    l->from = LIMIT_OOM_MESSAGE;
    l->bytes = m.limit;
    snprintf(l->source, sizeof l->source, "%.127s", m.source);
    if (a->trace && !a->trust_message) {              /* the message must be this snapshot's OOM */
      if (cap_infer_trace(a->trace, a->trace_device, &l->ci, err)) return 2;
      char why[400];
      if (!limit_message_fits(&m, &l->ci, why, sizeof why)) {
        snprintf(err, FB_ERRLEN, "the OOM message (--oom-message) does not belong to the snapshot (--trace): %.300s. Give the "
                 "message of the run that recorded it, or --trust-message to plan for its limit all the same", why);
        return 2;
      }
    }
    return 0;
  }
  if (a->trace) {   /* the side file capture.py wrote: exact, as an OOM message's */
    struct snapshot_meta sm;
    int found = snapshot_meta_find(a->trace, &sm, err);
    if (found < 0) return 2;
    if (found) {
      l->from = LIMIT_OOM_MESSAGE;
      l->side_file = 1;
      l->bytes = sm.limit_bytes;
      snapshot_meta_source(&sm, l->source, sizeof l->source);
      return 0;
    }
  }
  if (a->trace && !a->no_infer) {
    if (cap_infer_trace(a->trace, a->trace_device, &l->ci, err)) return 2;
    if (l->ci.has_oom) {
      l->from = LIMIT_INFERRED;
      l->bytes = l->ci.cap;
    }
  }
  return 0;
}

void limit_sentence(const struct limit *l, char *buf, size_t n) {
  char a[32], b[32], c[32];
  switch (l->from) {
  case LIMIT_GIVEN:
    if (l->bytes) snprintf(buf, n, "limit %s (%llu bytes): given (%s)", fmt_bytes(l->bytes, a, sizeof a),
                           (unsigned long long)l->bytes, l->source);
    else snprintf(buf, n, "limit: given (%s), one per row", l->source);
    return;
  case LIMIT_OOM_MESSAGE:
    snprintf(buf, n, "limit %s (%llu bytes): from %s", fmt_bytes(l->bytes, a, sizeof a), (unsigned long long)l->bytes, l->source);
    return;
  case LIMIT_INFERRED:
    snprintf(buf, n, "limit %s (%llu bytes): inferred from the snapshot's OOM, the job ran under between %s and %s "
             "(--limit or --oom-message gives it exactly, --no-infer-cap turns this off)", fmt_bytes(l->bytes, a, sizeof a),
             (unsigned long long)l->bytes, fmt_bytes(l->ci.lo, b, sizeof b), fmt_bytes(l->ci.hi, c, sizeof c));
    return;
  case LIMIT_NONE:
    snprintf(buf, n, "limit: none (uncapped)");
    return;
  }
}

uint64_t limit_device_total(const struct device_config *cfg) {
  if (!strcmp(cfg->kind, "sim")) return cfg->sim_total ? cfg->sim_total : SIM_TOTAL_DEFAULT;
  struct device d;
  char err[FB_ERRLEN];
  if (device_open(&d, cfg, err)) return 0;
  uint64_t t = d.total;
  device_close(&d);
  return t;
}

uint64_t limit_on_device(int fraction, double value, uint64_t bytes, uint64_t total) {
  return fraction ? (uint64_t)(value * (double)total) : bytes;
}
