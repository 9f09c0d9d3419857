/* workload_stream.h - what the generator tests share: one pass over a workload's
 * events checked (ids, frees, live bytes at each ITER, everything freed by the end), the
 * contract every generator keeps, and the figures the mechanism tests read. Live
 * requested bytes are computed here from the events, independently of the harness. */
#ifndef FB_TEST_WORKLOAD_STREAM_H
#define FB_TEST_WORKLOAD_STREAM_H
#include <stddef.h>
#include <stdint.h>
#include "workload.h"

/* ---- a live-block map: id -> size (open addressing, backward-shift deletion) ---- */
struct live_map { uint64_t *key, *val; unsigned char *used; size_t cap, n; };
int map_find(const struct live_map *m, uint64_t id, size_t *at);   /* 1 found (slot in *at) */
int map_put(struct live_map *m, uint64_t id, uint64_t size);       /* 0, or -1 out of memory */
void map_erase(struct live_map *m, size_t slot);
void map_free(struct live_map *m);

/* ---- one pass over a workload's events, checked ---- */
#define MAX_ITERS 4096
struct stream {
  uint64_t hash, events, allocs, frees, iters, empty_caches;
  uint64_t live, peak;
  uint64_t iter_live[MAX_ITERS];      /* live requested bytes at each ITER */
  uint64_t iter_alloc[MAX_ITERS];     /* bytes allocated during each iteration */
  uint64_t iter_peak[MAX_ITERS];      /* peak live during each iteration */
  double slope;                       /* least squares over ITER k >= 2 (the harness's definition) */
  char fail[FB_ERRLEN];
};

/* reads the open workload to its end; 0 ok, -1 with s->fail set */
int drain(struct workload *w, struct stream *s);
int open_spec(struct workload *w, const char *spec, int rank, int world, uint64_t seed, char *err);
/* opens spec and drains it into s (heap: struct stream is large); NULL with err set */
struct stream *run_spec(const char *spec, int rank, int world, uint64_t seed, char *err);
/* deterministic, rewindable, frees match, >= 3 ITERs, the seed's effect as `random` says,
 * unknown keys rejected (failures reported through test_fail) */
void check_contract(const char *spec, int random);
/* peak and live-at-ITER 1 of one spec (rank/world given) */
int figures(const char *spec, int rank, int world, uint64_t *peak, uint64_t *iter_live1, char *err);
/* does the stream allocate a block of exactly `size` in iteration 1? how many */
int allocates_size(const char *spec, uint64_t size, uint64_t *count, char *err);

#endif
