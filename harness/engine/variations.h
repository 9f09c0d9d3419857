/* variations.h - what a rerun of the job might do, built from one recorded trace: its
 * iterations found (the trace's ITER events, else the points where every short-lived
 * block is freed: see variations.c), the middle ones replayed in other orders
 * (permutations), resampled with replacement (bootstrap: one batch shape drawn twice,
 * another not at all, as another data order draws them), or resampled with their
 * shape-dependent tensors rescaled within the range the recorded iterations span (shapes
 * between those recorded), between the recorded warm-up
 * (model and optimizer state built) and the recorded end. Variation 0 is the recorded
 * sequence itself. Deterministic given the seed. `advise` replays every candidate setting
 * on every variation and ranks by the worst. */
#ifndef FB_VARIATIONS_H
#define FB_VARIATIONS_H
#include <stddef.h>
#include <stdint.h>
#include "replay.h"

#define VARIATIONS_DEFAULT 20
#define VARIATIONS_MAX 64        /* advise keeps a bit per variation */

struct variation_set {
  int n;                         /* variations built (1: the recorded sequence only) */
  struct event_buffer *v;        /* n buffers; v[0] is the recorded one (not owned) */
  uint64_t *peak;                /* n: each one's peak requested (at most 1% above peak[0]: see variations.c) */
  int redrawn;                   /* draws thrown away for asking more than the recorded run */
  int stand_ins;                 /* variations for which every draw did: the recorded order stands in */
  const unsigned char *excluded; /* NULL, or n flags: variations no setting can fit (their own peak requested is
                                    above the limit): left out of every replay and count (set by advise) */
  /* the iteration structure found */
  int iterations;                /* iterations found (segments between boundaries); 0 = none */
  int head_iters, tail_iters;    /* kept in place at the start (warm-up) and the end */
  size_t head_end, tail_start;   /* event indices: [0, head_end) and [tail_start, n) are fixed */
  int period;                    /* boundary candidates merged per iteration (1 = none merged) */
  char how[160];                 /* "ITER events", "short-lived blocks all freed", or why none */
};

/* Iteration boundaries of b (event indices where an iteration starts), ascending, into
 * *starts (malloc'd; free it). Returns how many; 0 when no repeating structure is found.
 * how says which way. */
int variations_iterations(const struct event_buffer *b, size_t **starts, int *period, char *how, size_t how_n);

/* n variations of b (n >= 1; v[0] = b itself), seeded. 0, or -1 with err (host memory). */
int variations_build(const struct event_buffer *b, int n, uint64_t seed, struct variation_set *vs, char *err);
/* The most requested bytes live at once in b; UINT64_MAX when host memory runs out. */
uint64_t variations_peak_requested(const struct event_buffer *b);
void variations_free(struct variation_set *vs);

#endif
