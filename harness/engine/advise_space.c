/* advise_space.c - the values `advise` tries for each PyTorch knob, read off the trace's
 * request sizes (see advise.h), and the knobs written as a strategy spec. */
#include "advise.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc_conf.h"

#define MIB (1ull << 20)
#define MIN_SPLIT_MB 20          /* PyTorch's smallest max_split_size_mb / max_non_split_rounding_mb */
#define OWN_SEGMENT (10ull << 20) /* kMinLargeAlloc: requests from here get segments of their own */
#define CLUSTER_GAP 1.15         /* neighbouring distinct sizes further apart than this: two clusters */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void add_u64(uint64_t *list, int *n, uint64_t v) {
  for (int i = 0; i < *n; i++) if (list[i] == v) return;
  if (*n < ADVISE_MAX_VALUES) list[(*n)++] = v;
}

static void add_gc(struct advise_space *sp, double t) {
  t = (double)(int)(t * 100 + 0.5) / 100;            /* two decimals, as a user would write it */
  if (t <= 0 || t >= 1) return;
  for (int i = 0; i < sp->ngc; i++) if (sp->gc[i] == t) return;
  if (sp->ngc < ADVISE_MAX_VALUES) sp->gc[sp->ngc++] = t;
}

static void add_roundup(struct advise_space *sp, int boundary, uint64_t below, uint64_t from) {
  if (sp->nroundup >= ADVISE_MAX_VALUES) return;
  uint64_t v[ADVISE_INTERVALS];
  for (int i = 0; i < ADVISE_INTERVALS; i++) v[i] = i < boundary ? below : from;
  for (int j = 0; j < sp->nroundup; j++)
    if (!memcmp(sp->roundup[j], v, sizeof v)) return;
  memcpy(sp->roundup[sp->nroundup++], v, sizeof v);
}

static int interval_of(uint64_t size) {
  int lg = 63 - __builtin_clzll(size | 1);
  int index = lg > 20 ? lg - 20 : 0;
  return index < ADVISE_INTERVALS ? index : ADVISE_INTERVALS - 1;
}

/* the interval where the running sum of w[] first reaches half its total */
static int halfway(const double w[ADVISE_INTERVALS]) {
  double total = 0, run = 0;
  for (int i = 0; i < ADVISE_INTERVALS; i++) total += w[i];
  for (int i = 0; i < ADVISE_INTERVALS; i++) {
    run += w[i];
    if (total > 0 && run >= total / 2) return i;
  }
  return 0;
}

void advise_space_from_sizes(const uint64_t *sizes, size_t n, uint64_t peak_requested, uint64_t budget,
                             struct advise_space *sp) {
  memset(sp, 0, sizeof *sp);
  sp->split_mb[sp->nsplit++] = 0;
  sp->non_split_mb[sp->nnon++] = 0;
  sp->nroundup = 1;                                   /* roundup[0]: all zero, the default */
  sp->ngc = 1;                                        /* gc[0] = 0: off */

  /* the large requests (own segments), sorted */
  uint64_t *big = malloc((n ? n : 1) * sizeof *big);
  size_t nb = 0;
  double bytes[ADVISE_INTERVALS] = {0}, count[ADVISE_INTERVALS] = {0};
  for (size_t i = 0; i < n; i++) {
    if (!sizes[i]) continue;
    if (big && sizes[i] >= OWN_SEGMENT) big[nb++] = sizes[i];
    if (sizes[i] > MIB) {                             /* roundup acts from 1 MiB (kRoundUpPowerOfTwoStart) */
      int k = interval_of(sizes[i]);
      bytes[k] += (double)sizes[i];
      count[k] += 1;
    }
  }
  if (big && nb) {
    qsort(big, nb, sizeof *big, cmp_u64);
    /* max_split_size_mb at the quantiles of the large requests: those at and above it
     * keep their blocks whole */
    static const double q[] = {0.25, 0.5, 0.75, 0.9, 0.99};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
      uint64_t mb = big[(size_t)(q[i] * (double)(nb - 1))] / MIB;
      add_u64(sp->split_mb, &sp->nsplit, mb < MIN_SPLIT_MB ? MIN_SPLIT_MB : mb);
    }
    /* ... and just above each gap between size clusters (the largest gaps first) */
    uint64_t gap_at[ADVISE_MAX_VALUES];
    double gap_ratio[ADVISE_MAX_VALUES];
    int ngaps = 0;
    uint64_t span_mb[ADVISE_MAX_VALUES];
    int nspans = 0;
    uint64_t cluster_lo = big[0];
    for (size_t i = 1; i <= nb; i++) {
      if (i < nb && big[i] == big[i - 1]) continue;
      size_t prev = i - 1;
      double ratio = i < nb ? (double)big[i] / (double)big[prev] : 0;
      if (i == nb || ratio > CLUSTER_GAP) {
        /* a cluster [cluster_lo, big[prev]] ends: its spread, for max_non_split_rounding_mb */
        uint64_t spread = (big[prev] - cluster_lo + MIB - 1) / MIB + 1;
        if (spread > MIN_SPLIT_MB) add_u64(span_mb, &nspans, spread);
        if (i < nb) {
          uint64_t mb = big[prev] / MIB + 1;          /* the lower cluster stays below, splittable */
          if (mb < MIN_SPLIT_MB) mb = MIN_SPLIT_MB;
          if (mb * MIB > big[prev] && mb * MIB <= big[i]) {
            int slot = ngaps < ADVISE_MAX_VALUES ? ngaps++ : -1;
            if (slot < 0) {                           /* keep the largest gaps */
              int min = 0;
              for (int g = 1; g < ADVISE_MAX_VALUES; g++) if (gap_ratio[g] < gap_ratio[min]) min = g;
              if (gap_ratio[min] < ratio) slot = min;
            }
            if (slot >= 0) { gap_at[slot] = mb; gap_ratio[slot] = ratio; }
          }
          cluster_lo = big[i];
        }
      }
    }
    for (int taken = 0; taken < 6 && ngaps; taken++) {
      int best = 0;
      for (int g = 1; g < ngaps; g++) if (gap_ratio[g] > gap_ratio[best]) best = g;
      add_u64(sp->split_mb, &sp->nsplit, gap_at[best]);
      gap_at[best] = gap_at[--ngaps];
      gap_ratio[best] = gap_ratio[ngaps];
    }
    /* max_non_split_rounding_mb: the spread of the clusters (an oversize request may take
     * a cached block up to this much larger), the widest first */
    qsort(span_mb, (size_t)nspans, sizeof *span_mb, cmp_u64);
    for (int i = nspans - 1, taken = 0; i >= 0 && taken < 5; i--, taken++) add_u64(sp->non_split_mb, &sp->nnon, span_mb[i]);
    if (nspans > 5) add_u64(sp->non_split_mb, &sp->nnon, span_mb[nspans / 2]);
  }
  free(big);

  /* roundup_power2_divisions: uniform, and two levels split where the requests' bytes
   * or counts are halved */
  static const uint64_t uniform[] = {2, 4, 8, 16};
  for (size_t i = 0; i < sizeof uniform / sizeof uniform[0]; i++) add_roundup(sp, 0, uniform[i], uniform[i]);
  int cuts[2] = {halfway(bytes), halfway(count)};
  static const uint64_t two[][2] = {{1, 4}, {1, 8}, {4, 1}, {8, 1}, {2, 8}};
  for (int c = 0; c < 2; c++) {
    int b = cuts[c] ? cuts[c] : 1;                    /* at least the 1..2 MiB interval below */
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) add_roundup(sp, b, two[i][0], two[i][1]);
  }

  /* per interval: those with a good share of the requests, the largest share first */
  double total_b = 0, total_c = 0, share[ADVISE_INTERVALS];
  for (int i = 0; i < ADVISE_INTERVALS; i++) { total_b += bytes[i]; total_c += count[i]; }
  for (int i = 0; i < ADVISE_INTERVALS; i++) {
    double sb = total_b > 0 ? bytes[i] / total_b : 0, sc = total_c > 0 ? count[i] / total_c : 0;
    share[i] = sb > sc ? sb : sc;
  }
  while (sp->ninterval < 6) {
    int best = -1;
    for (int i = 0; i < ADVISE_INTERVALS; i++)
      if (share[i] >= 0.05 && (best < 0 || share[i] > share[best])) best = i;
    if (best < 0) break;
    sp->interval[sp->ninterval++] = best;
    share[best] = 0;
  }

  /* garbage_collection_threshold: with a budget, between the share of it the program
   * itself needs at its peak and 1, and PyTorch's documented range */
  if (budget) {
    double r = (double)peak_requested / (double)budget;
    for (int i = 1; i <= 3; i++) add_gc(sp, r + (1 - r) * i / 4);
    static const double usual[] = {0.6, 0.7, 0.8, 0.9, 0.95};
    for (size_t i = 0; i < sizeof usual / sizeof usual[0]; i++) if (usual[i] > r) add_gc(sp, usual[i]);
  }
}

static int roundup_is_default(const uint64_t v[ADVISE_INTERVALS]) {
  for (int i = 0; i < ADVISE_INTERVALS; i++) if (v[i] > 1) return 0;
  return 1;
}

int advise_knobs_count(const struct advise_knobs *k) {
  return (k->expandable != 0) + (k->max_split_mb != 0) + (k->non_split_mb != 0 && k->non_split_mb != MIN_SPLIT_MB) +
         !roundup_is_default(k->roundup) + (k->gc > 0);
}

void advise_knobs_spec(const struct advise_knobs *k, char *out, size_t n) {
  size_t len = (size_t)snprintf(out, n, "%s", k->expandable ? "expandable" : "caching");
  char sep = ':';
#define ADD(...) do {                                                        \
    if (len < n) len += (size_t)snprintf(out + len, n - len, "%c", sep);     \
    if (len < n) len += (size_t)snprintf(out + len, n - len, __VA_ARGS__);   \
    sep = ',';                                                               \
  } while (0)
  if (k->max_split_mb) ADD("max_split_size_mb=%llu", (unsigned long long)k->max_split_mb);
  if (k->non_split_mb && k->non_split_mb != MIN_SPLIT_MB) ADD("max_non_split_rounding_mb=%llu", (unsigned long long)k->non_split_mb);
  if (!roundup_is_default(k->roundup)) {
    char list[300];
    alloc_conf_roundup(k->roundup, list, sizeof list);
    ADD("roundup_power2_divisions=%s", list);
  }
  if (k->gc > 0) ADD("garbage_collection_threshold=%g", k->gc);
#undef ADD
}
