/* fit.h - what fits: for one generator x one allocator, the largest value of one
 * integer parameter (batch, seq, ...) whose run completes under a memory limit, the
 * headroom left at that value and what the next value needs. The search assumes the
 * need grows with the parameter (gallop up from `from`, then bisect), then checks that
 * assumption around the answer as mincap.c checks its own: values below the answer must
 * complete and values just above must not; a point that breaks it is reported and the
 * answer falls back to the largest value below every failure seen (fit never answers a
 * value it saw fail below). Every probe is one replay_run() on the spec's device (sim:
 * exact and deterministic).
 *
 * The limit is what the job may reserve (PyTorch's set_per_process_memory_fraction x
 * the device's total). `margin` is memory the job takes inside that limit that the
 * generator does not describe (cuBLAS workspaces, the model's calibration error): the
 * probes run under limit - margin. */
#ifndef FB_FIT_H
#define FB_FIT_H
#include <stddef.h>
#include <stdint.h>
#include "replay.h"

/* The default margin (docs/fit.md: calibrated on an H100 against real PyTorch):
 * what every job allocates that no generator describes - cuBLAS's and cuBLASLt's
 * workspaces and a small buffer, 65 MiB (real peak allocated minus the generator's: 65.0
 * MiB in 40 of 49 measured runs, 64.0-66.6 in the others) - plus 1% of the limit for the
 * allocator model's error under pressure (the worst seen on the calibration jobs: 0.6%). */
#define FIT_WORKSPACE_BYTES (65ull << 20)
#define FIT_ERROR_FRACTION 0.01
#define FIT_MARGIN_TEXT "65MiB + 1% of the limit"
uint64_t fit_default_margin(uint64_t limit);

#define FIT_MAX_POINTS 128
#define FIT_TO_DEFAULT 65536   /* the largest value tried when --to is not given */

struct fit_point { uint64_t value; int ok; uint64_t peak_reserved, peak_requested; };

struct fit_report {
  int runs;                    /* replays made */
  uint64_t limit, margin;      /* as given; probes ran under limit - margin */
  int found;                   /* a value completed */
  uint64_t max_value;          /* the answer (found) */
  uint64_t headroom;           /* limit - peak reserved at max_value (the margin is inside it) */
  uint64_t next_value;         /* max_value + 1, or the smallest value tried when none fits; 0 = beyond `to` */
  uint64_t next_needs;         /* the smallest limit under which next_value completes (its mincap + margin); 0 = unknown */
  uint64_t next_reserved;      /* next_value's peak reserved, uncapped */
  uint64_t nonmono_value;      /* a value that breaks monotonic need (0 = none seen) */
  int nonmono_completes;       /* ... it completes above a failing value (1) or fails below a completing one (0) */
  int at_to;                   /* the answer is `to` itself: larger values were not tried */
  int npoints;                 /* every value tried under the limit, in the order tried */
  struct fit_point pts[FIT_MAX_POINTS];
};

/* Writes spec with `key=value` set (replacing the key where the spec has it) into buf.
 * 0, or -1 when it does not fit. */
int fit_spec(const char *spec, const char *key, uint64_t value, char *buf, size_t len);

/* Runs the search for base->workload (a generator spec). `out` is the run at max_value
 * under limit - margin (cap_bytes = that cap), or, when nothing fits, the run at `from`
 * as it ended; its status gains "ok: non-monotonic (...)" when the check found a point.
 * Returns out->exit_class (0, 1, or 2 for bad input such as an unknown parameter).
 * progress: one line on stderr per probe. rep may be NULL. */
int fit_find(const struct run_spec *base, const char *vary, uint64_t limit, uint64_t margin, uint64_t from,
             uint64_t to, int progress, struct run_result *out, struct fit_report *rep);

/* Uncapped peak reserved at value v (for the plot): 0, or the run's exit class with its
 * status in r. */
int fit_point_uncapped(const struct run_spec *base, const char *vary, uint64_t v, struct run_result *r);

#endif
