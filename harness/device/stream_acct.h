/* stream_acct.h - reserved memory split by stream, counted by the device layer (run
 * --breakdown): each cudaMalloc / cuMemCreate is charged to the stream of the allocation
 * call that made it (the harness says which before each call; the strategy does nothing),
 * and given back when that memory is freed, whichever call frees it; where the strategy
 * names its pools (allocator_ops.pool_of: small/large), by stream and pool. Kept: each stream's
 * bytes now, its own peak, and the split at the moment the device's reserved peaked
 * (those sum to peak_reserved). The async pool's memory is not split (the driver's). */
#ifndef FB_STREAM_ACCT_H
#define FB_STREAM_ACCT_H
#include <stdint.h>

#define ACCT_STREAMS 32   /* more (stream, pool) pairs than this share the last slot */

struct acct_entry { uint64_t key; uint32_t slot; uint32_t used; uint64_t size; };

struct stream_acct {
  uint64_t cur;                       /* the stream of the call being made */
  const char *cur_pool;               /* the strategy's pool for it (allocator_ops.pool_of), or NULL */
  int n;                              /* slots in use: one per (stream, pool) */
  uint64_t stream[ACCT_STREAMS];
  const char *pool[ACCT_STREAMS];     /* "" when the strategy has one pool per stream */
  uint64_t now[ACCT_STREAMS], peak[ACCT_STREAMS], at_peak[ACCT_STREAMS];
  uint64_t other_at_peak;             /* bytes not charged to a stream at the peak (async pool) */
  struct acct_entry *map; uint64_t mask, count;   /* allocation key -> slot */
};

void stream_acct_init(struct stream_acct *a);
void stream_acct_free(struct stream_acct *a);
/* memory taken (key: an address, or a physical handle | 1<<63); reserved/peak: the device's after it */
void stream_acct_take(struct stream_acct *a, uint64_t key, uint64_t size, uint64_t reserved, uint64_t peak);
void stream_acct_give(struct stream_acct *a, uint64_t key);

#endif
