/* livemap.h - the replay engine's map from event id to live block: open addressing with
 * linear probing and backward-shift deletion (no tombstones), so memory stays
 * proportional to the blocks live now and a lookup touches one or two cache lines.
 * The per-event operations are inline; growth is out of line. Ids come from files (a
 * trace's addresses or ids): a slot is multiply-shift hashing with a per-map random odd
 * multiplier (the top bits of id * seed; two ids share a home with chance at most
 * 2 / capacity over the seed), so crafted ids cannot pile into one probe run, and an
 * arithmetic run of ids (addresses 512 B apart) spreads evenly; the placement (slot
 * order) then differs from run to run, so whoever walks the slots for something that
 * shows (freeing what is left) walks them in id order (livemap_sorted_ids).
 * A sequence of events held in memory can be given its slots once, before it is replayed
 * (livemap_slot_events: each event the slot of its id, as the map would hold it then), and
 * a map made for it (livemap_init_slots) then takes an event's entry at its slot: no
 * hashing, no probing, and the slots freed last are the next taken, so the entries in use
 * stay few and close together, as PyTorch's own probe resolves ids to array slots before
 * timing (tests/probes/torch_percall.cpp). */
#ifndef FB_LIVEMAP_H
#define FB_LIVEMAP_H
#include <stdint.h>
#include <stddef.h>
#include "allocator.h"

enum live_state { LIVE_EMPTY = 0, LIVE_BLOCK = 1, LIVE_DROPPED = 2 /* its alloc OOMed under --on-oom skip */ };

/* 48 bytes. requested fits in 48 bits: the engines skip requests of 2^48 bytes and more
 * (HUGE_REQUEST, larger than any device). state is the low 16 bits of the word
 * (tests/test_livemap.c checks the layout). */
#define LIVE_REQUESTED_MAX ((1ull << 48) - 1)
struct live_entry {
  uint64_t id;
  union {
    struct {
      uint64_t state : 16;    /* enum live_state */
      uint64_t requested : 48;
    };
    uint64_t state_requested; /* both, written at once */
  };
  struct block b;
};

struct livemap {
  struct live_entry *slots;
  size_t mask;        /* capacity - 1 (power of two) */
  size_t count;
  size_t grow_at;     /* count at which an insert grows the table first: 3/4 of capacity */
  uint64_t seed;      /* random per map, odd (livemap_init): the hash's multiplier */
  unsigned shift;     /* 64 - log2(capacity): a home is the product's top bits */
  int direct;         /* livemap_init_slots: an id's entry is at its event's slot */
};

int livemap_init(struct livemap *m, size_t initial);
void livemap_free(struct livemap *m);
int livemap_grow(struct livemap *m);   /* double the capacity (0, or -1 out of memory) */

/* Give each event of ev[0..n) the slot its id takes in the map, as replay keeps it: an
 * alloc of a size above 0 puts its id (or finds it there: an id already live keeps its
 * slot), a free takes it out; a free of an id not there, and every other event, gets slot
 * 0, which no id ever takes. A freed slot is the next one taken. *table: the entries a map
 * for these events needs (livemap_init_slots), 1 + the most ids there at once. 0, or -1
 * out of memory (the events' slots then mean nothing: *table is 0). */
struct event;
int livemap_slot_events(struct event *ev, size_t n, uint32_t *table);
/* a map for events given their slots by livemap_slot_events (table entries): an entry
 * is found at its event's slot (livemap_entry, livemap_find_at) */
int livemap_init_slots(struct livemap *m, uint32_t table);

static inline size_t livemap_home(const struct livemap *m, uint64_t id) {
  return (size_t)((id * m->seed) >> m->shift);
}

/* the ids of every entry in state (LIVE_BLOCK, LIVE_DROPPED), ascending, into a new
 * array (*n of them; free() it); NULL with *n = 0 when there are none or out of memory */
uint64_t *livemap_sorted_ids(const struct livemap *m, uint32_t state, size_t *n);

/* the slot index of id, or LIVEMAP_NONE */
#define LIVEMAP_NONE SIZE_MAX
static inline size_t livemap_find(const struct livemap *m, uint64_t id) {
  size_t i = livemap_home(m, id);
  for (;;) {
    const struct live_entry *e = &m->slots[i];
    if (e->state == LIVE_EMPTY) return LIVEMAP_NONE;
    if (e->id == id) return i;
    i = (i + 1) & m->mask;
  }
}

static inline struct live_entry *livemap_get(struct livemap *m, uint64_t id) {
  size_t i = livemap_find(m, id);
  return i == LIVEMAP_NONE ? NULL : &m->slots[i];
}

/* insert a new id (must not be present); returns the entry to fill, NULL if out of memory */
struct live_entry *livemap_put(struct livemap *m, uint64_t id);

/* the entry of id, or a new LIVE_EMPTY slot for it (state still EMPTY: fill it, then
 * livemap_commit); one probe for lookup and insert. NULL if out of memory. */
static inline struct live_entry *livemap_slot(struct livemap *m, uint64_t id) {
  if (m->count >= m->grow_at && livemap_grow(m)) return NULL;
  size_t i = livemap_home(m, id);
  for (;;) {
    struct live_entry *e = &m->slots[i];
    if (e->state == LIVE_EMPTY || e->id == id) return e;
    i = (i + 1) & m->mask;
  }
}

static inline void livemap_commit(struct livemap *m, struct live_entry *e, uint64_t id, uint32_t state) {
  e->id = id;
  e->state = state;
  m->count++;
}
/* livemap_commit and e->requested = requested (<= LIVE_REQUESTED_MAX) in one store */
static inline void livemap_commit_requested(struct livemap *m, struct live_entry *e, uint64_t id, uint32_t state,
                                            uint64_t requested) {
  e->id = id;
  e->state_requested = (uint64_t)(state & 0xffff) | requested << 16;
  m->count++;
}

/* the entry for an event's id (slot: the event's), new (LIVE_EMPTY) or not, as
 * livemap_slot; NULL if out of memory */
static inline struct live_entry *livemap_entry(struct livemap *m, uint64_t id, uint32_t slot) {
  return m->direct ? &m->slots[slot] : livemap_slot(m, id);
}

/* the slot index of an event's id (slot: the event's), or LIVEMAP_NONE */
static inline size_t livemap_find_at(const struct livemap *m, uint64_t id, uint32_t slot) {
  if (m->direct) return m->slots[slot].state == LIVE_EMPTY ? LIVEMAP_NONE : slot;
  return livemap_find(m, id);
}

/* the slot indices of every entry in state, in id order, into a new array (*n of them;
 * free() it); NULL with *n = 0 when there are none or out of memory. Only for a map made
 * by livemap_init_slots: in a hashed one a deletion moves entries to other slots. */
size_t *livemap_sorted_slots(const struct livemap *m, uint32_t state, size_t *n);

/* remove the entry in slot i; a later entry of its probe run may move into slot i */
static inline void livemap_del_at(struct livemap *m, size_t i) {
  if (m->direct) {
    m->slots[i].state = LIVE_EMPTY;
    m->count--;
    return;
  }
  size_t j = i;
  for (;;) {
    j = (j + 1) & m->mask;
    struct live_entry *n = &m->slots[j];
    if (n->state == LIVE_EMPTY) break;
    size_t home = livemap_home(m, n->id);
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

/* remove e (livemap_del_at its slot) */
static inline void livemap_del(struct livemap *m, struct live_entry *e) { livemap_del_at(m, (size_t)(e - m->slots)); }

#endif
