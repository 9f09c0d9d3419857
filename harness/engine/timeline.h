/* timeline.h - the --timeline samples of one replay: the levels (requested, allocated,
 * reserved) and the highest requested/reserved since the previous sample. A workload
 * with ITER events gets one sample per iteration; one without (a snapshot, an RMM log)
 * gets samples spread over the whole run: every event at first, and each time 1024
 * samples are held, every second one merged into its successor (its window's highs
 * kept), so a run of any length ends with 512..1024 samples and a final one at its last
 * event. Rows: LABEL,event,iter,requested,allocated,reserved,max_requested,max_reserved,
 * params, where LABEL is [source/]allocator as the results CSV names it. */
#ifndef FB_TIMELINE_H
#define FB_TIMELINE_H
#include <stdint.h>
#include <stdio.h>

#define TIMELINE_HEADER "allocator,event,iter,requested,allocated,reserved,max_requested,max_reserved,params\n"
#define TIMELINE_MAX_SAMPLES 1024

struct tl_sample { uint64_t event, iter, requested, allocated, reserved, max_requested, max_reserved; };

struct timeline {
  FILE *f;
  const char *source;               /* prefix of the label ("" or NULL: none) */
  const char *allocator, *params;   /* the strategy as the results row names it */
  int per_iter;                     /* an ITER was seen: one sample per iteration */
  uint64_t every;                   /* event sampling: a sample when event % every == 0 (a power of two) */
  uint64_t win_requested, win_reserved;
  struct tl_sample *held;           /* event samples not yet written */
  size_t nheld;
};

void timeline_init(struct timeline *t, FILE *f, const char *source);
/* the strategy's name and parameters, once resolved (before the first sample) */
void timeline_name(struct timeline *t, const char *allocator, const char *params);
/* after an allocation: the window's highs */
static inline void timeline_track(struct timeline *t, uint64_t requested, uint64_t reserved) {
  if (requested > t->win_requested) t->win_requested = requested;
  if (reserved > t->win_reserved) t->win_reserved = reserved;
}
/* after each event (events = how many were replayed): a sample when one is due */
void timeline_event(struct timeline *t, uint64_t events, uint64_t requested, uint64_t allocated, uint64_t reserved);
/* at an ITER event (iter = iterations before it) */
void timeline_iter(struct timeline *t, uint64_t events, uint64_t iter, uint64_t requested, uint64_t allocated, uint64_t reserved);
/* at the end of the replay: the last sample (event sampling) and everything held written */
void timeline_finish(struct timeline *t, uint64_t events, uint64_t requested, uint64_t allocated, uint64_t reserved);
void timeline_release(struct timeline *t);

#endif
