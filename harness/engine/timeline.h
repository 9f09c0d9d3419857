/* timeline.h - the --timeline samples of one replay: the levels (requested, allocated,
 * reserved) and the highest requested/reserved since the previous sample.
 *   A run with at least TIMELINE_ITER_RUN iterations (ITER events) gets one sample per
 *   iteration, at its end: a leak shows as a rising line.
 *   Any other run (a snapshot, an RMM log, a few long steps) gets samples spread over
 *   the whole run: every event at first, and each time TIMELINE_MAX_SAMPLES are held,
 *   every second one merged into its successor (its window's highs kept), so a run of
 *   any length ends with half to all of TIMELINE_MAX_SAMPLES, and one at its last event.
 * Rows: LABEL,event,iter,requested,allocated,reserved,max_requested,max_reserved,params;
 * LABEL is [source/]allocator and params its parameters, as the results CSV names the
 * strategy (`recorded` resolved). iter = iterations completed before the sample. */
#ifndef FB_TIMELINE_H
#define FB_TIMELINE_H
#include <stdint.h>
#include <stdio.h>

#define TIMELINE_HEADER "allocator,event,iter,requested,allocated,reserved,max_requested,max_reserved,params\n"
#define TIMELINE_MAX_SAMPLES 1024
#define TIMELINE_ITER_RUN 64

struct tl_sample { uint64_t event, iter, requested, allocated, reserved, max_requested, max_reserved; };
struct tl_window { uint64_t requested, reserved; };   /* highest since the window's last sample */

struct timeline {
  FILE *f;
  const char *source;               /* prefix of the label ("" or NULL: none) */
  const char *allocator, *params;   /* the strategy as the results row names it */
  int per_iter;                     /* TIMELINE_ITER_RUN iterations seen: one sample per iteration */
  uint64_t every;                   /* spread sampling: a sample when event % every == 0 (a power of two) */
  struct tl_window spread, iter;    /* the two kinds of samples keep their own windows */
  struct tl_sample *held;           /* spread samples, written at the end unless per_iter */
  size_t nheld;
  struct tl_sample iters[TIMELINE_ITER_RUN];   /* iteration samples until per_iter is decided */
  size_t niters;
};

void timeline_init(struct timeline *t, FILE *f, const char *source);
/* the strategy's name and parameters, once resolved (before the first sample) */
void timeline_name(struct timeline *t, const char *allocator, const char *params);
/* after an allocation: the windows' highs */
static inline void timeline_track(struct timeline *t, uint64_t requested, uint64_t reserved) {
  if (requested > t->spread.requested) t->spread.requested = requested;
  if (reserved > t->spread.reserved) t->spread.reserved = reserved;
  if (requested > t->iter.requested) t->iter.requested = requested;
  if (reserved > t->iter.reserved) t->iter.reserved = reserved;
}
/* after each event (events = how many were replayed, iters = iterations completed) */
void timeline_event(struct timeline *t, uint64_t events, uint64_t iters, uint64_t requested, uint64_t allocated, uint64_t reserved);
/* at an ITER event (iter = iterations before it) */
void timeline_iter(struct timeline *t, uint64_t events, uint64_t iter, uint64_t requested, uint64_t allocated, uint64_t reserved);
/* at the end of the replay: the spread samples and a last one written (unless per_iter) */
void timeline_finish(struct timeline *t, uint64_t events, uint64_t iters, uint64_t requested, uint64_t allocated, uint64_t reserved);
void timeline_release(struct timeline *t);

#endif
