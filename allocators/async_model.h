/* async_model.h - a model of the CUDA driver's stream-ordered pool (cudaMallocAsync), for
 * the `async` strategy on devices without one (sim). What it follows was measured on an
 * H100 with the probes in tests/probes (docs/async-pool.md):
 *  - one address range per pool that grows upward; physical memory is mapped in whole
 *    chunks of `granule` (32 MiB) as blocks reach them: reserved = mapped chunks;
 *  - every request is rounded up to 512 bytes and packed against its neighbours (blocks
 *    cross chunk boundaries freely);
 *  - adjacent free ranges coalesce; a request takes the lowest-addressed range of the
 *    first non-empty size class at or above the request rounded up to its class ("good
 *    fit": classes are powers of two split in `subclasses` steps), or the unused end of
 *    the last chunk when that class is lower, else it grows at the top; with `own_class`
 *    (off by default), when no such range is free, the lowest-addressed range of the
 *    request's own class that holds it comes before the chunk tail and growing (the driver
 *    fits 13 MiB into a 13 MiB hole, but the option puts the model further from PyTorch on
 *    the jobs it is built from);
 *  - a range freed on one stream is reused by that stream at once and by other streams
 *    only after a synchronization (the GPU is assumed busy, as in a real program); a
 *    block other streams used too (record_stream, DEV_STREAM_RECORDED in the free's
 *    stream) is freed as PyTorch's backend frees it, on a stream nothing allocates on,
 *    and is reusable by every stream from the free (the trace's free_completed);
 *  - reserved shrinks only at a synchronization (trim, empty_cache, or with a finite
 *    release threshold at every free): wholly free chunks are unmapped, highest first.
 * Memory comes from the device layer (one VA reservation, a physical page of `granule`
 * bytes per chunk, mapped), so reserved is counted by the device like every strategy's. */
#ifndef FB_ASYNC_MODEL_H
#define FB_ASYNC_MODEL_H
#include <stdint.h>
#include "device.h"

#define AMODEL_ALIGN 512ull                 /* request rounding and address alignment */
#define AMODEL_GRANULE_DEFAULT (32ull << 20) /* chunk of physical memory */
#define AMODEL_SUBCLASSES_DEFAULT 4u
/* the model's residual error: how far PyTorch's backend:cudaMallocAsync landed outside the
 * model's two bounds (recycle off and on), relative to the nearer one, at most, over the 17
 * jobs of tests/data/recorded/async and async2 (gpt_deep_accum4 +10.0%, ddp +9.0%): fit to
 * those jobs, the model's build data, so it is not a held-out error (docs/evidence.md;
 * docs/async-pool.md, "Recorded jobs"). A sim row's model_err is this where both bounds
 * agree and wider where they do not (harness/engine/model_bound.c) */
#define AMODEL_ERR 0.10

struct amodel;

struct amodel_config {
  uint64_t granule;          /* a multiple of DEV_PAGE */
  unsigned subclasses;       /* 1, 2, 4, 8 or 16 */
  uint64_t release_threshold; /* UINT64_MAX: keep all (PyTorch's setting) */
  int own_class;             /* no range of a class >= the needed one: a range of the request's
                                own class that holds it, before the chunk tail or growing */
  int recycle;               /* a chunk to map takes the physical page of a wholly free mapped
                                chunk first (the driver does once the GPU has passed the frees,
                                probe async_recycle; off by default: the GPU-busy bound) */
};

/* 0, or -1 with err set */
int amodel_create(struct amodel **out, struct device *d, const struct amodel_config *cfg, char *err);
/* 0, FB_OOM, or <0 on a device error */
int amodel_alloc(struct amodel *m, uint64_t size, uint64_t stream, uint64_t *addr);
void amodel_free(struct amodel *m, uint64_t addr, uint64_t size, uint64_t stream);
/* a synchronization, then wholly free chunks released until reserved <= keep */
void amodel_trim(struct amodel *m, uint64_t keep);
void amodel_query(const struct amodel *m, uint64_t *largest_free, uint64_t *free_inside);
uint64_t amodel_reserved(const struct amodel *m);
/* --validate: free ranges sorted, disjoint, coalesced, indexed in their class; 0 or -1 */
int amodel_check(const struct amodel *m, char *err);
void amodel_destroy(struct amodel *m);

/* the size class of a free range of len bytes, and the first class whose every range can
 * hold a request of sz bytes (both exposed for the tests) */
unsigned amodel_class_of(uint64_t len, unsigned subclasses);
unsigned amodel_class_needed(uint64_t sz, unsigned subclasses);

#endif
