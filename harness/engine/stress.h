/* stress.h - stress mode: N host threads, each on its own stream (thread i uses stream
 * i + 1), drive ONE allocator instance on one device for a while, with random patterns
 * (sizes log-uniform 512 B .. 64 MiB, random frees, a bounded number of live blocks per
 * thread) or, given a workload or trace, trace-derived ones (each thread replays the
 * workload's allocs and frees on its own stream, over and over). Device allocations can
 * be made to fail at random (fault injection).
 *
 * Thread safety: one mutex per allocator instance, taken around each alloc, free and
 * empty_cache call (as PyTorch's caching allocator does); the validator and the device
 * are only called under it. The single-threaded replay path (replay.c) takes no lock.
 *
 * At the end every thread frees what it holds, the strategy is destroyed, and the
 * device must hold nothing: an overlap, a block outside held memory, a count mismatch,
 * a lost block or a device error is a failure (exit class 1). */
#ifndef FB_STRESS_H
#define FB_STRESS_H
#include <stdint.h>
#include "allocator.h"
#include "device.h"

#define STRESS_MAX_THREADS 256
#define STRESS_MAX_LIVE_DEFAULT 64
#define STRESS_MIN_SIZE_DEFAULT 512ull
#define STRESS_MAX_SIZE_DEFAULT (64ull << 20)

#define STRESS_SECONDS_MAX 2592000   /* 30 days: longer is refused (exit 2) */

struct stress_spec {
  const char *allocator;          /* "caching:max_split_size_mb=64" */
  const struct allocator_ops *ops;/* tests: use these ops instead of the named strategy (allocator = its params) */
  const char *workload;           /* trace-derived pattern from a generator, or NULL */
  const char *trace;              /* ... or from a trace file, or NULL (both NULL: random) */
  int trace_device;               /* -1: the first device with events */
  struct device_config device;
  uint64_t cap_bytes;             /* 0 = uncapped */
  int threads;                    /* 1 .. STRESS_MAX_THREADS */
  double seconds;                 /* how long each thread runs (at most STRESS_SECONDS_MAX) */
  uint64_t ops_per_thread;        /* > 0: stop after this many calls instead (deterministic with 1 thread) */
  double fail_rate;               /* each device allocation fails with this probability */
  int validate;                   /* overlap / inside-held / counts checks under the lock */
  uint64_t seed;
  unsigned max_live;              /* random pattern: live blocks per thread (0 = default) */
  uint64_t min_size, max_size;    /* random pattern: log-uniform size range (0 = defaults) */
};

struct stress_thread {
  uint64_t stream;
  uint64_t ops;                   /* alloc + free + empty_cache calls */
  uint64_t allocs, frees, empty_caches;
  uint64_t ooms;                  /* allocations that failed after the strategy's recovery */
  uint64_t flushes;               /* cache flushes (release and retry) during this thread's calls */
  uint64_t injected;              /* device failures injected during this thread's calls */
  uint64_t passes;                /* trace-derived: complete passes over the workload */
  uint64_t skipped;               /* trace-derived: events skipped (zero size, unknown free, ...) */
  double seconds;                 /* this thread's wall time */
};

struct stress_result {
  char allocator[64], params[256], device_name[128], pattern[300];
  char status[FB_ERRLEN + 64];    /* "ok", "skipped: ...", "error: ..." */
  char validator[FB_ERRLEN + 64]; /* "passed", "off", or the failure */
  int exit_class;                 /* 0 ok or skipped; 1 validator failure, lost block, device error; 2 bad input */
  int threads;
  struct stress_thread t[STRESS_MAX_THREADS];
  uint64_t peak_reserved, cache_flushes, injected_failures, checks;
};

/* Runs the stress test. Returns r->exit_class. */
int stress_run(const struct stress_spec *s, struct stress_result *r);

#endif
