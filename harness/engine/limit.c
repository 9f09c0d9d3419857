/* limit.c - see limit.h. A limit given wins over the OOM message, which wins over
 * capture.py's side file beside the snapshot (snapshot_meta.h), which wins over the
 * inference; --no-infer-cap only turns the inference off. */
#include "limit.h"
#include <stdio.h>
#include <string.h>
#include "oom_message.h"
#include "snapshot_meta.h"

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
