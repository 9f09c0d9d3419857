/* pool.c - RAPIDS RMM's pool_memory_resource (include/rmm/mr/device/pool_memory_resource.hpp
 * on detail/stream_ordered_memory_resource.hpp and detail/coalescing_free_list.hpp).
 *
 * Sizes round up to 256 bytes. Each stream has its own address-ordered coalescing free
 * list (pool_freelist.c). get_block: best fit in the stream's own list; else take the
 * best fit from another stream's list as it is (its remainder stays in that list); else,
 * visiting the other lists in turn, merge each wholly into this stream's list (after
 * RMM's cudaStreamWaitEvent) and look again; else grow the pool from upstream
 * (cudaMalloc): try max(size, pool size) (doubling) with no maximum, max(size,
 * remaining/2) with `maximum=`, halving the attempt down to the request while the device
 * refuses, then OOM. The remainder of a split block goes back to the list it came from.
 * A free goes to its stream's list. Blocks from different upstream allocations are never
 * merged (is_head). Nothing is returned before destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "allocator.h"
#include "pool_freelist.h"

#define POOL_ALIGN 256ull   /* rmm::CUDA_ALLOCATION_ALIGNMENT */

/* stream_free_blocks_[stream]: lists are visited in the order their streams first
 * appeared (RMM's map orders them by their CUDA event handles, created on first use) */
struct pool_stream {
  struct ordnode node;      /* by stream id */
  uint64_t stream;
  struct pool_freelist list;
};

struct pool_upstream {      /* upstream_blocks_: one cudaMalloc each */
  struct ordnode node;
  uint64_t addr, size;
  struct pool_block *first;   /* its head block: the start of its chain (never merged away) */
};

struct pool {
  struct device *dev;
  uint64_t initial, maximum;   /* aligned down to 256; maximum 0 = none */
  int has_maximum;
  int initial_pending;         /* the initial pool could not be had at create: retried at the first alloc */
  uint64_t pool_size;          /* current_pool_size_ */
  uint64_t allocated;          /* bytes in blocks handed out */
  struct ordset streams;       /* by id */
  struct pool_stream **order;  /* first-seen order */
  size_t nstreams, order_cap;
  struct pool_stream *last;    /* the stream used last (lookup cache) */
  struct ordset upstream;      /* by address */
  struct pool_spares spares;
};

static uint64_t align_up(uint64_t x) { return (x + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN; }
static uint64_t align_down(uint64_t x) { return x / POOL_ALIGN * POOL_ALIGN; }

static inline int stream_cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct pool_stream, node)->stream, y = ORD_ENTRY(b, struct pool_stream, node)->stream;
  return x < y ? -1 : x > y;
}

static int upstream_cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct pool_upstream, node)->addr, y = ORD_ENTRY(b, struct pool_upstream, node)->addr;
  return x < y ? -1 : x > y;
}
ORDSET_TYPED(streams, stream_cmp)   /* streams_lower_bound, streams_insert: stream_cmp inlined */

static void host_oom(struct pool *p) { snprintf(p->dev->err, FB_ERRLEN, "pool: out of host memory"); }

/* get_event + stream_free_blocks_[...]: the stream's list, made on first use */
static struct pool_stream *stream_list(struct pool *p, uint64_t stream) {
  if (p->last && p->last->stream == stream) return p->last;
  struct pool_stream key = {.stream = stream};
  struct ordnode *n = streams_lower_bound(&p->streams, &key.node);
  struct pool_stream *s = n ? ORD_ENTRY(n, struct pool_stream, node) : NULL;
  if (!s || s->stream != stream) {
    if (p->nstreams == p->order_cap) {
      size_t cap = p->order_cap ? p->order_cap * 2 : 8;
      struct pool_stream **o = realloc(p->order, cap * sizeof *o);
      if (!o) return NULL;
      p->order = o;
      p->order_cap = cap;
    }
    s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->stream = stream;
    pool_freelist_init(&s->list);
    streams_insert(&p->streams, &s->node);
    p->order[p->nstreams++] = s;
  }
  p->last = s;
  return s;
}

/* size_to_grow: halfway to the maximum, or the pool's size (doubling); 0 = cannot */
static uint64_t size_to_grow(const struct pool *p, uint64_t size) {
  if (p->has_maximum) {
    uint64_t remaining = align_up(p->maximum > p->pool_size ? p->maximum - p->pool_size : 0);
    uint64_t aligned = align_up(size);
    if (aligned > remaining) return 0;
    return aligned > remaining / 2 ? aligned : remaining / 2;
  }
  return size > p->pool_size ? size : p->pool_size;
}

/* try_to_expand: try_size, halving down to min_size while the device refuses.
 * 0 with the new upstream allocation's head block (handed out), FB_OOM, or <0. */
static int try_to_expand(struct pool *p, uint64_t try_size, uint64_t min_size, struct pool_block **out) {
  while (try_size >= min_size && try_size > 0) {
    uint64_t addr;
    int rc = dev_malloc(p->dev, try_size, &addr);
    if (rc < 0) return rc;
    if (rc == 0) {
      struct pool_upstream *u = calloc(1, sizeof *u);
      struct pool_block *b = u ? pool_block_upstream(&p->spares, addr, try_size) : NULL;
      if (!b) {
        free(u);
        dev_free(p->dev, addr, try_size);
        host_oom(p);
        return -1;
      }
      u->addr = addr;
      u->size = try_size;
      u->first = b;
      ordset_insert(&p->upstream, &u->node);
      p->pool_size += try_size;
      *out = b;
      return 0;
    }
    if (try_size == min_size) break;
    try_size = try_size / 2 > min_size ? try_size / 2 : min_size;
  }
  return FB_OOM;
}

/* stream_ordered_memory_resource::get_block (a taken block's remainder stays in the list
 * it came from: allocate_and_insert_remainder). 0 with the block, FB_OOM, or <0. */
static int get_block(struct pool *p, struct pool_stream *own, uint64_t size, struct pool_block **out) {
  int oom;
  if ((*out = pool_freelist_take(&own->list, size, &p->spares, &oom))) return 0;
  if (oom) goto host;
  /* another stream's block as it stands (get_block_from_other_stream, merge_first=false) */
  for (size_t i = 0; i < p->nstreams; i++) {
    struct pool_stream *o = p->order[i];
    if (o == own) continue;
    if ((*out = pool_freelist_take(&o->list, size, &p->spares, &oom))) return 0;
    if (oom) goto host;
  }
  /* merge the other lists into ours one by one until a block fits (merge_first=true) */
  for (size_t i = 0; i < p->nstreams; i++) {
    struct pool_stream *o = p->order[i];
    if (o == own) continue;
    pool_freelist_merge(&own->list, &o->list, &p->spares);
    if ((*out = pool_freelist_take(&own->list, size, &p->spares, &oom))) return 0;
    if (oom) goto host;
  }
  /* expand_pool: the new block's remainder goes to this stream's list */
  int rc = try_to_expand(p, size_to_grow(p, size), size, out);
  if (rc) return rc;
  if ((*out)->size > size && pool_block_split(*out, size, &own->list, &p->spares)) goto host;
  return 0;
host:
  host_oom(p);
  return -1;
}

/* initialize_pool: the initial block goes to the default stream's list */
static int take_initial(struct pool *p) {
  struct pool_block *b;
  int rc = try_to_expand(p, p->initial, p->initial, &b);
  if (rc) return rc;
  struct pool_stream *s = stream_list(p, 0);
  if (!s) {
    host_oom(p);
    return -1;
  }
  pool_freelist_insert(&s->list, b, &p->spares);
  return 0;
}

static void pool_destroy(void *a);

static const struct param_spec pool_params[] = {
  {"initial", P_BYTES, "0",
   "initial_pool_size, taken at create (aligned down to 256 B as rmm::percent_of_free_device_memory does); "
   "0 = grow on demand; RMM's usual setup: 50% (pool_memory_resource.hpp initialize_pool)"},
  {"maximum", P_BYTES, "",
   "maximum_pool_size: grow by max(request, remaining/2) up to it; unset = grow by max(request, pool size), i.e. doubling (size_to_grow)"},
  {NULL, 0, NULL, NULL},
};

static int pool_create(void **a, struct device *d, const struct params *prm, char *err) {
  struct pool *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(err, FB_ERRLEN, "pool: out of host memory");
    return -1;
  }
  p->dev = d;
  ordset_init(&p->streams, stream_cmp);
  ordset_init(&p->upstream, upstream_cmp);
  p->initial = align_down(param_bytes(prm, "initial"));
  p->has_maximum = params_has(prm, "maximum") && param_str(prm, "maximum")[0];
  p->maximum = p->has_maximum ? align_down(param_bytes(prm, "maximum")) : 0;
  if (p->has_maximum && p->initial > p->maximum) {
    snprintf(err, FB_ERRLEN, "pool: initial=%llu exceeds maximum=%llu (RMM: \"Initial pool size exceeds the maximum pool size!\")",
             (unsigned long long)p->initial, (unsigned long long)p->maximum);
    free(p);
    return -1;
  }
  if (p->initial) {
    int rc = take_initial(p);
    if (rc == FB_OOM) p->initial_pending = 1;   /* RMM would throw out_of_memory here: an OOM result, at the first alloc */
    else if (rc < 0) {
      snprintf(err, FB_ERRLEN, "pool: initial pool of %llu bytes: %.400s", (unsigned long long)p->initial, d->err);
      pool_destroy(p);
      return -1;
    }
  }
  *a = p;
  return 0;
}

static int pool_alloc(void *a, uint64_t size, uint64_t stream, struct block *out) {
  struct pool *p = a;
  if (p->initial_pending) {
    int rc = take_initial(p);
    if (rc) return rc;
    p->initial_pending = 0;
  }
  uint64_t rounded = align_up(size ? size : 1);
  struct pool_stream *s = stream_list(p, stream);
  if (!s) {
    host_oom(p);
    return -1;
  }
  struct pool_block *blk;
  int rc = get_block(p, s, rounded, &blk);
  if (rc) return rc;
  p->allocated += rounded;
  out->addr = blk->addr;
  out->size = rounded;
  out->stream = stream;
  out->handle = blk;
  return 0;
}

/* do_deallocate: the block goes to its stream's list */
static void pool_free(void *a, struct block *b) {
  struct pool *p = a;
  struct pool_stream *s = stream_list(p, b->stream);
  if (!s) {
    fprintf(stderr, "fragbench: pool: out of host memory freeing a block\n");
    exit(1);
  }
  pool_freelist_insert(&s->list, b->handle, &p->spares);
  p->allocated -= b->size;
}

static void pool_empty_cache(void *a) { (void)a; }   /* RMM returns memory only on destroy */

static void pool_query(void *a, uint64_t *largest_free, uint64_t *free_inside) {
  struct pool *p = a;
  uint64_t largest = 0;
  for (size_t i = 0; i < p->nstreams; i++) {
    uint64_t l = pool_freelist_largest(&p->order[i]->list);
    if (l > largest) largest = l;
  }
  *largest_free = largest;
  *free_inside = p->pool_size - p->allocated;
}

static void pool_stats(void *a, struct alloc_stats *st) {
  struct pool *p = a;
  st->cache_flushes = 0;
  st->held = p->pool_size;
}

static int list_index(const struct pool *p, const struct pool_freelist *l) {
  for (size_t i = 0; i < p->nstreams; i++)
    if (&p->order[i]->list == l) return (int)i;
  return -1;
}

/* --validate: every upstream allocation is an unbroken chain from its head, no two free
 * neighbours sit in the same list (they would have merged), each list holds exactly its
 * free blocks, and the bytes add up. */
static int pool_check(void *a, char *err) {
  struct pool *p = a;
  uint64_t upstream = 0, handed_out = 0;
  uint64_t counted[64] = {0}, summed[64] = {0};   /* the first 64 lists are checked block by block */
  for (struct ordnode *n = ordset_first(&p->upstream); n; n = ordset_next(n)) {
    const struct pool_upstream *u = ORD_ENTRY(n, struct pool_upstream, node);
    uint64_t pos = u->addr;
    const struct pool_block *prev = NULL;
    upstream += u->size;
    for (const struct pool_block *b = u->first; b; prev = b, b = b->next) {
      const char *why = NULL;
      int li = b->owner ? list_index(p, b->owner) : -2;
      if (b->addr != pos || b->prev != prev || !b->size) why = "breaks the chain";
      else if (b->is_head != (prev == NULL)) why = "has a wrong head flag";
      else if (b->addr % POOL_ALIGN) why = "is not 256-byte aligned";
      else if (li == -1) why = "is owned by no stream's list";
      else if (b->owner && prev && prev->owner == b->owner) why = "was not merged with the free block before it";
      if (why) {
        snprintf(err, FB_ERRLEN, "pool: block %#llx+%llu in upstream %#llx+%llu %s", (unsigned long long)b->addr,
                 (unsigned long long)b->size, (unsigned long long)u->addr, (unsigned long long)u->size, why);
        return -1;
      }
      if (li >= 0 && li < 64) {
        counted[li]++;
        summed[li] += b->size;
      }
      if (!b->owner) handed_out += b->size;
      pos += b->size;
    }
    if (pos != u->addr + u->size) {
      snprintf(err, FB_ERRLEN, "pool: upstream %#llx+%llu: its blocks cover %llu bytes", (unsigned long long)u->addr,
               (unsigned long long)u->size, (unsigned long long)(pos - u->addr));
      return -1;
    }
  }
  uint64_t free_bytes = 0;
  for (size_t i = 0; i < p->nstreams; i++) {
    const struct pool_freelist *l = &p->order[i]->list;
    free_bytes += l->free_bytes;
    if (i < 64 && (counted[i] != l->by_size.count || summed[i] != l->free_bytes)) {
      snprintf(err, FB_ERRLEN, "pool: stream %llu: the chains have %llu free blocks (%llu bytes) in its list, the list %zu (%llu)",
               (unsigned long long)p->order[i]->stream, (unsigned long long)counted[i], (unsigned long long)summed[i],
               l->by_size.count, (unsigned long long)l->free_bytes);
      return -1;
    }
  }
  if (upstream != p->pool_size || handed_out != p->allocated || free_bytes + p->allocated != p->pool_size) {
    snprintf(err, FB_ERRLEN, "pool: upstream %llu, pool size %llu, free %llu, handed out %llu (counted %llu)",
             (unsigned long long)upstream, (unsigned long long)p->pool_size, (unsigned long long)free_bytes,
             (unsigned long long)handed_out, (unsigned long long)p->allocated);
    return -1;
  }
  return 0;
}

static void pool_destroy(void *a) {
  struct pool *p = a;
  struct ordnode *n;
  while ((n = ordset_first(&p->upstream))) {
    struct pool_upstream *u = ORD_ENTRY(n, struct pool_upstream, node);
    ordset_erase(&p->upstream, n);
    dev_free(p->dev, u->addr, u->size);
    free(u);
  }
  for (size_t i = 0; i < p->nstreams; i++) free(p->order[i]);
  free(p->order);
  pool_spares_destroy(&p->spares);
  free(p);
}

const struct allocator_ops pool_allocator = {
  .name = "pool",
  .help = "RAPIDS RMM pool: per-stream address-ordered coalescing best fit, 256 B, takes other streams' blocks, grows by doubling with halving retry",
  .anchor = "RAPIDS RMM pool_memory_resource, include/rmm/mr/device/pool_memory_resource.hpp + detail/stream_ordered_memory_resource.hpp + detail/coalescing_free_list.hpp",
  .validated = "no: RMM is not installed on the GPU host and was not built there (make validate marks the row unvalidated)",
  .params = pool_params,
  .alignment = POOL_ALIGN,
  .cap_blind = alloc_cap_blind_always,
  .create = pool_create,
  .alloc = pool_alloc,
  .free = pool_free,
  .empty_cache = pool_empty_cache,
  .query = pool_query,
  .stats = pool_stats,
  .destroy = pool_destroy,
  .check = pool_check,
};
