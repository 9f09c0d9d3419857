/* workload_stream.c - the generator tests' shared pass over a workload's events and
 * the contract every generator keeps; see workload_stream.h. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "workload_stream.h"

/* ---- a live-block map: id -> size (open addressing, backward-shift deletion) ---- */

static size_t slot_of(const struct live_map *m, uint64_t id) {
  uint64_t h = id * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 20) & (m->cap - 1);
}

static int map_grow(struct live_map *m) {
  struct live_map old = *m;
  m->cap = old.cap ? old.cap * 2 : 1024;
  m->key = calloc(m->cap, sizeof *m->key);
  m->val = calloc(m->cap, sizeof *m->val);
  m->used = calloc(m->cap, 1);
  m->n = 0;
  if (!m->key || !m->val || !m->used) return -1;
  for (size_t i = 0; i < old.cap; i++)
    if (old.used[i]) {
      size_t s = slot_of(m, old.key[i]);
      while (m->used[s]) s = (s + 1) & (m->cap - 1);
      m->used[s] = 1, m->key[s] = old.key[i], m->val[s] = old.val[i], m->n++;
    }
  free(old.key), free(old.val), free(old.used);
  return 0;
}

int map_find(const struct live_map *m, uint64_t id, size_t *at) {
  if (!m->cap) return 0;
  for (size_t s = slot_of(m, id); m->used[s]; s = (s + 1) & (m->cap - 1))
    if (m->key[s] == id) {
      *at = s;
      return 1;
    }
  return 0;
}

int map_put(struct live_map *m, uint64_t id, uint64_t size) {
  if ((m->n + 1) * 2 > m->cap && map_grow(m)) return -1;
  size_t s = slot_of(m, id);
  while (m->used[s]) s = (s + 1) & (m->cap - 1);
  m->used[s] = 1, m->key[s] = id, m->val[s] = size, m->n++;
  return 0;
}

void map_erase(struct live_map *m, size_t s) {
  m->used[s] = 0;
  m->n--;
  for (size_t j = (s + 1) & (m->cap - 1); m->used[j]; j = (j + 1) & (m->cap - 1)) {
    size_t want = slot_of(m, m->key[j]);
    /* move j back to the hole if its home is not in (s, j] cyclically */
    if ((j > s && (want <= s || want > j)) || (j < s && want <= s && want > j)) {
      m->key[s] = m->key[j], m->val[s] = m->val[j], m->used[s] = 1, m->used[j] = 0;
      s = j;
    }
  }
}

void map_free(struct live_map *m) {
  free(m->key), free(m->val), free(m->used);
  memset(m, 0, sizeof *m);
}

/* ---- one pass over a workload's events, checked ---- */


static void hash_mix(uint64_t *h, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    *h ^= (v >> (8 * i)) & 0xff;
    *h *= 0x100000001b3ull;
  }
}

static double slope_of(const uint64_t *y, uint64_t n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
  for (uint64_t i = 2; i < n; i++, k++) {
    sx += (double)i, sy += (double)y[i], sxx += (double)i * (double)i, sxy += (double)i * (double)y[i];
  }
  if (k < 2) return NAN;
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

/* reads the open workload to its end; 0 ok, -1 with s->fail set */
int drain(struct workload *w, struct stream *s) {
  memset(s, 0, sizeof *s);
  s->hash = 0xcbf29ce484222325ull;
  struct live_map live = {0};
  struct event ev;
  char err[FB_ERRLEN];
  uint64_t iter_start_alloc = 0, total_alloc = 0;
  int rc;
  while ((rc = workload_next(w, &ev, err)) == 1) {
    s->events++;
    hash_mix(&s->hash, ev.op), hash_mix(&s->hash, ev.id), hash_mix(&s->hash, ev.size), hash_mix(&s->hash, ev.stream);
    size_t at;
    switch (ev.op) {
    case OP_ALLOC:
      if (!ev.size) { snprintf(s->fail, sizeof s->fail, "event %llu: alloc of 0 bytes", (unsigned long long)s->events); goto bad; }
      if (map_find(&live, ev.id, &at)) { snprintf(s->fail, sizeof s->fail, "event %llu: id %llu allocated while live", (unsigned long long)s->events, (unsigned long long)ev.id); goto bad; }
      if (map_put(&live, ev.id, ev.size)) { snprintf(s->fail, sizeof s->fail, "out of memory"); goto bad; }
      s->allocs++;
      s->live += ev.size;
      total_alloc += ev.size;
      if (s->live > s->peak) s->peak = s->live;
      if (s->iters < MAX_ITERS && s->live > s->iter_peak[s->iters]) s->iter_peak[s->iters] = s->live;
      break;
    case OP_FREE:
      if (!map_find(&live, ev.id, &at)) { snprintf(s->fail, sizeof s->fail, "event %llu: free of id %llu, not live", (unsigned long long)s->events, (unsigned long long)ev.id); goto bad; }
      s->live -= live.val[at];
      map_erase(&live, at);
      s->frees++;
      break;
    case OP_ITER:
      if (s->iters < MAX_ITERS) {
        s->iter_live[s->iters] = s->live;
        s->iter_alloc[s->iters] = total_alloc - iter_start_alloc;
      }
      iter_start_alloc = total_alloc;
      s->iters++;
      break;
    case OP_EMPTY_CACHE:
      s->empty_caches++;
      break;
    case OP_POOL_RELEASE:   /* generators use no private pools */
      break;
    }
  }
  if (rc < 0) { snprintf(s->fail, sizeof s->fail, "next() failed: %.400s", err); goto bad; }
  if (live.n) { snprintf(s->fail, sizeof s->fail, "%zu blocks (%llu bytes) still live at the end", live.n, (unsigned long long)s->live); goto bad; }
  s->slope = slope_of(s->iter_live, s->iters < MAX_ITERS ? s->iters : MAX_ITERS);
  map_free(&live);
  return 0;
bad:
  map_free(&live);
  return -1;
}

int open_spec(struct workload *w, const char *spec, int rank, int world, uint64_t seed, char *err) {
  char name[64];
  const char *colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  snprintf(name, sizeof name, "%.*s", (int)n, spec);
  const struct workload_ops *ops = workload_find(name);
  if (!ops) {
    snprintf(err, FB_ERRLEN, "no workload '%s' registered", name);
    return -1;
  }
  struct workload_ctx ctx = {.rank = rank, .world = world, .seed = seed, .trace_device = -1};
  return workload_open(w, ops, spec, &ctx, 85017493504ull, err);
}

/* opens spec and drains it into s (heap: struct stream is large); NULL with err set */
struct stream *run_spec(const char *spec, int rank, int world, uint64_t seed, char *err) {
  struct workload w;
  if (open_spec(&w, spec, rank, world, seed, err)) return NULL;
  struct stream *s = malloc(sizeof *s);
  if (drain(&w, s)) {
    snprintf(err, FB_ERRLEN, "%.100s: %.400s", spec, s->fail);
    free(s);
    s = NULL;
  }
  workload_close(&w);
  return s;
}

/* ---- the contract every generator keeps ---- */
void check_contract(const char *spec, int random) {
  char err[FB_ERRLEN];
  struct workload w;
  CHECK_MSG(!open_spec(&w, spec, 0, 1, 1, err), "%s: open: %s", spec, err);
  struct stream *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  int ok1 = !drain(&w, a);
  if (!ok1) test_fail(__FILE__, __LINE__, "%s: %s", spec, a->fail);
  int rw = workload_rewind(&w, err);
  int ok2 = !rw && !drain(&w, b);
  if (!ok2) test_fail(__FILE__, __LINE__, "%s after rewind: %s", spec, rw ? err : b->fail);
  workload_close(&w);
  if (ok1 && ok2) {
    if (a->hash != b->hash || a->events != b->events)
      test_fail(__FILE__, __LINE__, "%s: rewind gave a different stream (%llu vs %llu events)", spec,
                (unsigned long long)a->events, (unsigned long long)b->events);
    if (a->iters < 3) test_fail(__FILE__, __LINE__, "%s: only %llu ITER events", spec, (unsigned long long)a->iters);
    if (a->allocs != a->frees) test_fail(__FILE__, __LINE__, "%s: %llu allocs, %llu frees", spec, (unsigned long long)a->allocs, (unsigned long long)a->frees);
    /* a fresh open with the same seed: the same stream; another seed: another one if random */
    struct stream *c = run_spec(spec, 0, 1, 1, err), *d = run_spec(spec, 0, 1, 2, err);
    if (!c || !d) test_fail(__FILE__, __LINE__, "%s: %s", spec, err);
    else {
      if (c->hash != a->hash) test_fail(__FILE__, __LINE__, "%s: same seed, different stream", spec);
      if (random && d->hash == a->hash) test_fail(__FILE__, __LINE__, "%s: seeds 1 and 2 gave the same stream", spec);
      if (!random && d->hash != a->hash) test_fail(__FILE__, __LINE__, "%s: not random, yet the seed changed the stream", spec);
    }
    free(c), free(d);
  }
  free(a), free(b);
  /* unknown keys are rejected, naming the key and listing the known ones */
  char bad[256];
  snprintf(bad, sizeof bad, "%s%sbogus_key=1", spec, strchr(spec, ':') ? "," : ":");
  CHECK_MSG(open_spec(&w, bad, 0, 1, 1, err) != 0, "%s: unknown key accepted", bad);
  CHECK_CONTAINS(err, "unknown parameter 'bogus_key'");
  CHECK_CONTAINS(err, "iters");
}

/* peak and live-at-ITER of one spec (rank/world given) */
int figures(const char *spec, int rank, int world, uint64_t *peak, uint64_t *iter_live1, char *err) {
  struct stream *s = run_spec(spec, rank, world, 1, err);
  if (!s) return -1;
  *peak = s->peak;
  if (iter_live1) *iter_live1 = s->iters > 1 ? s->iter_live[1] : 0;
  free(s);
  return 0;
}

/* does the stream allocate a block of exactly `size` in iteration 1? */
int allocates_size(const char *spec, uint64_t size, uint64_t *count, char *err) {
  struct workload w;
  if (open_spec(&w, spec, 0, 1, 1, err)) return -1;
  struct event ev;
  uint64_t iters = 0;
  *count = 0;
  int rc;
  while ((rc = workload_next(&w, &ev, err)) == 1) {
    if (ev.op == OP_ITER) iters++;
    else if (ev.op == OP_ALLOC && iters == 1 && ev.size == size) (*count)++;
  }
  workload_close(&w);
  return rc < 0 ? -1 : 0;
}
