/* expandable_check.c - `expandable`'s consistency check for --validate: every segment's
 * block chain tiles its range; unmapped blocks are page-aligned, hold no page, sit in
 * their pool's unmapped set and never touch each other; mapped blocks lie on present
 * pages; free mapped blocks sit in their pool's best-fit set and are coalesced; the
 * pages present add up to what the strategy says it holds. */
#include <stdio.h>
#include "expandable.h"
#include "event.h"

#define FAIL(...) do { snprintf(err, FB_ERRLEN, "expandable: " __VA_ARGS__); return -1; } while (0)
#define X(v) ((unsigned long long)(v))

struct tally {
  size_t free_blocks[2], unmapped_blocks[2];
  uint64_t free_bytes[2];
  uint64_t held;
};

static int in_unmapped_set(const struct cblock *b) {
  struct ordnode *n = ordset_lower_bound(&epool_of(b)->unmapped, &b->node);
  return n && ORD_ENTRY(n, struct cblock, node) == b;
}

static int check_block(const struct cseg *s, const struct cblock *b, struct tally *t, char *err) {
  int small = s->pool->blocks.is_small;
  uint64_t first = (b->addr - s->va) / s->page, last = (b->addr + b->size - 1 - s->va) / s->page;
  if (!b->mapped) {
    if (b->allocated || b->in_pool)
      FAIL("unmapped block %#llx is allocated or in the free set", X(b->addr));
    if ((b->addr - s->va) % s->page || b->size % s->page)
      FAIL("unmapped block %#llx+%llu is not page-aligned", X(b->addr), X(b->size));
    for (uint64_t i = first; i <= last; i++)
      if (s->present[i]) FAIL("unmapped block %#llx covers mapped page %llu", X(b->addr), X(i));
    if (b->next && !b->next->mapped) FAIL("unmapped neighbours at %#llx were not merged", X(b->addr));
    if (!in_unmapped_set(b)) FAIL("unmapped block %#llx is not in its pool's unmapped set", X(b->addr));
    t->unmapped_blocks[small]++;
    return 0;
  }
  for (uint64_t i = first; i <= last; i++)
    if (!s->present[i]) FAIL("block %#llx+%llu lies on unmapped page %llu", X(b->addr), X(b->size), X(i));
  if (b->allocated == b->in_pool)
    FAIL("block %#llx: allocated=%d but in_pool=%d", X(b->addr), b->allocated, b->in_pool);
  if (b->size % CACHING_MIN_BLOCK) FAIL("block %#llx: size %llu is not a multiple of 512", X(b->addr), X(b->size));
  if (!b->allocated) {
    if (b->next && b->next->mapped && !b->next->allocated)
      FAIL("free neighbours at %#llx were not coalesced", X(b->addr));
    t->free_blocks[small]++;
    t->free_bytes[small] += b->size;
  }
  return 0;
}

static int check_segment(const struct cseg *s, struct tally *t, char *err) {
  const struct cblock *b = s->head;
  if (!b || b->prev || b->addr != s->va) FAIL("segment %#llx: its first block is not at its start", X(s->va));
  uint64_t pos = s->va, present = 0;
  for (; b; b = b->next) {
    if (b->seg != s || b->addr != pos || b->size == 0 || b->pool != &s->pool->blocks || b->stream != s->stream)
      FAIL("segment %#llx: block at %#llx breaks the chain (expected %#llx)", X(s->va), X(b->addr), X(pos));
    if (b->next && b->next->prev != b) FAIL("segment %#llx: broken prev link at %#llx", X(s->va), X(b->next->addr));
    if (check_block(s, b, t, err)) return -1;
    pos += b->size;
  }
  if (pos != s->va + s->size)
    FAIL("segment %#llx: blocks cover %llu of %llu bytes", X(s->va), X(pos - s->va), X(s->size));
  for (uint64_t i = 0; i < s->npages; i++) present += s->present[i];
  if (present != s->mapped_pages)
    FAIL("segment %#llx: %llu pages present but %llu counted", X(s->va), X(present), X(s->mapped_pages));
  t->held += present * s->page;
  return 0;
}

static int check_pool(const struct epool *p, const struct tally *t, char *err) {
  int small = p->blocks.is_small;
  const char *name = small ? "small" : "large";
  if (cpool_count(&p->blocks) != t->free_blocks[small] || p->blocks.free_bytes != t->free_bytes[small])
    FAIL("%s pool holds %zu free blocks (%llu bytes) but segments have %zu (%llu bytes)", name, cpool_count(&p->blocks),
         X(p->blocks.free_bytes), t->free_blocks[small], X(t->free_bytes[small]));
  if (p->unmapped.count != t->unmapped_blocks[small])
    FAIL("%s pool's unmapped set holds %zu blocks but segments have %zu", name, p->unmapped.count,
         t->unmapped_blocks[small]);
  size_t seen = 0;
  const struct cblock *prev = NULL;
  for (const struct cblock *b = cpool_first(&p->blocks); b; prev = b, b = cpool_next(b), seen++) {
    if (b->pool != &p->blocks || !b->in_pool || !b->mapped || cpool_stream((struct cpool *)&p->blocks, b->stream, 0) != b->cs)
      FAIL("free block %#llx is in the wrong pool's set", X(b->addr));
    if (prev && (prev->stream > b->stream ||
                 (prev->stream == b->stream && (prev->size > b->size || (prev->size == b->size && prev->addr >= b->addr)))))
      FAIL("free blocks %#llx, %#llx out of (stream, size, address) order", X(prev->addr), X(b->addr));
  }
  size_t count_now = cpool_count(&p->blocks);
  if (seen != count_now) FAIL("%s pool: %zu free blocks reachable of %zu", name, seen, count_now);
  return 0;
}

/* one pair of pools (general or private): its segments' blocks against its sets; the
 * bytes of pages present added to *held */
static int check_pair(const struct expandable *e, const struct epool *small, const struct epool *large, uint64_t *held,
                      char *err) {
  struct tally t = {{0, 0}, {0, 0}, {0, 0}, 0};
  for (struct ordnode *n = ordset_first(&e->segs); n; n = ordset_next(n)) {
    const struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    if (s->pool != small && s->pool != large) continue;
    if (s->page != s->pool->page) FAIL("segment %#llx has %llu-byte pages in a pool of %llu", X(s->va), X(s->page), X(s->pool->page));
    if (check_segment(s, &t, err)) return -1;
  }
  if (check_pool(small, &t, err) || check_pool(large, &t, err)) return -1;
  *held += t.held;
  return 0;
}

int exp_check(void *a, char *err) {
  struct expandable *e = a;
  uint64_t held = 0;
  size_t nsegs = 0, in_pools = 0;
  if (check_pair(e, &e->small, &e->large, &held, err)) return -1;
  for (uint32_t id = 1; e->pp && id <= EV_POOL_MAX; id++)
    if (e->pp[id] && check_pair(e, &e->pp[id]->small, &e->pp[id]->large, &held, err)) return -1;
  for (struct ordnode *n = ordset_first(&e->segs); n; n = ordset_next(n)) {
    const struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    uint32_t id = s->pool->blocks.owner;
    nsegs++;
    in_pools += !id ? s->pool == &e->small || s->pool == &e->large
                    : e->pp && e->pp[id] && (s->pool == &e->pp[id]->small || s->pool == &e->pp[id]->large);
  }
  if (in_pools != nsegs) FAIL("%zu of %zu segments belong to no pool the strategy holds", nsegs - in_pools, nsegs);
  if (held != e->held) FAIL("pages present hold %llu bytes but the count says %llu", X(held), X(e->held));
  return 0;
}
