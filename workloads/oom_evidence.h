/* oom_evidence.h - what a PyTorch snapshot's segment events say about the memory limit
 * L the job ran under (oom_evidence.c). PyTorch grows reserved memory one segment at a
 * time and refuses a growth when reserved + segment > L (set_per_process_memory_fraction)
 * or when the device has not the segment free:
 *   - every segment_alloc/segment_map that happened: L >= reserved after it
 *   - every oom: L < reserved (after its release-and-retry) + the segment it needed
 *   - a segment_alloc/map right after the allocator's own release burst (release-and-retry
 *     that then succeeded): the first try failed, so L < reserved before the burst + segment
 *   - an oom whose device_free is below the segment: the device's own limit,
 *     L = reserved + device_free
 * Fed one segment event at a time in file order; memory: one entry per retry burst. */
#ifndef FB_OOM_EVIDENCE_H
#define FB_OOM_EVIDENCE_H
#include <stdint.h>
#include "workload.h"

struct oom_bound { int64_t reserved; uint64_t size; int is_oom; };

/* upper bounds kept (24 bytes each; a real trace has a handful of OOMs): later ones are
 * not used, so a file of millions of oom events cannot grow the reader */
#define OOM_BOUNDS_MAX (1u << 16)

struct oom_evidence {
  int64_t reserved;            /* running sum of segment events (relative to the trace start) */
  int64_t max_reserved;
  int in_burst, after_burst;   /* a release burst is running / ended with no alloc since */
  int64_t burst_from;          /* reserved before the burst */
  struct oom_bound *b;         /* upper bounds, resolved in oom_evidence_finish */
  uint64_t nb, cap;
  /* the first oom */
  int has_oom;
  int64_t oom_reserved;
  uint64_t oom_request, oom_stream, oom_device_free, oom_released;
};

/* PyTorch's segment size for a (rounded) request: 2 MiB up to 1 MiB, 20 MiB below
 * 10 MiB, else rounded up to 2 MiB; with expandable segments, rounded up to 2 MiB pages */
uint64_t oom_segment_size(uint64_t request, int expandable);

/* one event each, in file order; 0, or -1 out of host memory */
int  oom_evidence_grow(struct oom_evidence *e, uint64_t size);     /* segment_alloc / segment_map */
void oom_evidence_release(struct oom_evidence *e, uint64_t size);  /* segment_free / segment_unmap */
void oom_evidence_alloc(struct oom_evidence *e);                   /* alloc: a burst before it was empty_cache() */
int  oom_evidence_oom(struct oom_evidence *e, uint64_t request, uint64_t stream, uint64_t device_free);

/* fill info's oom and limit fields; start = reserved before the first event; gc: the
 * snapshot ran with garbage_collection_threshold (its releases are not retries) */
void oom_evidence_finish(const struct oom_evidence *e, int64_t start, int expandable, int gc,
                         struct workload_info *info);
void oom_evidence_free(struct oom_evidence *e);

#endif
