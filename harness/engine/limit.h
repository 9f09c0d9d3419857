/* limit.h - where a command's memory limit comes from, decided in one place for run,
 * mincap, explain, advise (and fit): given on the command line (--limit and its aliases),
 * read from PyTorch's OOM text (--oom-message) or from capture.py's side file beside the
 * snapshot (snapshot_meta.h; no flag needed, --limit/--oom-message override it), inferred from a snapshot that ended in an
 * OOM (cap_infer.h; --no-infer-cap turns that off), or none; and the one sentence every
 * command prints about it. */
#ifndef FB_LIMIT_H
#define FB_LIMIT_H
#include <stddef.h>
#include <stdint.h>
#include "cap_infer.h"

enum limit_from { LIMIT_NONE, LIMIT_GIVEN, LIMIT_OOM_MESSAGE, LIMIT_INFERRED };

struct limit_ask {
  int ngiven;                 /* caps given on the command line (0 = none) */
  uint64_t given_bytes;       /* the first of them in bytes (0: a multiple of the peak, resolved per input) */
  const char *given_text;     /* as the user wrote it, with its flag: "--limit 50%" */
  const char *oom_message;    /* --oom-message FILE|-, or NULL */
  int no_infer;               /* --no-infer-cap */
  const char *trace;          /* the one snapshot a limit may be read beside or inferred from, or NULL */
  int trace_device;
};

struct limit {
  enum limit_from from;
  uint64_t bytes;             /* 0 with LIMIT_NONE (or several given caps) */
  struct cap_inference ci;    /* LIMIT_INFERRED: the inference (ci.has_oom) */
  char source[128];           /* the OOM message's phrase, or the flag given */
  int side_file;              /* LIMIT_OOM_MESSAGE read from capture.py's side file (snapshot_meta.h) */
};

/* Decide. 0, or 2 with err (an unreadable OOM message or trace). */
int limit_resolve(const struct limit_ask *a, struct limit *l, char *err);
/* "limit 19.79 GiB (21249...): from the OOM message's ..." - the one sentence, into buf */
void limit_sentence(const struct limit *l, char *buf, size_t n);

#endif
