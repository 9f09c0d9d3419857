/* allocator.h - the allocator (strategy) interface. A strategy is pure policy: it gets
 * memory only through the device layer (device.h) and never measures itself; the
 * harness measures. One instance per device per run. */
#ifndef FB_ALLOCATOR_H
#define FB_ALLOCATOR_H
#include <stdint.h>
#include "device.h"
#include "params.h"
#include "event.h"

struct block {
  uint64_t addr;
  uint64_t size;     /* after the strategy's rounding */
  uint64_t stream;
  void *handle;      /* the strategy's own per-block pointer */
};

struct workload;     /* for offline planners (oracle) */

/* One block of a segment, for `fragbench explain` (the segments op). States as PyTorch's
 * memory_viz names them: a free block of a segment that is split is inactive (only a
 * wholly free segment goes back to the device on release-and-retry). */
enum seg_state { SEG_ALLOCATED, SEG_FREE, SEG_INACTIVE_SPLIT, SEG_UNMAPPED };
struct seg_block {
  uint64_t seg_addr, seg_size;   /* its segment (expandable: the virtual range) */
  uint64_t addr, size;
  uint64_t requested;            /* allocated blocks: what the request asked for */
  uint64_t stream;
  enum seg_state state;
  int small_pool;
  uint32_t pool;                 /* its memory pool (event.h): 0 general, else a private pool */
  int pool_live;                 /* a private pool not yet released: release-and-retry keeps it */
};

/* what an allocator tells the harness about itself after a run */
struct alloc_stats {
  uint64_t cache_flushes;   /* release-cache-and-retry passes */
  uint64_t held;            /* bytes the strategy believes it holds (validator compares with device) */
};

enum alloc_flags {
  ALLOC_NEEDS_POOL = 1,     /* needs the device's stream-ordered pool (cuda only) */
  ALLOC_OFFLINE = 2,        /* plans over the whole workload first (oracle) */
  ALLOC_STREAM_ORDERED = 4, /* placement follows the GPU's progress (a real stream-ordered pool):
                               on cuda the replay writes its blocks in stream order by default */
  ALLOC_CAP_COMPARED = 8,   /* reads the cap only by comparing a demand of its own with it
                               (dev_cap_breaks), whatever its parameters: a run is the same under
                               any cap those comparisons come out the same under (as for a
                               cap-blind one, which leaves every comparison to the device) */
  ALLOC_CAP_READ_IN_USE = 16, /* reads the cap itself only against the bytes in use with the
                               request (async, as PyTorch's backend does), which cannot break
                               under a cap at or above the run's peak requested; above it the
                               strategy learns of the cap only from refusals (the device's, or
                               on a GPU the pool's maxSize), so under a cap its uncapped run
                               never reached it makes that run (uncapped_rows.h) */
};

struct allocator_ops {
  const char *name;
  const char *help;         /* one line */
  const char *anchor;       /* the source it follows */
  const char *validated;    /* optional: what the real allocator it was checked against
                             * gave, and how closely (tests/validate, `make validate`); NULL = not validated */
  const struct param_spec *params;   /* NULL-key terminated */
  unsigned flags;
  uint64_t alignment;       /* every block address is a multiple of this */
  /* on a device without the real thing (sim): the relative +/- error of peak_reserved the
   * strategy's model carries (0 = the strategy is the algorithm itself, exact); the results
   * CSV's model_err column. async's is fit to the recorded jobs it was built from, not
   * measured on held-out ones (async_model.h, docs/evidence.md) */
  double model_err;
  /* optional (sim): the parameters of the model's other bound ("recycle=1"): the harness
   * replays once more with them and widens the row's model_err to cover both (model_bound.h) */
  const char *model_bound;
  /* optional: 1 where, with these parameters, the strategy learns of the cap only from a
   * refused reservation (it never reads the device's cap): a run under a cap it never meets
   * is then the uncapped run, call for call (mincap confirms at a cap by the uncapped row;
   * test_cap_blind.c replays each at its own uncapped peak). NULL: it reads the cap. */
  int  (*cap_blind)(const struct params *p);
  /* optional: the fewest bytes of device memory a block for a request of size bytes takes
   * under this strategy's parameters (its rounding), whatever it decides - blocks lie
   * apart in what is reserved, so a cap under the most the live blocks take at least at
   * once is one every run of it runs out under (mincap answers such probes without a
   * replay). NULL: size itself. */
  uint64_t (*least_block)(void *a, uint64_t size);
  int  (*create)(void **a, struct device *d, const struct params *p, char *err);
  /* 0, FB_OOM after the strategy's own recovery, or <0 on a device error */
  int  (*alloc)(void *a, uint64_t size, uint64_t stream, struct block *out);
  void (*free)(void *a, struct block *b);
  void (*empty_cache)(void *a);
  void (*query)(void *a, uint64_t *largest_free, uint64_t *free_inside_reserved);
  void (*stats)(void *a, struct alloc_stats *st);
  void (*destroy)(void *a);
  /* optional: offline planning pass (ALLOC_OFFLINE); the harness rewinds afterwards */
  int  (*plan)(void *a, struct workload *w, char *err);
  /* optional: the work plan() does that depends on the workload and parameters alone,
   * done now and kept in this process for the row that needs it (w read to its end): the
   * engine runs it ahead, on another thread, while a GPU replays earlier rows (plan_ahead.c).
   * 0, or -1 with err */
  int  (*prepare)(const struct params *p, struct workload *w, char *err);
  /* optional: internal consistency check for --validate; 0 ok, -1 with err */
  int  (*check)(void *a, char *err);
  /* optional: every segment's blocks in address order, fn once per block (explain) */
  void (*segments)(void *a, void (*fn)(void *ctx, const struct seg_block *b), void *ctx);
  /* optional: the strategy's pool that serves a request of this size ("small", "large"),
   * for run --breakdown's split of reserved memory; NULL = one pool per stream */
  const char *(*pool_of)(void *a, uint64_t size);
  /* optional: memory pools (event.h: a CUDA graph's private pool, a MemPool). A strategy
   * that has these serves an allocation of pool p != 0 only from p's own blocks, keeps p's
   * segments through empty_cache and release-and-retry until pool_release(p), and frees
   * them as PyTorch does after it; pool_empty(p) is emptyCache(p). A strategy without
   * them replays pool allocations as general ones, and the run's status says so. */
  int  (*alloc_pool)(void *a, uint64_t size, uint64_t stream, uint32_t pool, struct block *out);
  void (*pool_release)(void *a, uint32_t pool);
  void (*pool_empty)(void *a, uint32_t pool);
};

/* An allocation of pool `pool` (event.h): the strategy's alloc_pool where it has one and
 * the pool is private, else its alloc (a pool-blind strategy: the general pool). */
static inline int alloc_in_pool(const struct allocator_ops *o, void *a, uint64_t size, uint64_t stream, uint32_t pool,
                                struct block *out) {
  return pool && o->alloc_pool ? o->alloc_pool(a, size, stream, pool, out) : o->alloc(a, size, stream, out);
}

/* OP_EMPTY_CACHE and OP_POOL_RELEASE: empty_cache (pool 0), emptyCache(pool) and releasePool
 * where the strategy has pools; a pool-blind strategy keeps no pool apart: nothing */
static inline void pool_event(const struct allocator_ops *o, void *a, const struct event *ev) {
  if (ev->op == OP_EMPTY_CACHE && !ev->pool) o->empty_cache(a);
  else if (ev->op == OP_EMPTY_CACHE && o->pool_empty) o->pool_empty(a, ev->pool);
  else if (ev->op == OP_POOL_RELEASE && o->pool_release) o->pool_release(a, ev->pool);
}

/* cap_blind for a strategy that never reads the cap, whatever its parameters */
int alloc_cap_blind_always(const struct params *p);

/* registry (allocators/registry.c) */
extern const struct allocator_ops *const allocator_table[];
const struct allocator_ops *allocator_find(const char *name);

#endif
