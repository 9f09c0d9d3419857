/* caching_bench.c - host cost of the caching strategy per alloc or free call: a random
 * pattern (sizes log-uniform 512 B .. 64 MiB, about 1000 blocks live, 1 M events by
 * default) replayed straight through caching_allocator's ops on a sim device without
 * the cost model. The events are generated before the clock starts, so only the
 * strategy's calls (and the sim's bookkeeping on cudaMalloc/cudaFree) are timed.
 * Entry point for `make perf`: caching_bench_main(argc, argv). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "allocator.h"

extern const struct allocator_ops caching_allocator;

struct bench_event { uint32_t slot; uint64_t size; };   /* size 0 = free the slot */

static uint64_t xorshift(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13; x ^= x >> 7; x ^= x << 17;
  return *s = x;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The event stream: each event picks a random one of 2*live slots and frees it when it
 * holds a block, else allocates into it; so about `live` blocks are live. */
static void make_events(struct bench_event *ev, uint64_t n, uint32_t slots, uint64_t seed) {
  unsigned char *used = calloc(slots, 1);
  uint64_t s = seed | 1;
  const double lo = log(512.0), hi = log(64.0 * 1024 * 1024);
  for (uint64_t i = 0; i < n; i++) {
    uint32_t slot = (uint32_t)(xorshift(&s) % slots);
    ev[i].slot = slot;
    if (used[slot]) {
      ev[i].size = 0;
      used[slot] = 0;
    } else {
      double u = (double)(xorshift(&s) >> 11) * (1.0 / 9007199254740992.0);
      ev[i].size = (uint64_t)exp(lo + u * (hi - lo));
      used[slot] = 1;
    }
  }
  free(used);
}

static int run_once(const struct bench_event *ev, uint64_t n, uint32_t slots, const char *params,
                    double *ns_per_op, uint64_t *peak_reserved, uint64_t *device_allocs) {
  char err[FB_ERRLEN], name[32];
  struct device d;
  if (device_open(&d, &(struct device_config){.kind = "sim", .noop = 1}, err)) {
    fprintf(stderr, "caching_bench: %s\n", err);
    return -1;
  }
  struct params p;
  char spec[300];
  snprintf(spec, sizeof spec, "caching%s%s", params[0] ? ":" : "", params);
  void *a = NULL;
  if (params_parse_spec(spec, name, sizeof name, &p, err) ||
      params_check(&p, caching_allocator.params, "caching", err) ||
      caching_allocator.create(&a, &d, &p, err)) {
    fprintf(stderr, "caching_bench: %s\n", err);
    device_close(&d);
    return -1;
  }
  struct block *live = calloc(slots, sizeof *live);
  uint64_t calls = 0;
  int rc = 0;
  double t0 = now_ns();
  for (uint64_t i = 0; i < n; i++) {
    struct block *b = &live[ev[i].slot];
    if (ev[i].size) {
      if (caching_allocator.alloc(a, ev[i].size, 0, b)) { rc = -1; break; }
    } else {
      caching_allocator.free(a, b);
    }
    calls++;
  }
  double t1 = now_ns();
  if (rc) fprintf(stderr, "caching_bench: allocation failed at event %llu\n", (unsigned long long)calls);
  *ns_per_op = (t1 - t0) / (double)(calls ? calls : 1);
  *peak_reserved = d.peak_reserved;
  *device_allocs = d.c.device_allocs;
  caching_allocator.destroy(a);
  device_close(&d);
  free(live);
  return rc;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

int caching_bench_main(int argc, char **argv) {
  uint64_t n = 1000000, live = 1000, seed = 42;
  int reps = 5;
  const char *params = "";
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "--events=", 9)) n = strtoull(argv[i] + 9, NULL, 10);
    else if (!strncmp(argv[i], "--live=", 7)) live = strtoull(argv[i] + 7, NULL, 10);
    else if (!strncmp(argv[i], "--seed=", 7)) seed = strtoull(argv[i] + 7, NULL, 10);
    else if (!strncmp(argv[i], "--reps=", 7)) reps = atoi(argv[i] + 7);
    else if (!strncmp(argv[i], "--params=", 9)) params = argv[i] + 9;
    else {
      fprintf(stderr, "usage: caching_bench [--events=N] [--live=N] [--seed=N] [--reps=N] [--params=k=v,...]\n");
      return 2;
    }
  }
  if (n == 0 || live == 0 || reps < 1 || reps > 100) {
    fprintf(stderr, "caching_bench: events, live and reps (1..100) must be positive\n");
    return 2;
  }
  uint32_t slots = (uint32_t)(2 * live);
  struct bench_event *ev = malloc(n * sizeof *ev);
  if (!ev) { fprintf(stderr, "caching_bench: out of host memory\n"); return 1; }
  make_events(ev, n, slots, seed);
  double ns[100];
  uint64_t peak = 0, dallocs = 0;
  for (int r = 0; r < reps; r++)
    if (run_once(ev, n, slots, params, &ns[r], &peak, &dallocs)) { free(ev); return 1; }
  qsort(ns, (size_t)reps, sizeof ns[0], cmp_double);
  printf("caching_bench: %llu events (sizes log-uniform 512 B..64 MiB, ~%llu live, seed %llu%s%s), sim without cost model\n",
         (unsigned long long)n, (unsigned long long)live, (unsigned long long)seed, params[0] ? ", " : "", params);
  printf("caching_bench: ns per alloc/free call: median %.1f, best %.1f over %d runs; peak reserved %.2f GiB, %llu cudaMallocs\n",
         ns[reps / 2], ns[0], reps, (double)peak / (1024.0 * 1024 * 1024), (unsigned long long)dallocs);
  free(ev);
  return 0;
}
