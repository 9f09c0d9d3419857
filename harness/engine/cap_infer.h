/* cap_infer.h - the memory limit a PyTorch snapshot that ended in an OOM ran under.
 * The snapshot's reader bounds it (workload_info limit_lo/limit_hi: oom_evidence.c);
 * this picks one cap inside [lo, hi) under which the recorded allocator (the snapshot's
 * own strategy and settings, replayed on the simulated device) fails at the same event
 * PyTorch did: a bisection over the cap, every step one replay of the trace held in
 * memory. `fragbench run` replays every strategy under that cap when none is given;
 * `fragbench advise` takes it as its default budget. */
#ifndef FB_CAP_INFER_H
#define FB_CAP_INFER_H
#include <stddef.h>
#include <stdint.h>
#include "replay.h"

struct cap_inference {
  int has_oom;                 /* 0: the trace has no oom entry (nothing else is set) */
  int device_limit;            /* the device itself was full (device_free < the segment) */
  uint64_t lo, hi;             /* the limit L the job ran under: lo <= L < hi */
  uint64_t cap;                /* the cap chosen inside [lo, hi) */
  int64_t oom_event;           /* the replay's event index of PyTorch's first OOM */
  int64_t replay_event;        /* where the recorded allocator fails under cap (-1: it completes) */
  int matched;                 /* replay_event == oom_event */
  uint64_t replays;            /* how many replays the search took */
  /* the failing request as PyTorch recorded it */
  uint64_t request, segment, stream, device_free, reserved, released, retries;
  char frames[1024];           /* its stack frames as the snapshot holds them ("" = none) */
  char recorded[64];           /* the recorded allocator's name */
};

/* From a trace already in memory (its info from the reader). 0, or 2 with err. */
int cap_infer_events(const struct event_buffer *b, const char *trace, int trace_device,
                     struct cap_inference *out, char *err);
/* Reads the trace once, then as cap_infer_events. 0 with out->has_oom, or 2 with err. */
int cap_infer_trace(const char *trace, int trace_device, struct cap_inference *out, char *err);
/* The one sentence for stderr: "ends in an OOM at event N: ..." */
void cap_infer_sentence(const struct cap_inference *ci, char *buf, size_t n);
/* The same up to the limit's interval, without the cap every strategy replays under (for
 * commands that do not replay under it: mincap, advise, explain with a limit given) */
void cap_infer_evidence(const struct cap_inference *ci, char *buf, size_t n);
/* "below" / "inside" / "above" the interval, for a strategy needing `need` bytes */
const char *cap_infer_place(const struct cap_inference *ci, uint64_t need);

#endif
