/* replay.h - the replay engine: one run = one workload (or trace) x one allocator x one
 * cap on one device, measured. It owns the live-block map, the metrics, the timing, the
 * validator, and the OOM/skip policy. The CLI, mincap, stress, the multi-device runner
 * and the tests all call replay_run(). */
#ifndef FB_REPLAY_H
#define FB_REPLAY_H
#include <stdint.h>
#include <stdio.h>
#include "allocator.h"
#include "device.h"
#include "workload.h"

enum on_oom { ON_OOM_STOP, ON_OOM_SKIP };

struct run_spec {
  /* what to replay: a generator ("train_loop:layers=4") or a trace file */
  const char *workload;         /* generator spec, or NULL */
  const char *trace;            /* trace path, or NULL */
  const struct event_buffer *events;   /* that trace already in memory (advise), or NULL: read the file */
  int trace_device;             /* -1: the first device with events */
  int rank, world;
  uint64_t seed;
  /* which strategy: "caching:max_split_size_mb=64"; "recorded" picks the snapshot's */
  const char *allocator;
  /* where */
  struct device_config device;
  uint64_t cap_bytes;           /* 0 = uncapped */
  double cap_x;                 /* informational (the CSV's cap_x column); 0 = n/a */
  const char *cap_source;       /* informational: "given", "inferred" (cap_infer.h) or NULL */
  uint64_t cap_lo, cap_hi;      /* informational: the snapshot's limit interval; 0 = n/a */
  enum on_oom on_oom;
  int validate, strict, verify, touch;
  int no_touch;                 /* cuda: no default touch of a stream-ordered strategy's blocks */
  FILE *timeline;               /* NULL = none (rows: timeline.h) */
  FILE *warn;                  /* where the row's warnings go (NULL: stderr; rows run side by side: a buffer each, written in row order) */
  const char *timeline_label;   /* the source, before "/allocator" in the timeline's first column; NULL = none */
  struct stream_acct *breakdown;  /* run --breakdown: the device splits reserved by stream into it; NULL = off */
  int quiet;                    /* no warnings on stderr */
  int progress;                 /* progress line on stderr (terminal, long runs) */
  double fail_rate;             /* fault injection: each device allocation fails with this probability (0 = none) */
  int warm_passes;              /* percall: after the row, this many passes more on the same strategy (its cache kept) */
  double *warm_ns;              /* ... their ns per call, one each (NaN: not completed); the row's figures stay the first pass's */
  int least_floor;              /* track the most the live blocks take at least at once (run_result.peak_least; mincap's floor) */
  int untimed;                  /* no call timed on its own (p50/p99/max_ns stay 0): the run's times are not read (advise's need probes) */
};

struct run_result {
  char workload[256], trace[512], allocator[64], params[600], device[32], device_name[128];
  uint64_t cap_bytes; double cap_x; uint64_t seed;
  char status[FB_ERRLEN + 64];  /* ok, oom, skipped: ..., error: ... */
  int completed;
  uint64_t events, allocs, frees, skipped_events, oom_count;
  int64_t first_oom_event;      /* -1 = none */
  uint64_t peak_requested, peak_allocated, peak_reserved;
  double overhead, frag, ext_frag;   /* NaN = not applicable */
  uint64_t internal_frag;
  uint64_t trace_peak_reserved;      /* 0 = n/a */
  uint64_t device_allocs, device_frees, maps, unmaps, cache_flushes;
  uint64_t modeled_driver_ns, wall_ns;
  double ns_per_op; uint64_t p50_ns, p99_ns, max_ns, timed_samples;
  double leak_bytes_per_iter;        /* NaN = n/a */
  uint64_t mincap_bytes; double mincap_x;   /* mincap rows; 0 = n/a */
  double imbalance;                  /* aggregate rows; NaN = n/a */
  int exit_class;                    /* 0 ok, 1 validator/device failure, 2 bad input/usage */
  int params_from_trace;             /* how many of params came from the snapshot (`recorded` only) */
  char alloc_conf[600];              /* the PYTORCH_CUDA_ALLOC_CONF for this setting; "" = not in PyTorch */
  char cap_source[16];               /* "given", "inferred" or "" */
  uint64_t cap_lo, cap_hi;           /* the limit the snapshot ran under: lo <= L < hi; 0 = n/a */
  double model_err;                  /* the relative +/- error of peak_reserved the strategy's model carries
                                        (allocator_ops.model_err on sim; 0 on cuda, where it is measured) */
  int cap_blind;                     /* the strategy, with these parameters, learns of a cap only from refusals (allocator.h) */
  int blind_unreached;               /* under a cap at or above what its uncapped run reserved at most, the strategy makes
                                        that run, call for call: cap_blind, or ALLOC_CAP_READ_IN_USE (uncapped_rows.h) */
  uint64_t same_lo, same_hi;         /* the caps under which this run is the same, call for call (a cap-blind
                                        strategy or ALLOC_CAP_COMPARED: the device's same_lo, same_hi); 0, 0 = not known */
  uint64_t peak_least;               /* run_spec.least_floor: the most the live blocks took at least at once
                                        (allocator_ops.least_block summed); 0 = not tracked */
  char ns_per_op_includes[40];       /* work inside the timed loop besides the strategy's: "validate", "validate+timeline",
                                        "timeline", "verify"...; "" = ns_per_op is the strategy's own (p50/p99/max always are) */
};

void run_result_init(struct run_result *r);
/* Runs one row. Returns r->exit_class (0, 1 or 2); status and message are in r. */
int replay_run(const struct run_spec *spec, struct run_result *r);
/* Peak live requested bytes of a workload alone (for --cap-x), 0 and err on failure. */
int workload_peak_requested(const struct run_spec *spec, uint64_t *peak, char *err);

#endif
