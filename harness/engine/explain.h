/* explain.h - `fragbench explain`: the memory at one moment of a trace under one strategy
 * (default: the snapshot's own, under the limit it ran under when it ended in an OOM):
 * every segment with its blocks, reserved, allocated, free inside reserved, the largest
 * free block, and the request at that moment with whether it fits and why not. The
 * trace is read into memory once; the strategy replays up to the moment on the simulated
 * device and is asked for its segments (allocator_ops.segments, caching and expandable;
 * other strategies give the totals only). */
#ifndef FB_EXPLAIN_H
#define FB_EXPLAIN_H
#include <stddef.h>
#include <stdint.h>
#include "replay.h"
#include "cap_infer.h"

struct explain_opts {
  const char *trace;
  int trace_device;           /* -1: the first device with events */
  const char *allocator;      /* NULL: recorded */
  const char *at;             /* "oom", "peak" or an event index; NULL: oom when there is one, else peak */
  uint64_t cap;               /* 0: inferred from an OOM (unless no_infer_cap), else none */
  int no_infer_cap;
  int block_frames;           /* also the stack that allocated each block (explain_block_frames) */
};

#define EXPLAIN_TOP_BLOCKS 5
struct explain_block { uint64_t size; char frames[1024]; };   /* frames: "name (file:line); ...", "" = none recorded */

struct explain_state {
  uint64_t events;            /* in the trace */
  int64_t event;              /* the moment: the memory just before this event */
  int at_oom;                 /* event is PyTorch's OOM */
  int at_peak;                /* event follows the strategy's peak reserved (no request shown) */
  int64_t asked_event;        /* the event --at named, when the strategy failed before it (else -1) */
  char allocator[64], params[600];
  uint64_t cap;               /* 0 = none */
  const char *cap_source;     /* "given", "inferred" or NULL */
  struct cap_inference ci;    /* the OOM's evidence (ci.has_oom) */
  struct workload_info info;  /* what the trace's reader said (the OOM as PyTorch recorded it) */
  /* the request at that event (has_request) */
  int has_request, fits;      /* fits: the strategy's alloc of it succeeded there */
  uint64_t request, rounded, segment, stream;
  /* the memory */
  uint64_t reserved, allocated, requested_live, free_inside, largest_free;
  int has_segments;           /* the strategy listed its segments: the fields below are set */
  uint64_t nsegments, free_pieces, releasable, releasable_segments;
  struct seg_block *blocks;
  size_t nblocks, cap_blocks;
  /* at a snapshot's OOM: what was live in PyTorch's own trace, and where the largest
   * blocks were allocated (explain_frames.c; frames_known: the pass reached the OOM) */
  int frames_known;
  uint64_t live_at_oom, live_with_frames;
  int ntop;
  struct explain_block top[EXPLAIN_TOP_BLOCKS];   /* largest first */
  /* per block, parallel to blocks (explain_blocks.c): the trace's id of an allocated block
   * (a snapshot's address; 0: none), and with explain_opts.block_frames the stack that
   * allocated it (NULL: none recorded) */
  uint64_t *block_id;
  char **block_frames;
  uint64_t blocks_with_frames;
};

/* 0; 2 with err for bad input (no OOM for --at oom, an event past the end or not an
 * alloc, an unknown strategy, an unreadable trace); 1 with err on a device error */
int  explain_run(const struct explain_opts *o, struct explain_state *st, char *err);
void explain_free(struct explain_state *st);
/* the largest blocks live at the snapshot's first OOM and their stacks, into st (quietly
 * nothing for a trace that is not a PyTorch snapshot) */
void explain_frames(const char *trace, int trace_device, struct explain_state *st);

struct livemap;
/* st->block_id from the replay's live map at the moment */
void explain_block_ids(struct explain_state *st, struct livemap *live);
/* st->block_frames: one frames pass over the pickle up to the moment (quietly nothing for
 * a trace that is not a PyTorch snapshot or holds no stacks) */
void explain_block_frames(const char *trace, int trace_device, const struct event_buffer *b, struct explain_state *st);

#endif
