/* workload.h - the workload interface: synthetic generators and trace readers alike.
 * Pull-based: the harness asks for one event at a time, so a trace of any length
 * replays in memory proportional to its live blocks. */
#ifndef FB_WORKLOAD_H
#define FB_WORKLOAD_H
#include <stdint.h>
#include <stddef.h>
#include "event.h"
#include "params.h"

struct trace_src;
struct workload_ctx {
  int rank, world;          /* rank-aware workloads: this device's rank among world */
  uint64_t seed;
  const char *path;         /* trace readers: the file */
  int trace_device;         /* trace readers: which device's events (-1 = the first with events) */
  const struct event_buffer *events;   /* trace_mem: the trace already in memory */
  struct trace_src *src;    /* trace readers: the file already open (and rewound), handed over: the
                               reader owns it from then on, failing or not (NULL: open path) */
};

/* ids of a snapshot's replayed failed requests (its oom entries): above any address */
#define TRACE_OOM_ID_BASE (1ULL << 63)

/* What a workload knows about itself; filled by info() right after open. */
struct workload_info {
  uint64_t trace_peak_reserved;   /* snapshots: peak of the trace's own segment events; 0 = n/a */
  uint64_t usable_bytes;          /* from an oom entry (device_free + reserved); 0 = unknown */
  char allocator_settings[512];   /* as our params: "max_split_size=...,roundup_power2_divisions=[...]" */
  char recorded_allocator[32];    /* "caching" / "expandable" / "" */
  uint64_t device_mask;           /* bit d: device trace d has events (snapshots) */
  uint64_t ignored;               /* keys/actions ignored */
  /* what the trace holds that its events cannot carry (an action the reader does not know,
   * a pool it cannot place), "; "-separated; "" = nothing (unmodelled.h names it) */
  char unmodelled[400];
  uint32_t pools;                 /* private pools the trace's events use (event.h); 0 = none */
  int holds_whole_trace;          /* 1 if memory is proportional to the trace, not live blocks */
  /* snapshots with an oom entry: the first OOM, and what the trace says of the limit L the
   * job ran under (oom_evidence.c): limit_lo <= L < limit_hi */
  int has_oom;
  int oom_device_limit;           /* the oom's device_free < the segment it needed: the device was full */
  uint64_t oom_request;           /* the failing request as recorded (PyTorch's rounded size) */
  uint64_t oom_segment;           /* the segment it needed (PyTorch's allocation size) */
  uint64_t oom_stream, oom_device_free;
  uint64_t oom_reserved;          /* reserved at the oom, after the release-and-retry */
  uint64_t oom_released;          /* what the release-and-retry right before it gave back */
  uint64_t limit_lo, limit_hi;    /* 0, 0 = no oom */
  uint64_t limit_retries;         /* release-and-retry bursts that bounded L from above */
  char oom_frames[1024];          /* the failing request's stack as the snapshot holds it:
                                     "name (file:line); ..." in its order; "" = none recorded */
};

struct workload_ops {
  const char *name;
  const char *help;                  /* one line */
  const struct param_spec *params;   /* NULL-key terminated; may be NULL */
  int is_trace;                      /* reads a file (ctx->path) */
  /* trace readers: does this look like our format? (first bytes of the file, decompressed) */
  int  (*probe)(const unsigned char *head, size_t n);
  int  (*open)(void **st, const struct params *p, const struct workload_ctx *ctx, char *err);
  /* 1 = event, 0 = end, <0 = error (err names file and line/offset and what was expected) */
  int  (*next)(void *st, struct event *ev, char *err);
  /* optional: up to max of the next events where they lie (*ev points at them, valid
   * until the next call), as next() would give them one by one; the count (it may be
   * fewer than max before the end), 0 at the end, -1 on an error (err) */
  int  (*span)(void *st, const struct event **ev, int max, char *err);
  int  (*rewind)(void *st, char *err);
  void (*info)(void *st, struct workload_info *out);   /* optional */
  /* optional: "file:line" of the last event returned, for warnings */
  const char *(*where)(void *st);
  void (*close)(void *st);
};

/* An open workload: ops + state (what the harness and offline planners hold). */
struct workload {
  const struct workload_ops *ops;
  void *st;
  struct params params;
  struct workload_ctx ctx;
  char spec[256];           /* as written on the command line: "train_loop:layers=4" or the path */
};

/* registry (workloads/registry.c) */
extern const struct workload_ops *const workload_table[];
const struct workload_ops *workload_find(const char *name);
/* the trace reader whose probe accepts this file; NULL with err set */
const struct workload_ops *trace_detect(const char *path, char *err);
/* the same from a source already open (trace_src.h), left rewound for its reader: the
 * file opened once for both (event_buffer_load) */
const struct workload_ops *trace_detect_src(struct trace_src *src, const char *path, char *err);

/* A whole trace read into memory once and replayed many times (advise's candidates):
 * trace_mem.c. Memory proportional to the trace (32 B per event). */
struct event_buffer {
  struct event *ev;
  size_t n, cap;
  struct workload_info info;      /* what the trace's reader said about it */
  /* where it was read from (event_buffer_load), for warnings' "file:line"; NULL = built */
  const struct workload_ops *reader;
  char *path;
  int trace_device;
  /* the events carry their slots in the replay's map (the harness's livemap_slot_events):
   * a map of this many entries holds them; 0 = they carry none (a push clears it) */
  uint32_t slot_table;
};
/* Read every event of the trace (its reader detected from content). 0, or -1 with err. */
int  event_buffer_load(struct event_buffer *b, const char *path, int trace_device, char *err);
/* the same, giving up (-1, err) past max_events */
int  event_buffer_load_max(struct event_buffer *b, const char *path, int trace_device, size_t max_events, char *err);
void event_buffer_free(struct event_buffer *b);
/* Append one event (the buffer grows by doubling). 0, or -1 out of host memory. */
int  event_buffer_push(struct event_buffer *b, const struct event *e);
/* replays ctx->events; info() is the reader's */
extern const struct workload_ops trace_mem_workload;

int  workload_open(struct workload *w, const struct workload_ops *ops, const char *spec_params,
                   const struct workload_ctx *ctx, uint64_t percent_base, char *err);
static inline int workload_next(struct workload *w, struct event *ev, char *err) { return w->ops->next(w->st, ev, err); }
int  workload_rewind(struct workload *w, char *err);
void workload_close(struct workload *w);

#endif
