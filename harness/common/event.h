/* event.h - the event model: what every workload (generator or trace reader) emits
 * and what the replay engine consumes. One event is one allocator-visible action. */
#ifndef FB_EVENT_H
#define FB_EVENT_H
#include <stdint.h>

#define FB_ERRLEN 512          /* size of every error-message buffer passed around */

enum op { OP_ALLOC, OP_FREE, OP_EMPTY_CACHE, OP_ITER };

struct event {
  enum op op;
  uint64_t id;       /* alloc/free: the block's identity (unique among live blocks) */
  uint64_t size;     /* alloc: requested bytes; 0 otherwise */
  uint64_t stream;   /* alloc: the stream the block is used on (0 = default stream) */
  int device;        /* which device's trace this event belongs to (multi-device snapshots) */
};

static inline const char *op_name(enum op o) {
  switch (o) {
  case OP_ALLOC: return "alloc";
  case OP_FREE: return "free";
  case OP_EMPTY_CACHE: return "empty_cache";
  case OP_ITER: return "iter";
  }
  return "?";
}

#endif
