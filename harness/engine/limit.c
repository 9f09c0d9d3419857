/* limit.c - see limit.h. A limit given wins over the OOM message, which wins over the
 * inference; --no-infer-cap only turns the inference off. An OOM message given with a
 * snapshot that ended in an OOM must be that OOM's (limit_message_fits). */
#include "limit.h"
#include <stdio.h>
#include <string.h>
#include "oom_message.h"

/* PyTorch prints sizes with two decimals in the largest unit that keeps them >= 1
 * (format_size): the value read is the low end, and the true size lies within half a
 * hundredth of that unit of it */
static uint64_t printed_slack(uint64_t v) {
  uint64_t unit = 1;
  while (unit < (1ull << 40) && v >= unit * 1024) unit *= 1024;
  return unit / 100 + 1;
}

static int near(uint64_t printed, uint64_t v) {
  uint64_t d = printed > v ? printed - v : v - printed;
  return d <= printed_slack(printed);
}

int limit_message_fits(const struct oom_message *m, const struct cap_inference *ci, char *why, size_t n) {
  char a[32], b[32], c[32], d[32];
  why[0] = 0;
  if (!ci->has_oom) return 1;                       /* nothing in the snapshot to hold it against */
  if (m->tried && !near(m->tried, ci->request) && !near(m->tried, ci->segment)) {
    snprintf(why, n, "it says 'Tried to allocate %s', but the snapshot's failed request is %s (%llu bytes, a %s segment)",
             fmt_bytes(m->tried, a, sizeof a), fmt_bytes(ci->request, b, sizeof b), (unsigned long long)ci->request,
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
        snprintf(err, FB_ERRLEN, "the OOM message %s does not belong to the snapshot %s: %s. Give the message of the run "
                 "that recorded this snapshot, or --trust-message to plan for its limit all the same",
                 strcmp(a->oom_message, "-") ? a->oom_message : "(stdin)", a->trace, why);
        return 2;
      }
    }
    return 0;
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
