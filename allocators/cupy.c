/* cupy.c - CuPy's default memory pool (cupy.cuda.MemoryPool -> SingleDeviceMemoryPool,
 * cupy/cuda/memory.pyx) on the device layer. CuPy, and much of the Python GPU ecosystem
 * built on it, allocates through this pool.
 *
 * Requests round up to 512 bytes (_round_size). Each stream has its own arena of free
 * chunks in bins of one exact size each ((size - 1) / 512); a request takes a chunk from
 * the smallest non-empty bin at or above its own (best fit by size) and always splits it:
 * the request's bytes from the front, the rest back to the free bins. With no free chunk
 * to take, it cudaMallocs exactly the rounded request (one device allocation per miss,
 * never larger). A free merges the chunk with its next and previous neighbours when they
 * are free (neighbours only within one cudaMalloc). free_all_blocks (empty_cache) gives
 * back every free chunk that is a whole cudaMalloc (never split, or merged back whole).
 * Near the limit: with `limit` set (CUPY_GPU_MEMORY_LIMIT / set_limit), a miss whose
 * cudaMalloc would take the pool's total over it fails at once, without freeing anything;
 * when cudaMalloc itself fails, the pool frees all blocks and retries, twice (the second
 * time after gc.collect, which frees nothing here), then reports OOM.
 *
 * Which chunk of a bin is taken: CuPy pops from a Python set (an order set by object
 * hashes, unknowable here); this takes the chunk of the oldest cudaMalloc, lowest offset
 * in it first. Never the raw device address: that is the device's choice, so an order by
 * it made sim and a real GPU take different chunks (bench's unconfirmed mincap of
 * train_resnet x cupy on an H100: 5.41 GiB reserved on cuda, 5.43 GiB on sim). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "allocator.h"
#include "cupy.h"

struct cupy_chunk;
struct cupy_mem {           /* one cudaMalloc */
  uint64_t addr, size;
  uint64_t seq;             /* the how-many-th cudaMalloc of the pool: the order chunks are taken in */
  struct cupy_chunk *first; /* its first chunk: splits and merges keep the front chunk */
  struct cupy_mem *prev, *next;     /* every cudaMalloc held */
};

struct cupy_chunk {
  struct ordnode node;      /* in its arena's free set while free */
  uint64_t addr, size, stream;
  struct cupy_mem *mem;
  struct cupy_chunk *prev, *next;   /* address neighbours within mem */
  int is_free;
};

struct cupy_arena {          /* one per stream, as _arenas */
  struct cupy_arena *next;
  uint64_t stream;
  struct ordset free;       /* by (size, address): smallest bin first, lowest address in it */
};

struct cupy {
  struct device *dev;
  uint64_t limit;           /* 0 = none */
  uint64_t total_bytes;     /* _total_bytes: what the pool got from cudaMalloc */
  uint64_t used_bytes;      /* in chunks handed out */
  struct cupy_arena *arenas;
  struct cupy_mem *mems;
  uint64_t flushes;         /* free_all_blocks passes on a failed cudaMalloc */
  uint64_t mallocs;         /* cudaMallocs made: the next one's seq */
};

static int chunk_cmp(const struct ordnode *a, const struct ordnode *b) {
  const struct cupy_chunk *x = ORD_ENTRY(a, struct cupy_chunk, node);
  const struct cupy_chunk *y = ORD_ENTRY(b, struct cupy_chunk, node);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  uint64_t sx = x->mem ? x->mem->seq : 0, sy = y->mem ? y->mem->seq : 0;   /* a search key has no mem: first */
  if (sx != sy) return sx < sy ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;   /* within one cudaMalloc: by offset */
}

static struct cupy_arena *arena(struct cupy *c, uint64_t stream, int make) {
  for (struct cupy_arena *a = c->arenas; a; a = a->next)
    if (a->stream == stream) return a;
  if (!make) return NULL;
  struct cupy_arena *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->stream = stream;
  ordset_init(&a->free, chunk_cmp);
  a->next = c->arenas;
  c->arenas = a;
  return a;
}

static void free_insert(struct cupy *c, struct cupy_chunk *k) {
  ordset_insert(&arena(c, k->stream, 0)->free, &k->node);
  k->is_free = 1;
}

static void free_remove(struct cupy *c, struct cupy_chunk *k) {
  ordset_erase(&arena(c, k->stream, 0)->free, &k->node);
  k->is_free = 0;
}

static void mem_release(struct cupy *c, struct cupy_mem *m) {
  dev_free(c->dev, m->addr, m->size);
  c->total_bytes -= m->size;
  if (m->prev) m->prev->next = m->next;
  else c->mems = m->next;
  if (m->next) m->next->prev = m->prev;
  free(m);
}

/* free_all_blocks: give back every free chunk that is a whole cudaMalloc. */
static void free_all_blocks(struct cupy *c) {
  for (struct cupy_arena *a = c->arenas; a; a = a->next) {
    struct ordnode *n = ordset_first(&a->free);
    while (n) {
      struct ordnode *next = ordset_next(n);
      struct cupy_chunk *k = ORD_ENTRY(n, struct cupy_chunk, node);
      if (!k->prev && !k->next) {
        ordset_erase(&a->free, n);
        mem_release(c, k->mem);
        free(k);
      }
      n = next;
    }
  }
}

/* _try_malloc: the limit check, then cudaMalloc with two free_all_blocks retries. */
static int try_malloc(struct cupy *c, uint64_t size, uint64_t *addr) {
  if (c->limit && c->total_bytes + size > c->limit) return FB_OOM;
  int rc = dev_malloc(c->dev, size, addr);
  for (int retry = 0; rc == FB_OOM && retry < 2; retry++) {
    free_all_blocks(c);
    c->flushes++;
    rc = dev_malloc(c->dev, size, addr);
  }
  if (rc == 0) c->total_bytes += size;
  return rc;
}

static const struct param_spec cupy_params[] = {
  {"limit", P_BYTES, "0",
   "the pool's upper limit on cudaMalloc'd bytes (CUPY_GPU_MEMORY_LIMIT, MemoryPool.set_limit; N% of the "
   "device total like set_limit(fraction=)); 0 = none, CuPy's default"},
  {NULL, 0, NULL, NULL},
};

static int cupy_create(void **a, struct device *d, const struct params *p, char *err) {
  struct cupy *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, FB_ERRLEN, "cupy: out of host memory");
    return -1;
  }
  c->dev = d;
  c->limit = param_bytes(p, "limit");
  *a = c;
  return 0;
}

static int cupy_alloc(void *a, uint64_t size, uint64_t stream, struct block *out) {
  struct cupy *c = a;
  uint64_t rounded = cupy_round_size(size ? size : 1);
  struct cupy_arena *ar = arena(c, stream, 1);
  if (!ar) {
    snprintf(c->dev->err, FB_ERRLEN, "cupy: out of host memory for an arena");
    return -1;
  }
  struct cupy_chunk key = {.size = rounded, .addr = 0};
  struct ordnode *n = ordset_lower_bound(&ar->free, &key.node);
  struct cupy_chunk *k;
  if (n) {                                  /* _get_chunk: best fit, always split */
    k = ORD_ENTRY(n, struct cupy_chunk, node);
    free_remove(c, k);
    if (k->size > rounded) {
      struct cupy_chunk *rest = calloc(1, sizeof *rest);
      if (!rest) {
        free_insert(c, k);
        snprintf(c->dev->err, FB_ERRLEN, "cupy: out of host memory for a chunk");
        return -1;
      }
      rest->addr = k->addr + rounded;
      rest->size = k->size - rounded;
      rest->stream = k->stream;
      rest->mem = k->mem;
      rest->prev = k;
      rest->next = k->next;
      if (k->next) k->next->prev = rest;
      k->next = rest;
      k->size = rounded;
      free_insert(c, rest);
    }
  } else {                                  /* a miss: cudaMalloc the rounded request */
    k = calloc(1, sizeof *k);
    struct cupy_mem *m = k ? calloc(1, sizeof *m) : NULL;
    if (!m) {
      free(k);
      snprintf(c->dev->err, FB_ERRLEN, "cupy: out of host memory for a chunk");
      return -1;
    }
    int rc = try_malloc(c, rounded, &m->addr);
    if (rc) {
      free(m);
      free(k);
      return rc;
    }
    m->size = rounded;
    m->seq = ++c->mallocs;
    m->first = k;
    m->next = c->mems;
    if (c->mems) c->mems->prev = m;
    c->mems = m;
    k->addr = m->addr;
    k->size = rounded;
    k->stream = stream;
    k->mem = m;
  }
  c->used_bytes += k->size;
  out->addr = k->addr;
  out->size = k->size;
  out->stream = stream;
  out->handle = k;
  return 0;
}

/* free: merge with the next chunk, then the previous one, when free; back to the bins. */
static void cupy_free(void *a, struct block *b) {
  struct cupy *c = a;
  struct cupy_chunk *k = b->handle, *x;
  c->used_bytes -= k->size;
  if ((x = k->next) && x->is_free) {
    free_remove(c, x);
    k->size += x->size;
    k->next = x->next;
    if (x->next) x->next->prev = k;
    free(x);
  }
  if ((x = k->prev) && x->is_free) {
    free_remove(c, x);
    x->size += k->size;
    x->next = k->next;
    if (k->next) k->next->prev = x;
    free(k);
    k = x;
  }
  free_insert(c, k);
}

static void cupy_empty_cache(void *a) { free_all_blocks(a); }

static void cupy_query(void *a, uint64_t *largest_free, uint64_t *free_inside) {
  struct cupy *c = a;
  *largest_free = 0;
  for (struct cupy_arena *ar = c->arenas; ar; ar = ar->next) {
    struct ordnode *n = ordset_last(&ar->free);
    if (n && ORD_ENTRY(n, struct cupy_chunk, node)->size > *largest_free)
      *largest_free = ORD_ENTRY(n, struct cupy_chunk, node)->size;
  }
  *free_inside = c->total_bytes - c->used_bytes;
}

static void cupy_stats(void *a, struct alloc_stats *st) {
  struct cupy *c = a;
  st->cache_flushes = c->flushes;
  st->held = c->total_bytes;
}

/* destroy: every cudaMalloc back to the device, with the chunks that tile it. */
static void cupy_destroy(void *a) {
  struct cupy *c = a;
  while (c->mems) {
    struct cupy_mem *m = c->mems;
    for (struct cupy_chunk *k = m->first, *next; k; k = next) {
      next = k->next;
      free(k);
    }
    mem_release(c, m);
  }
  while (c->arenas) {
    struct cupy_arena *ar = c->arenas;
    c->arenas = ar->next;
    free(ar);
  }
  free(c);
}

/* --validate: every free chunk is in its stream's set, no two free neighbours, chunks of
 * one cudaMalloc tile it, and the byte counts agree. */
static int cupy_check(void *a, char *err) {
  struct cupy *c = a;
  uint64_t free_bytes = 0;
  for (struct cupy_arena *ar = c->arenas; ar; ar = ar->next)
    for (struct ordnode *n = ordset_first(&ar->free); n; n = ordset_next(n)) {
      struct cupy_chunk *k = ORD_ENTRY(n, struct cupy_chunk, node);
      if (!k->is_free || k->stream != ar->stream || k->size % CUPY_UNIT) {
        snprintf(err, FB_ERRLEN, "cupy: chunk %#llx+%llu in the arena of stream %llu is not a free chunk of it",
                 (unsigned long long)k->addr, (unsigned long long)k->size, (unsigned long long)ar->stream);
        return -1;
      }
      if ((k->next && k->next->is_free) || (k->prev && k->prev->is_free)) {
        snprintf(err, FB_ERRLEN, "cupy: free chunk %#llx has a free neighbour that was not merged",
                 (unsigned long long)k->addr);
        return -1;
      }
      if ((k->prev && k->prev->addr + k->prev->size != k->addr) || (k->next && k->addr + k->size != k->next->addr) ||
          k->addr < k->mem->addr || k->addr + k->size > k->mem->addr + k->mem->size) {
        snprintf(err, FB_ERRLEN, "cupy: chunk %#llx+%llu does not tile its cudaMalloc %#llx+%llu",
                 (unsigned long long)k->addr, (unsigned long long)k->size, (unsigned long long)k->mem->addr,
                 (unsigned long long)k->mem->size);
        return -1;
      }
      free_bytes += k->size;
    }
  if (free_bytes + c->used_bytes != c->total_bytes || (c->limit && c->total_bytes > c->limit)) {
    snprintf(err, FB_ERRLEN, "cupy: free %llu + used %llu != total %llu (limit %llu)", (unsigned long long)free_bytes,
             (unsigned long long)c->used_bytes, (unsigned long long)c->total_bytes, (unsigned long long)c->limit);
    return -1;
  }
  return 0;
}

const struct allocator_ops cupy_allocator = {
  .name = "cupy",
  .help = "CuPy's default memory pool: 512 B rounding, exact-size bins per stream, best fit always split, "
          "one cudaMalloc per miss, free_all_blocks frees whole unsplit blocks",
  .anchor = "CuPy SingleDeviceMemoryPool, cupy/cuda/memory.pyx",
  .validated = "CuPy 14.2.0 MemoryPool (H100, make validate): peak total_bytes and peak bytes in use equal to the byte on 7 inputs, sim and cuda",
  .params = cupy_params,
  .alignment = CUPY_UNIT,
  .cap_blind = alloc_cap_blind_always,
  .create = cupy_create,
  .alloc = cupy_alloc,
  .free = cupy_free,
  .empty_cache = cupy_empty_cache,
  .query = cupy_query,
  .stats = cupy_stats,
  .destroy = cupy_destroy,
  .check = cupy_check,
};
