/* livemap.c - id -> live block hash map: setup and growth; see livemap.h. Tables are
 * anonymous mappings: pages are zero until written, and a growth hands the old table's
 * pages back as it empties them, so a growing map's peak is its new table, not the new
 * table plus the old one. */
#include "livemap.h"
#include "thread_map.h"
#include "event.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

static size_t table_bytes(size_t cap) { return cap * sizeof(struct live_entry); }

/* populate: fault every page in now (a new map's first table: the replay's timed region
 * then starts on a table already in memory); a growth's table fills page by page as the
 * old one empties */
static struct live_entry *table_new(size_t cap, int populate) {
  void *p = mmap(NULL, table_bytes(cap), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0),
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* A thread's last first-size table, kept (zeroed) for its next map (thread_map.h). */
static struct thread_map kept_tables = THREAD_MAP_INIT;

static int init(struct livemap *m, size_t initial, int populate) {
  size_t cap = 64;
  unsigned bits = 6;
  while (cap < initial * 2) { cap <<= 1; bits++; }
  m->slots = populate ? thread_map_take(&kept_tables, table_bytes(cap)) : NULL;   /* a first table: the thread's kept one */
  if (!m->slots) m->slots = table_new(cap, populate);
  m->mask = cap - 1;
  m->shift = 64 - bits;
  m->count = 0;
  m->grow_at = cap / 4 * 3;
  m->direct = 0;
  return m->slots ? 0 : -1;
}

int livemap_init(struct livemap *m, size_t initial) {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {   /* no entropy yet: clock and address */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    seed = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)m ^ ((uint64_t)ts.tv_sec << 32);
  }
  m->seed = seed | 1;   /* an odd multiplier */
  return init(m, initial, 1);
}

int livemap_init_slots(struct livemap *m, uint32_t table) {
  m->seed = 1;
  if (init(m, ((size_t)table + 1) / 2, 1)) return -1;   /* a capacity of table entries at least */
  m->direct = 1;
  m->grow_at = SIZE_MAX;   /* never grown: no event's slot is past the table */
  return 0;
}

int livemap_slot_events(struct event *ev, size_t n, uint32_t *table) {
  struct livemap m;
  *table = 0;
  if (livemap_init(&m, 1024)) return -1;
  uint32_t *freed = NULL, next = 1;   /* slot 0: no id's */
  size_t nfreed = 0, cap = 0;
  for (size_t i = 0; i < n; i++) {
    struct event *e = &ev[i];
    e->slot = 0;
    if (e->op == OP_ALLOC && e->size) {
      struct live_entry *le = livemap_get(&m, e->id);
      if (!le) {
        if (!nfreed && next == UINT32_MAX) goto fail;
        uint32_t s = nfreed ? freed[--nfreed] : next++;
        if (!(le = livemap_put(&m, e->id))) goto fail;
        le->requested = s;   /* this scratch map keeps an id's slot in its entry's requested */
      }
      e->slot = (uint32_t)le->requested;
    } else if (e->op == OP_FREE) {
      struct live_entry *le = livemap_get(&m, e->id);
      if (!le) continue;
      if (nfreed == cap) {
        size_t c = cap ? cap * 2 : 1024;
        uint32_t *more = realloc(freed, c * sizeof *more);
        if (!more) goto fail;
        freed = more;
        cap = c;
      }
      e->slot = (uint32_t)le->requested;
      freed[nfreed++] = e->slot;
      livemap_del(&m, le);
    }
  }
  livemap_free(&m);
  free(freed);
  *table = next;
  return 0;
fail:
  livemap_free(&m);
  free(freed);
  return -1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

uint64_t *livemap_sorted_ids(const struct livemap *m, uint32_t state, size_t *n) {
  *n = 0;
  if (!m->slots || !m->count) return NULL;
  uint64_t *ids = malloc(m->count * sizeof *ids);
  if (!ids) return NULL;
  for (size_t i = 0; i <= m->mask; i++)
    if (m->slots[i].state == state) ids[(*n)++] = m->slots[i].id;
  qsort(ids, *n, sizeof *ids, cmp_u64);
  return ids;
}

struct id_slot { uint64_t id; size_t slot; };

static int cmp_id_slot(const void *a, const void *b) {
  uint64_t x = ((const struct id_slot *)a)->id, y = ((const struct id_slot *)b)->id;
  return (x > y) - (x < y);
}

size_t *livemap_sorted_slots(const struct livemap *m, uint32_t state, size_t *n) {
  *n = 0;
  if (!m->slots || !m->count) return NULL;
  struct id_slot *p = malloc(m->count * sizeof *p);
  size_t *slots = malloc(m->count * sizeof *slots);
  if (!p || !slots) { free(p); free(slots); return NULL; }
  size_t k = 0;
  for (size_t i = 0; i <= m->mask; i++)
    if (m->slots[i].state == state) p[k++] = (struct id_slot){m->slots[i].id, i};
  qsort(p, k, sizeof *p, cmp_id_slot);
  for (size_t i = 0; i < k; i++) slots[i] = p[i].slot;
  free(p);
  *n = k;
  return slots;
}

void livemap_free(struct livemap *m) {
  if (!m->slots) return;
  size_t bytes = table_bytes(m->mask + 1);
  if (m->mask + 1 <= 8192) memset(m->slots, 0, bytes);   /* first-size tables only (replay's livemap_init(4096)) */
  if (m->mask + 1 > 8192 || thread_map_keep(&kept_tables, m->slots, bytes)) munmap(m->slots, bytes);
  m->slots = NULL;
}

/* Every entry, in slot order, into a table twice the size (the same placement as
 * inserting them one by one); the old table's pages go back once read. */
int livemap_grow(struct livemap *m) {
  struct livemap n;
  n.seed = m->seed;   /* the same hash: init keeps it */
  if (init(&n, m->mask + 1, 0)) return -1;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), released = 0;
  for (size_t i = 0; i <= m->mask; i++) {
    struct live_entry *e = &m->slots[i];
    if (e->state != LIVE_EMPTY) {
      size_t j = livemap_home(&n, e->id);
      while (n.slots[j].state != LIVE_EMPTY) j = (j + 1) & n.mask;
      n.slots[j] = *e;
      n.count++;
    }
    size_t done = (i + 1) * sizeof *e / page * page;   /* whole pages read so far */
    if (done - released >= 64 * page) {
      madvise((char *)m->slots + released, done - released, MADV_DONTNEED);
      released = done;
    }
  }
  livemap_free(m);
  *m = n;
  return 0;
}

struct live_entry *livemap_put(struct livemap *m, uint64_t id) {
  if (m->count >= m->grow_at && livemap_grow(m)) return NULL;
  size_t i = livemap_home(m, id);
  while (m->slots[i].state != LIVE_EMPTY) i = (i + 1) & m->mask;
  struct live_entry *e = &m->slots[i];
  memset(e, 0, sizeof *e);
  e->id = id;
  e->state = LIVE_BLOCK;
  m->count++;
  return e;
}
