/* livemap.h - the replay engine's map from event id to live block: open addressing with
 * linear probing and backward-shift deletion (no tombstones), so memory stays
 * proportional to the blocks live now and a lookup touches one or two cache lines. */
#ifndef FB_LIVEMAP_H
#define FB_LIVEMAP_H
#include <stdint.h>
#include <stddef.h>
#include "allocator.h"

enum live_state { LIVE_EMPTY = 0, LIVE_BLOCK = 1, LIVE_DROPPED = 2 /* its alloc OOMed under --on-oom skip */ };

struct live_entry {
  uint64_t id;
  uint64_t requested;
  struct block b;
  uint32_t state;
  uint32_t pad;
};

struct livemap {
  struct live_entry *slots;
  size_t mask;        /* capacity - 1 (power of two) */
  size_t count;
};

int livemap_init(struct livemap *m, size_t initial);
void livemap_free(struct livemap *m);
struct live_entry *livemap_get(struct livemap *m, uint64_t id);
/* insert a new id (must not be present); returns the entry to fill, NULL if out of memory */
struct live_entry *livemap_put(struct livemap *m, uint64_t id);
/* the entry of id, or a new LIVE_EMPTY slot for it (state still EMPTY: fill it, then
 * livemap_commit); one probe for lookup and insert. NULL if out of memory. */
struct live_entry *livemap_slot(struct livemap *m, uint64_t id);
static inline void livemap_commit(struct livemap *m, struct live_entry *e, uint64_t id, uint32_t state) {
  e->id = id;
  e->state = state;
  m->count++;
}
void livemap_del(struct livemap *m, struct live_entry *e);

#endif
