/* handle_table.c - see handle_table.h. Load kept at or below 1/2, so a probe run is
 * short; deletion shifts the following run back instead of leaving tombstones. */
#include "handle_table.h"
#include <stdlib.h>

static uint64_t slot_of(uint64_t handle, uint64_t mask) {
  uint64_t x = handle * 0x9E3779B97F4A7C15ull;   /* Fibonacci hashing: counters spread */
  return (x ^ (x >> 29)) & mask;
}

static int grow(struct handle_table *t) {
  uint64_t cap = t->slot ? (t->mask + 1) * 2 : 64;
  struct handle_slot *s = calloc(cap, sizeof *s);
  if (!s) return -1;
  if (t->slot) {
    for (uint64_t i = 0; i <= t->mask; i++) {
      if (!t->slot[i].handle) continue;
      uint64_t j = slot_of(t->slot[i].handle, cap - 1);
      while (s[j].handle) j = (j + 1) & (cap - 1);
      s[j] = t->slot[i];
    }
    free(t->slot);
  }
  t->slot = s;
  t->mask = cap - 1;
  return 0;
}

int handle_table_put(struct handle_table *t, uint64_t handle, uint64_t size) {
  if ((!t->slot || (t->count + 1) * 2 > t->mask + 1) && grow(t)) return -1;
  uint64_t i = slot_of(handle, t->mask);
  while (t->slot[i].handle) i = (i + 1) & t->mask;
  t->slot[i] = (struct handle_slot){.handle = handle, .size = size};
  t->count++;
  return 0;
}

struct handle_slot *handle_table_get(const struct handle_table *t, uint64_t handle) {
  if (!t->slot || !handle) return NULL;
  for (uint64_t i = slot_of(handle, t->mask);; i = (i + 1) & t->mask) {
    if (t->slot[i].handle == handle) return &t->slot[i];
    if (!t->slot[i].handle) return NULL;
  }
}

void handle_table_del(struct handle_table *t, struct handle_slot *s) {
  uint64_t i = (uint64_t)(s - t->slot), j = i;
  for (;;) {
    j = (j + 1) & t->mask;
    if (!t->slot[j].handle) break;
    uint64_t home = slot_of(t->slot[j].handle, t->mask);
    /* move j back into the hole at i unless its home lies cyclically in (i, j] */
    if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
      t->slot[i] = t->slot[j];
      i = j;
    }
  }
  t->slot[i].handle = 0;
  t->count--;
}

void handle_table_free(struct handle_table *t) {
  free(t->slot);
  *t = (struct handle_table){0};
}
