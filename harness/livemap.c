/* livemap.c - id -> live block hash map; see livemap.h. */
#include "livemap.h"
#include <stdlib.h>
#include <string.h>

static inline size_t slot_of(const struct livemap *m, uint64_t id) {
  return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 17) & m->mask;
}

int livemap_init(struct livemap *m, size_t initial) {
  size_t cap = 64;
  while (cap < initial * 2) cap <<= 1;
  m->slots = calloc(cap, sizeof *m->slots);
  m->mask = cap - 1;
  m->count = 0;
  return m->slots ? 0 : -1;
}

void livemap_free(struct livemap *m) {
  free(m->slots);
  m->slots = NULL;
}

struct live_entry *livemap_get(struct livemap *m, uint64_t id) {
  size_t i = slot_of(m, id);
  for (;;) {
    struct live_entry *e = &m->slots[i];
    if (e->state == LIVE_EMPTY) return NULL;
    if (e->id == id) return e;
    i = (i + 1) & m->mask;
  }
}

static int grow(struct livemap *m) {
  struct livemap n;
  if (livemap_init(&n, (m->mask + 1))) return -1;
  for (size_t i = 0; i <= m->mask; i++) {
    struct live_entry *e = &m->slots[i];
    if (e->state == LIVE_EMPTY) continue;
    size_t j = slot_of(&n, e->id);
    while (n.slots[j].state != LIVE_EMPTY) j = (j + 1) & n.mask;
    n.slots[j] = *e;
    n.count++;
  }
  free(m->slots);
  *m = n;
  return 0;
}

struct live_entry *livemap_put(struct livemap *m, uint64_t id) {
  if ((m->count + 1) * 4 > (m->mask + 1) * 3 && grow(m)) return NULL;
  size_t i = slot_of(m, id);
  while (m->slots[i].state != LIVE_EMPTY) i = (i + 1) & m->mask;
  struct live_entry *e = &m->slots[i];
  memset(e, 0, sizeof *e);
  e->id = id;
  e->state = LIVE_BLOCK;
  m->count++;
  return e;
}

struct live_entry *livemap_slot(struct livemap *m, uint64_t id) {
  if ((m->count + 1) * 4 > (m->mask + 1) * 3 && grow(m)) return NULL;
  size_t i = slot_of(m, id);
  for (;;) {
    struct live_entry *e = &m->slots[i];
    if (e->state == LIVE_EMPTY || e->id == id) return e;
    i = (i + 1) & m->mask;
  }
}

void livemap_del(struct livemap *m, struct live_entry *e) {
  size_t i = (size_t)(e - m->slots);
  size_t j = i;
  for (;;) {
    j = (j + 1) & m->mask;
    struct live_entry *n = &m->slots[j];
    if (n->state == LIVE_EMPTY) break;
    size_t home = slot_of(m, n->id);
    /* can n move back to i? only if its home is not cyclically in (i, j] */
    int in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!in_range) {
      m->slots[i] = *n;
      i = j;
    }
  }
  m->slots[i].state = LIVE_EMPTY;
  m->count--;
}
