/* event.h - the event model: what every workload (generator or trace reader) emits
 * and what the replay engine consumes. One event is one allocator-visible action. */
#ifndef FB_EVENT_H
#define FB_EVENT_H
#include <stdint.h>

#define FB_ERRLEN 512          /* size of every error-message buffer passed around */

enum op { OP_ALLOC, OP_FREE, OP_EMPTY_CACHE, OP_ITER, OP_POOL_RELEASE };

struct event {
  enum op op;
  uint32_t slot;     /* the replay map's slot of id, where the harness gave the events their
                        slots (livemap.h, event_buffer.slot_table); else 0. Set by no workload */
  uint64_t id;       /* alloc/free: the block's identity (unique among live blocks) */
  uint64_t size;     /* alloc: requested bytes; 0 otherwise */
  uint64_t stream;   /* alloc: the stream the block is used on (0 = default stream);
                        free: EV_FREE_RECORDED or 0 (below) */
  int device;        /* which device's trace this event belongs to (multi-device snapshots) */
  uint32_t pool;     /* the memory pool (below): alloc: the pool that serves it; empty_cache: 0 =
                        PyTorch's emptyCache(), else emptyCache(pool) (only that released pool's
                        blocks); pool_release: the pool whose last graph / MemPool went away */
};

/* Pools (PyTorch's MempoolId_t, c10/cuda/CUDACachingAllocator.cpp PrivatePool): 0 is the
 * general pool; 1, 2, ... are private pools (a CUDA graph's capture pool, a torch.cuda.MemPool),
 * numbered by the workload in order of first appearance. A private pool's blocks serve only
 * allocations tagged with it; OP_POOL_RELEASE is PyTorch's releasePool (use_count down to 0):
 * from then on release_cached_blocks (empty_cache, release-and-retry) may free its
 * segments. A pool lives from its first allocation until its OP_POOL_RELEASE. */
#define EV_POOL_MAX 4096   /* private pools in one trace (readers refuse more) */

/* OP_FREE's stream: the block was also used on other streams (PyTorch's record_stream) and
 * its free waited for them (a snapshot's free_completed came later than its free_requested).
 * The event comes when the memory is reusable, as for any free; a stream-ordered strategy
 * frees such a block as PyTorch's async backend does (DEV_STREAM_RECORDED). */
#define EV_FREE_RECORDED UINT64_MAX

static inline const char *op_name(enum op o) {
  switch (o) {
  case OP_ALLOC: return "alloc";
  case OP_FREE: return "free";
  case OP_EMPTY_CACHE: return "empty_cache";
  case OP_ITER: return "iter";
  case OP_POOL_RELEASE: return "pool_release";
  }
  return "?";
}

#endif
