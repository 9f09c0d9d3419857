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
#include "device.h"

enum limit_from { LIMIT_NONE, LIMIT_GIVEN, LIMIT_OOM_MESSAGE, LIMIT_INFERRED };

struct limit_ask {
  int ngiven;                 /* caps given on the command line (0 = none) */
  uint64_t given_bytes;       /* the first of them in bytes (0: a multiple of the peak, resolved per input) */
  const char *given_text;     /* as the user wrote it, with its flag: "--limit 50%" */
  const char *oom_message;    /* --oom-message FILE|-, or NULL */
  int no_infer;               /* --no-infer-cap */
  int trust_message;          /* --trust-message: an OOM message not checked against the snapshot */
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

/* Does PyTorch's OOM message m belong to the snapshot whose OOM ci describes? Its failed
 * request ("Tried to allocate") must be the snapshot's (the request or its segment, inside
 * the interval the message printed it as) and its limit inside the interval the snapshot proves.
 * 1 yes (or the snapshot has no OOM to hold it against); 0 with why. */
struct oom_message;
int limit_message_fits(const struct oom_message *m, const struct cap_inference *ci, char *why, size_t n);
/* A limit as written on the command line (--limit/--cap-bytes/--budget, or --cap's
 * fraction), read in one place:
 *   10GiB, 10Gi, 10G, 10g   10 x 2^30 bytes (PyTorch's users think in GiB)
 *   10GB, 10gb              10 x 10^9 bytes
 *   1048576B                bytes, written with their unit
 *   25%                     of the device's total
 *   0.25                    a fraction of the device's total (as set_per_process_memory_fraction)
 * A bare integer ("10") is refused with the hint that a limit needs a unit; hex ("0x10",
 * "0x1p40") is refused; so is a limit below one byte (0, 1e-12%, 0.00000000001 of the
 * device) and one above max_bytes. fraction_only: --cap (a fraction in (0, 1]). total is
 * the device total a fraction is taken of (checked against one byte). */
struct limit_text {
  int fraction;               /* 1: a fraction of the device (value), resolved per device */
  double value;               /* the fraction */
  uint64_t bytes;             /* bytes, or the fraction of total */
  char how[96];               /* how it was read: "G = GiB = 2^30 bytes", "25% of the device" */
};
int limit_parse(const char *flag, const char *text, int fraction_only, uint64_t total, uint64_t max_bytes, struct limit_text *lt,
                char *err, size_t errlen);

/* A device's total, the one a limit given as a fraction (N%, 0.25, --cap F) is taken of:
 * sim's --sim-total (default an H100 80GB), else the device's own; 0 where it cannot be opened */
uint64_t limit_device_total(const struct device_config *cfg);
/* A limit given on the command line in bytes on a device whose total is total: the one
 * place a fraction becomes bytes, for run's rows (their own device), mincap, fit, stress,
 * advise, explain and the sentence that says it back */
uint64_t limit_on_device(int fraction, double value, uint64_t bytes, uint64_t total);

/* Decide. 0, or 2 with err (an unreadable OOM message or trace; a message that does not
 * belong to the snapshot a->trace, unless a->trust_message). */
int limit_resolve(const struct limit_ask *a, struct limit *l, char *err);
/* "limit 19.79 GiB (21249...): from the OOM message's ..." - the one sentence, into buf */
void limit_sentence(const struct limit *l, char *buf, size_t n);

#endif
