/* plan.h - the rows of a run, built once: input x strategy x cap x device, with every cap
 * resolved in one place (a fraction of the row's device total, bytes, a multiple of the
 * row's own input's peak requested, or the limit a snapshot's OOM implies), run by one
 * loop (plan_run). The launchers - one device, a thread per device (--devices), an MPI
 * rank per device - only decide where each group of rows runs (plan_exec_fn) and gather
 * the results; what is written is decided by the caller's plan_emit_fn. On one simulated
 * device the rows run on the engine's pool, one worker per core (row_pool.h), and are
 * emitted in row order, so the output is the same whatever the number of cores; a GPU's
 * rows run one after another on it. */
#ifndef FB_PLAN_H
#define FB_PLAN_H
#include <stdint.h>
#include <stdio.h>
#include "replay.h"
#include "stream_acct.h"
#include "limit.h"
#include "results_read.h"

#define PLAN_MAX 64                 /* workloads, traces, strategies, caps, devices: each at most */

enum plan_cap_kind { PLAN_CAP_NONE, PLAN_CAP_FRACTION, PLAN_CAP_BYTES, PLAN_CAP_X, PLAN_CAP_INFERRED };
struct plan_cap { enum plan_cap_kind kind; double value; uint64_t bytes; };

struct plan_opts {
  const char *const *workloads; int nworkloads;
  const char *const *traces; int ntraces;
  int trace_device;                 /* -1: each device trace with events (one device), or device trace i on device i */
  const char *const *allocators; int nallocators;   /* none: raw */
  const struct plan_cap *caps; int ncaps;
  const struct device_config *devices; int ndevices;   /* 1: one device; more: a group of rows per device */
  int multi;                        /* several devices (even of one): rank i of n, per-rank seeds, device=all rows */
  struct run_spec base;             /* seed, on_oom, validate, strict, verify, touch, quiet, progress... */
  int timeline, breakdown;          /* each row's timeline / per-stream account, kept for the emitter */
  int no_infer_cap;
  int trust_message;             /* --trust-message (limit.h) */
  const char *oom_message;          /* --oom-message FILE|-: the limit of every row without a cap given */
  int threads;                      /* one device of the simulated kind: rows on this many workers (0: one per core; row_pool.h) */
  const struct results *uncapped;   /* --uncapped: rows of an uncapped run on the rows' device; a capped row such a row stands
                                       for (uncapped_rows.h) is that row, not replayed (one device, no timeline or breakdown) */
};

struct plan_row {
  struct run_spec spec;
  int group, slot;                  /* rows of one group run together, slot = which device */
  int source;                       /* index of the input (for the peak requested, computed once per input and slot) */
  struct plan_cap cap;
  char *timeline; size_t timeline_len;   /* this row's timeline rows (plan_opts.timeline) */
  char *warn; size_t warn_len;           /* its warnings, while rows run side by side (written in row order) */
  struct stream_acct acct;          /* this row's per-stream account (plan_opts.breakdown) */
  char label[320];                  /* its timeline label ("" = none) */
};

struct plan {
  struct plan_opts o;
  struct plan_row *rows; int n;
  int ngroups, width;               /* width = rows per group = devices */
  uint64_t *peak;                   /* [source * width + slot]: peak requested, 0 = not computed */
  int nsources;
  uint64_t total[PLAN_MAX];         /* each slot's device total, 0 = not asked yet */
  struct limit lim;                 /* the limit of rows with no cap given (LIMIT_INFERRED / LIMIT_OOM_MESSAGE / NONE) */
  const char *label[PLAN_MAX * 4];  /* each source's name, for timelines of several sources */
  int pooled;                       /* the rows run side by side now (each row's warnings kept) */
  int nby_uncapped;                 /* capped rows that were their uncapped row in o.uncapped */
};

/* Build the rows. 0, or 2 with err (bad selection, unreadable trace). */
int plan_build(const struct plan_opts *o, struct plan *p, char *err);
void plan_release(struct plan *p);

/* Run one row where it is: resolve its cap, replay it (its timeline and account kept in
 * the row). Every launcher calls this for the rows it runs. */
int plan_row_run(struct plan *p, struct plan_row *row, struct run_result *r);

/* run the n rows of one group (n = p->width), each result into res[i] */
typedef void (*plan_exec_fn)(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx);
/* the results of one group, in order: returns the worst exit class so far's contribution
 * (0, 1, or 2 = stop) */
typedef int (*plan_emit_fn)(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx);
/* The one loop: every group, executed by exec, emitted by emit. Returns the worst class. */
int plan_run(struct plan *p, plan_exec_fn exec, void *exec_ctx, plan_emit_fn emit, void *emit_ctx);
/* exec for one device: the group's rows one after another, here */
void plan_exec_here(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx);

/* The aggregate row of n per-device rows: peaks are the largest device's, imbalance =
 * max/min peak_reserved, wall = the slowest device's; counts summed. */
void aggregate_rows(const struct run_result *rows, int n, struct run_result *agg);

/* The inputs of one device: each workload, and each trace's device traces with events
 * (or trace_device alone when given). 0, or 2 with err. */
struct plan_source { const char *workload; const char *trace; int trace_device; };
int plan_sources(const struct plan_opts *o, struct plan_source *out, int max, int *n, char *err);
/* Every workload and strategy named is known, with known keys and values: 0, or 2 with err. */
int plan_check_selection(const struct plan_opts *o, char *err);

#endif
