/* synth.h - what every synthetic generator is built on: an event queue that one
 * iteration (or phase) of events is generated into and handed out one by one, and the
 * pull-based driver (next/rewind/close) around a generator's fill() step.
 *
 * Memory is bounded by one iteration's events (the queue is reused, growing only when an
 * iteration is longer than any before) plus the generator's own live-block bookkeeping,
 * never by the number of iterations. Block ids come from a counter that restarts at 1 on
 * rewind: never reused, so unique among live blocks, and identical run to run. */
#ifndef FB_SYNTH_H
#define FB_SYNTH_H
#include <stddef.h>
#include <stdint.h>
#include "workload.h"

struct evq {
  struct event *ev;
  size_t n, cap, pos;      /* events queued, capacity, next to hand out */
  uint64_t next_id;
  int oom;                 /* host allocation failed while queueing */
};

uint64_t evq_alloc(struct evq *q, uint64_t size);               /* 0 when size is 0: nothing queued */
void evq_free(struct evq *q, uint64_t id);                      /* id 0: nothing */
void evq_mark(struct evq *q, enum op op);                       /* OP_ITER, OP_EMPTY_CACHE */
/* free *id (if set) and clear it */
static inline void evq_release(struct evq *q, uint64_t *id) { evq_free(q, *id); *id = 0; }

/* A growable list of live block ids (kept tensors, cast caches, buckets). */
struct idlist { uint64_t *id; size_t n, cap; };
int idlist_push(struct idlist *l, uint64_t id);                 /* id 0: nothing */
void idlist_free_all(struct idlist *l, struct evq *q);          /* frees every block (in order), empties */
void idlist_destroy(struct idlist *l);

/* The driver. A generator's state struct starts with `struct synth`. */
struct synth {
  struct evq q;
  int done;                                    /* fill() queued the last events */
  int (*fill)(struct synth *s, char *err);     /* queue the next chunk; set done after the last */
  void (*reset)(struct synth *s);              /* back to the state right after open */
  void (*destroy)(struct synth *s);            /* free the generator's own host memory */
};

/* workload_ops members shared by all generators */
int synth_next(void *st, struct event *ev, char *err);
int synth_span(void *st, const struct event **ev, int max, char *err);
int synth_rewind(void *st, char *err);
void synth_close(void *st);

/* defines `const struct workload_ops NAME_workload` for a generator built on synth */
#define SYNTH_WORKLOAD(NAME, HELP, PARAMS, OPEN)                                                     \
  const struct workload_ops NAME##_workload = {.name = #NAME, .help = HELP, .params = PARAMS, .open = OPEN, \
                                               .next = synth_next, .span = synth_span, .rewind = synth_rewind, .close = synth_close}

#endif
