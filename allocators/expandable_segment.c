/* expandable_segment.c - the segments of `expandable` (see expandable.h): reserving a
 * segment's virtual range, creating and mapping its pages on growth, unmapping and
 * releasing wholly free pages, and the block moves that go with them, as
 * CUDACachingAllocator.cpp's ExpandableSegment, find_expandable_block, map_block,
 * unmap_block, release_blocks and release_expandable_segment do them. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "expandable.h"

static inline int unmapped_cmp(const struct ordnode *x, const struct ordnode *y) {
  const struct cblock *a = ORD_ENTRY(x, struct cblock, node), *b = ORD_ENTRY(y, struct cblock, node);
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  return 0;
}
ORDSET_TYPED(unmapped, unmapped_cmp)   /* unmapped_insert, unmapped_lower_bound: unmapped_cmp inlined */

void exp_pool_init(struct epool *p, int is_small) {
  cpool_init(&p->blocks, is_small);
  ordset_init(&p->unmapped, unmapped_cmp);
  p->page = is_small ? EXP_SMALL_PAGE : EXP_LARGE_PAGE;
}

static int host_oom(struct expandable *e) {
  snprintf(e->dev->err, FB_ERRLEN, "expandable: out of host memory");
  return -1;
}

/* ---- pages ---------------------------------------------------------------------------- */

/* ExpandableSegment::map: pages [begin, end) created (all or none) and mapped. */
static int map_pages(struct expandable *e, struct cseg *s, uint64_t begin, uint64_t end) {
  int rc = 0;
  uint64_t i;
  for (i = begin; i < end; i++)
    if ((rc = dev_phys_create(e->dev, s->page, &s->handle[i]))) break;
  if (rc) {
    while (i-- > begin) dev_phys_release(e->dev, s->handle[i]);
    return rc;
  }
  for (i = begin; i < end; i++)
    if ((rc = dev_map(e->dev, s->va + i * s->page, s->page, s->handle[i]))) break;
  if (rc) {
    for (uint64_t j = begin; j < i; j++) dev_unmap(e->dev, s->va + j * s->page, s->page);
    for (uint64_t j = begin; j < end; j++) dev_phys_release(e->dev, s->handle[j]);
    return rc;
  }
  for (i = begin; i < end; i++) s->present[i] = 1;
  if (end > s->pages_end) s->pages_end = end;
  s->mapped_pages += end - begin;
  e->held += (end - begin) * s->page;
  return 0;
}

/* ExpandableSegment::unmapHandles */
static void unmap_pages(struct expandable *e, struct cseg *s, uint64_t begin, uint64_t end) {
  for (uint64_t i = begin; i < end; i++) {
    dev_unmap(e->dev, s->va + i * s->page, s->page);
    dev_phys_release(e->dev, s->handle[i]);
    s->present[i] = 0;
  }
  s->mapped_pages -= end - begin;
  e->held -= (end - begin) * s->page;
}

/* ---- segments ------------------------------------------------------------------------- */

/* A segment's per-page arrays (handle, present) in one anonymous mapping: zero until
 * written, so a range of 1 1/8 of the device (45,000 pages of 2 MiB on an 80 GB device)
 * costs no clearing up front, and only the pages in use are ever touched. */
static size_t page_arrays_bytes(uint64_t npages) { return npages * (sizeof(uint64_t) + 1); }

static int page_arrays_new(struct cseg *s, uint64_t npages) {
  void *p = mmap(NULL, page_arrays_bytes(npages), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
  s->handle = p;
  s->present = (uint8_t *)(s->handle + npages);
  return 0;
}

static void page_arrays_free(struct cseg *s, uint64_t npages) {
  if (s->handle) munmap(s->handle, page_arrays_bytes(npages));
  s->handle = NULL;
  s->present = NULL;
}

/* A new segment for (stream, pool): 1 1/8 of the device's memory in pages, all unmapped,
 * as one unmapped block. */
static struct cblock *new_segment(struct expandable *e, struct epool *p, uint64_t stream, int *rc) {
  uint64_t want = e->dev->total + e->dev->total / 8;
  uint64_t npages = (want + p->page - 1) / p->page;
  struct cstream *cs = cpool_stream(&p->blocks, stream, 1);
  struct cseg *s = cs ? calloc(1, sizeof *s) : NULL;
  if (!s || page_arrays_new(s, npages) || cblock_store_reserve(&e->store, 1)) {
    if (s) { page_arrays_free(s, npages); free(s); }
    *rc = host_oom(e);
    return NULL;
  }
  if ((*rc = dev_va_reserve(e->dev, npages * p->page, &s->va))) {
    if (*rc > 0) {   /* address space is no memory: a refusal is a device error */
      snprintf(e->dev->err, FB_ERRLEN, "expandable: cannot reserve %llu bytes of address space",
               (unsigned long long)(npages * p->page));
      *rc = -1;
    }
    page_arrays_free(s, npages);
    free(s);
    return NULL;
  }
  s->size = npages * p->page;
  s->page = p->page;
  s->npages = npages;
  s->stream = stream;
  s->pool = p;
  struct cblock *b = cblock_take(&e->store);
  b->addr = s->va;
  b->size = s->size;
  b->stream = stream;
  b->pool = &p->blocks;
  b->cs = cs;
  b->seg = s;
  b->mapped = 0;
  s->head = b;
  ordset_insert(&e->segs, &s->node);
  unmapped_insert(&p->unmapped, &b->node);
  return b;
}

/* release_expandable_segment: b is its segment's only block, unmapped. */
static void release_segment(struct expandable *e, struct cblock *b) {
  struct cseg *s = b->seg;
  ordset_erase(&s->pool->unmapped, &b->node);
  cblock_put(&e->store, b);
  dev_va_release(e->dev, s->va, s->size);
  ordset_erase(&e->segs, &s->node);
  page_arrays_free(s, s->npages);
  free(s);
}

/* ---- finding room to grow -------------------------------------------------------------- */

static int allocatable(const struct cblock *b) { return b && !b->allocated; }

/* do the free and unmapped blocks from b on span size bytes? */
static int has_room(const struct cblock *b, uint64_t size) {
  uint64_t bytes = 0;
  for (; bytes < size && allocatable(b); b = b->next) bytes += b->size;
  return bytes >= size;
}

struct cblock *exp_find_expandable(struct expandable *e, struct epool *p, uint64_t stream, uint64_t size, int *rc) {
  struct cblock key = {.stream = stream, .addr = 0};
  for (struct ordnode *n = unmapped_lower_bound(&p->unmapped, &key.node); n; n = ordset_next_inline(n)) {
    struct cblock *c = ORD_ENTRY(n, struct cblock, node);
    if (c->stream != stream) break;
    if (allocatable(c->prev)) c = c->prev;   /* a free block just before it grows into it */
    if (has_room(c, size)) return c;
  }
  return new_segment(e, p, stream, rc);
}

/* ---- block moves ------------------------------------------------------------------------ */

/* put n between b->prev and b */
static void splice_before(struct cblock *n, struct cblock *b) {
  n->prev = b->prev;
  if (n->prev) n->prev->next = n;
  else b->seg->head = n;
  n->next = b;
  b->prev = n;
}

/* put n between b and b->next */
static void splice_after(struct cblock *n, struct cblock *b) {
  n->next = b->next;
  if (n->next) n->next->prev = n;
  n->prev = b;
  b->next = n;
}

/* a fresh block like b (same stream, pool, segment) over [addr, addr+size) */
static struct cblock *piece_of(struct expandable *e, const struct cblock *b, uint64_t addr, uint64_t size, int mapped) {
  struct cblock *n = cblock_take(&e->store);
  n->addr = addr;
  n->size = size;
  n->stream = b->stream;
  n->pool = b->pool;
  n->cs = b->cs;
  n->seg = b->seg;
  n->mapped = (uint8_t)mapped;
  return n;
}

int exp_map_block(struct expandable *e, struct cblock *b, uint64_t size) {
  struct cseg *s = b->seg;
  struct epool *p = s->pool;
  if (cblock_store_reserve(&e->store, 1)) return host_oom(e);
  uint64_t begin = (b->addr - s->va) / s->page;
  uint64_t end = (b->addr + size - s->va + s->page - 1) / s->page;
  int rc = map_pages(e, s, begin, end);
  if (rc) return rc;
  uint64_t mapped = (end - begin) * s->page;
  ordset_erase(&p->unmapped, &b->node);
  b->mapped = 1;
  if (mapped < b->size) {
    struct cblock *rest = piece_of(e, b, b->addr + mapped, b->size - mapped, 0);
    splice_after(rest, b);
    unmapped_insert(&p->unmapped, &rest->node);
    b->size = mapped;
  }
  cblock_coalesce(&e->store, b, &s->head);
  cpool_insert(&p->blocks, b);
  return 0;
}

/* try_merge_blocks for two unmapped neighbours; dst is not in the unmapped set */
static void merge_unmapped(struct expandable *e, struct cblock *dst, struct cblock *src) {
  if (!src || src->mapped) return;
  ordset_erase(&epool_of(src)->unmapped, &src->node);
  if (dst->prev == src) {
    dst->addr = src->addr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
    else dst->seg->head = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  dst->size += src->size;
  cblock_put(&e->store, src);
}

struct cblock *exp_unmap_block(struct expandable *e, struct cblock *b, int *unmapped) {
  struct cseg *s = b->seg;
  struct epool *p = s->pool;
  uint64_t begin = (b->addr - s->va + s->page - 1) / s->page;   /* first whole page */
  uint64_t end = (b->addr + b->size - s->va) / s->page;         /* after the last one */
  *unmapped = 0;
  if (begin >= end || cblock_store_reserve(&e->store, 2)) return b;
  unmap_pages(e, s, begin, end);
  cpool_erase(&p->blocks, b);
  uint64_t lo = s->va + begin * s->page, hi = s->va + end * s->page;
  if (lo > b->addr) {
    struct cblock *before = piece_of(e, b, b->addr, lo - b->addr, 1);
    splice_before(before, b);
    cpool_insert(&p->blocks, before);
  }
  if (hi < b->addr + b->size) {
    struct cblock *after = piece_of(e, b, hi, b->addr + b->size - hi, 1);
    splice_after(after, b);
    cpool_insert(&p->blocks, after);
  }
  b->addr = lo;
  b->size = hi - lo;
  b->mapped = 0;
  merge_unmapped(e, b, b->prev);
  merge_unmapped(e, b, b->next);
  unmapped_insert(&p->unmapped, &b->node);
  *unmapped = 1;
  return b;
}

/* release_blocks over both pools. PyTorch gathers the free mapped blocks of each pool and
 * unmaps them one by one; each unmap touches only its block and unmapped neighbours, so
 * walking every segment's chain instead reaches the same state without a gathered list. */
void exp_release_cached(struct expandable *e, uint32_t only) {
  struct ordnode *n = ordset_first(&e->segs);
  while (n) {
    struct ordnode *next_seg = ordset_next(n);
    struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    int any = 0;
    if (!exp_releasable(e, s->pool, only)) { n = next_seg; continue; }
    for (struct cblock *b = s->head; b; b = b->next) {
      if (b->mapped && !b->allocated) {
        int went;
        b = exp_unmap_block(e, b, &went);
        any |= went;
      }
    }
    if (any && !s->head->next) release_segment(e, s->head);
    n = next_seg;
  }
}

void exp_destroy_segments(struct expandable *e) {
  struct ordnode *n;
  while ((n = ordset_first(&e->segs))) {
    struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    for (uint64_t i = 0; i < s->pages_end; i++)
      if (s->present[i]) unmap_pages(e, s, i, i + 1);
    dev_va_release(e->dev, s->va, s->size);
    ordset_erase(&e->segs, n);
    page_arrays_free(s, s->npages);
    free(s);
  }
}
