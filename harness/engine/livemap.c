/* livemap.c - id -> live block hash map: setup and growth; see livemap.h. Tables are
 * anonymous mappings: pages are zero until written, and a growth hands the old table's
 * pages back as it empties them, so a growing map's peak is its new table, not the new
 * table plus the old one. */
#include "livemap.h"
#include "thread_map.h"
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
