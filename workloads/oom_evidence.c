/* oom_evidence.c - the limit a PyTorch snapshot ran under, from its segment events and
 * oom entries; see oom_evidence.h. */
#include "oom_evidence.h"
#include <stdlib.h>
#include <string.h>

#define MIB (1ULL << 20)

uint64_t oom_segment_size(uint64_t request, int expandable) {
  if (expandable) return (request + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);
  if (request <= MIB) return 2 * MIB;
  if (request < 10 * MIB) return 20 * MIB;
  return (request + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);
}

static int add_bound(struct oom_evidence *e, int64_t reserved, uint64_t size, int is_oom) {
  if (e->nb >= OOM_BOUNDS_MAX) return 0;   /* enough evidence: memory stays bounded on a crafted file */
  if (e->nb == e->cap) {
    uint64_t nc = e->cap ? e->cap * 2 : 16;
    struct oom_bound *nb = realloc(e->b, nc * sizeof *nb);
    if (!nb) return -1;
    e->b = nb;
    e->cap = nc;
  }
  e->b[e->nb++] = (struct oom_bound){.reserved = reserved, .size = size, .is_oom = is_oom};
  return 0;
}

int oom_evidence_grow(struct oom_evidence *e, uint64_t size) {
  int rc = 0;
  if (e->after_burst) rc = add_bound(e, e->burst_from, size, 0);   /* the try before the burst failed */
  e->in_burst = e->after_burst = 0;
  e->reserved += (int64_t)size;
  if (e->reserved > e->max_reserved) e->max_reserved = e->reserved;
  return rc;
}

void oom_evidence_release(struct oom_evidence *e, uint64_t size) {
  if (!e->in_burst) {
    e->in_burst = e->after_burst = 1;
    e->burst_from = e->reserved;
  }
  e->reserved -= (int64_t)size;
}

void oom_evidence_alloc(struct oom_evidence *e) { e->in_burst = e->after_burst = 0; }

int oom_evidence_oom(struct oom_evidence *e, uint64_t request, uint64_t stream, uint64_t device_free) {
  if (!e->has_oom) {
    e->has_oom = 1;
    e->oom_reserved = e->reserved;
    e->oom_request = request;
    e->oom_stream = stream;
    e->oom_device_free = device_free;
    e->oom_released = e->after_burst ? (uint64_t)(e->burst_from - e->reserved) : 0;
  }
  e->in_burst = e->after_burst = 0;
  return add_bound(e, e->reserved, request, 1);
}

void oom_evidence_finish(const struct oom_evidence *e, int64_t start, int expandable, int gc,
                         struct workload_info *info) {
  if (!e->has_oom) return;
  uint64_t lo = (uint64_t)(start + e->max_reserved), hi = UINT64_MAX, retries = 0;
  for (uint64_t i = 0; i < e->nb; i++) {
    const struct oom_bound *b = &e->b[i];
    if (!b->is_oom && gc) continue;   /* garbage collection releases before trying */
    uint64_t h = (uint64_t)(start + b->reserved) + (b->is_oom ? oom_segment_size(b->size, expandable) : b->size);
    /* a burst that was an empty_cache() right before an allocation looks like a retry:
     * a bound that a later growth contradicts was one of those */
    if (h <= lo) continue;
    if (h < hi) hi = h;
    retries += !b->is_oom;
  }
  info->has_oom = 1;
  info->oom_request = e->oom_request;
  info->oom_segment = oom_segment_size(e->oom_request, expandable);
  info->oom_stream = e->oom_stream;
  info->oom_device_free = e->oom_device_free;
  info->oom_reserved = (uint64_t)(start + e->oom_reserved);
  info->oom_released = e->oom_released;
  info->oom_device_limit = e->oom_device_free < info->oom_segment;
  if (hi == UINT64_MAX) hi = lo + 1;   /* only contradicted bounds: the most reserved ever is all we know */
  if (info->oom_device_limit) {        /* the device itself was full: L = reserved + free */
    uint64_t l = info->oom_reserved + e->oom_device_free;
    if (l >= lo && l < hi) { lo = l; hi = l + 1; }
  }
  info->limit_lo = lo;
  info->limit_hi = hi;
  info->limit_retries = retries;
}

void oom_evidence_free(struct oom_evidence *e) {
  free(e->b);
  memset(e, 0, sizeof *e);
}
