/* handle_table.h - the device layer's physical handles by id: an open-addressing hash
 * (linear probing, backward-shift deletion) from a handle to its size and map count.
 * A stitching strategy maps and unmaps a page every few events, and each of those looks
 * its handle up: O(1) here, where an ordered set cost a descent of ~25 nodes. Handles
 * are opaque on cuda (CUmemGenericAllocationHandle) and counters on sim; 0 is never a
 * handle on either, so it marks an empty slot. */
#ifndef FB_HANDLE_TABLE_H
#define FB_HANDLE_TABLE_H
#include <stdint.h>

struct handle_slot {
  uint64_t handle;   /* 0 = empty */
  uint64_t size;
  uint64_t maps;     /* how many ranges map it now */
};

struct handle_table {
  struct handle_slot *slot;
  uint64_t mask;     /* capacity - 1 (capacity a power of two) */
  uint64_t count;
};

/* 0, or -1 when host memory ran out (the table is left as it was) */
int handle_table_put(struct handle_table *t, uint64_t handle, uint64_t size);
struct handle_slot *handle_table_get(const struct handle_table *t, uint64_t handle);
void handle_table_del(struct handle_table *t, struct handle_slot *s);
void handle_table_free(struct handle_table *t);

#endif
