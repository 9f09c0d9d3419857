/* trace_pools.h - which memory pool (event.h) each address of a PyTorch snapshot belongs to
 * (issue 43). What PyTorch 2.11 records (torch/csrc/cuda/memory_snapshot.cpp):
 *
 *   - the segments list: the allocator's state when the snapshot was taken, one dict per
 *     segment (per contiguous mapped range of an expandable segment), with its address,
 *     total_size, stream and segment_pool_id: (0, 0) the general pool, else the
 *     MempoolId_t of the private pool (a CUDA graph's, a torch.cuda.MemPool) that owns it;
 *   - device_traces: the history; segment_alloc / segment_free (cudaMalloc / cudaFree of a
 *     whole segment) and segment_map / segment_unmap (pages of an expandable segment) carry
 *     address and size, allocations their address, but no trace entry carries a pool.
 *
 * The rules that recover a pool from them (each a test in tests/test_pools_reader.c):
 *
 *   R1 pools are numbered 1, 2, ... in the order their first segment appears in the
 *      segments list (by address); (0, 0) is pool 0;
 *   R2 a segment_alloc at address A is the segment the list shows at A when no
 *      segment_free at A comes after it (cudaMalloc addresses are reused once freed, so
 *      an earlier segment at A is another one): it takes that segment's pool;
 *   R3 a segment_map takes the pool of the listed segment containing its address: an
 *      expandable segment's virtual range belongs to one BlockPool (find_expandable_block
 *      makes one per pool and stream) and is never reused while it lives;
 *   R4 a segment the list does not show (freed before the snapshot, or a map into a range
 *      unmapped since) is in pool 0 unless R7 or R8 says otherwise;
 *   R5 an allocation takes the pool of the segment it falls in at that moment (the live
 *      segments as the trace's segment events leave them); an allocation outside every
 *      traced segment (the segment predates the trace) takes the pool of the listed
 *      segment containing it, else 0;
 *   R6 a release run (consecutive segment_free / segment_unmap) that frees a segment of a
 *      private pool P is evidence that P's last graph / MemPool went away before it
 *      (release_cached_blocks frees no live pool's segment): OP_POOL_RELEASE(P) comes
 *      first; a run the reader replays as empty_cache() that freed only pool P's segments
 *      is emptyCache(P) (MemPool's destructor), else the general empty_cache();
 *   R7 a release run that leaves wholly free cudaMalloc'd segments or wholly free mapped
 *      pages of pool 0 (by R2-R4) behind was not release_cached_blocks, which frees every
 *      unsplit free block of the general pools (empty_cache, and the retry: its
 *      release_available step frees only oversize blocks, and only with max_split_size
 *      set, as garbage collection only with a threshold set; runs that could be those are
 *      left alone): it was emptyCache(P) of a private pool P that went away before the
 *      snapshot (MemPool's destructor), the segments it freed were P's (a new pool number
 *      after the listed ones), and it is replayed as empty_cache(P). Taken as shown when
 *      a segment left behind is in the segments list as (0, 0) (R2, or a page inside a
 *      listed (0, 0) segment of the same stream), or when the run left at least as many segments or pages
 *      as it freed segments or mappings and the segments list shows private pools (the
 *      job uses them; a general empty_cache that freed most of what it could and left one
 *      behind stays general). Pages count only without roundup_power2_divisions (a block
 *      is then its request rounded up to 512 bytes, so which pages it covers is known);
 *   R8 a segment_alloc that the segments list shows as general (R2), made for the request
 *      that follows it on stream s, while a wholly free cudaMalloc'd segment of pool 0 of
 *      the request's kind (small: 2 MiB) on stream s, large enough, was cached: best fit
 *      would have taken that one had it been general, so it was a private pool's (of a
 *      pool gone before the snapshot: a new pool number, shared by the segments proven
 *      together and by R7's release of them). The same for a segment_map inside a listed
 *      (0, 0) segment of its stream while a mapping of pool 0 on that stream, of the
 *      request's page size, had enough consecutive wholly free pages for the request.
 *      Only with no max_split_size and no roundup_power2_divisions (best fit is then
 *      plain). A mapping R7 or R8 gives a pool gives it to the pool-0 mappings touching it
 *      on its stream (one expandable segment grows contiguously). R7 treats such pools like pool
 *      0 and gives a run's segments one pool; a run that frees segments of such a pool is
 *      replayed as an empty_cache (of that pool, or the general one when it freed general
 *      segments too), never as a retry.
 *   R7 and R8 are found in one more pass over the trace (trace_survey.c), only when it
 *   has release runs.
 *
 * Memory: the segment events of the trace (a few per segment) and the live segments. */
#ifndef FB_TRACE_POOLS_H
#define FB_TRACE_POOLS_H
#include <stddef.h>
#include <stdint.h>
#include "pickle.h"

struct tp_live { uint64_t start, end; uint32_t pool; uint64_t stream; };

struct trace_pools {
  /* the segments list of the device: sorted by address, pools numbered (R1) */
  struct tp_live *listed;
  size_t nlisted;
  int64_t *pool_ids;           /* pool number k -> its segment_pool_id (a << 32 | b), k = 1..npools; -1: R7's */
  uint32_t npools, nlisted_pools;
  /* the segment events of every device, as the pre-scan saw them */
  struct tp_sev { int64_t addr, size; uint64_t run; int device; uint8_t action; } *sev;
  size_t nsev, sev_cap;
  /* resolved for one device: the pool of each of its creating events (segment_alloc /
   * segment_map), in order; the private pools each release run freed */
  uint32_t *create_pool;
  size_t ncreate;
  struct tp_run { uint64_t run; uint32_t pool; uint8_t general; } *runs;   /* one per (run, pool); pool 0 = general */
  size_t nruns;
  /* replay state */
  struct tp_live *live;
  size_t nlive, live_cap;
  size_t create_no;
  /* R7's pass (trace_survey.c): the traced cudaMalloc'd segments with their live
   * allocations, the mapped ranges of expandable segments, the live allocations and the
   * live allocations' pages, the creating events the current run released */
  struct tp_seg { uint64_t start, end, live; size_t create; uint64_t stream; } *sv, *mv;   /* mv: live = page bytes */
  size_t nsv, sv_cap, nmv, mv_cap;
  struct tp_map { struct tp_kv { uint64_t k, v; } *e; size_t cap, n; } own, pages;
  size_t *freed;
  size_t nfreed, freed_cap;
  uint64_t sv_run, sv_create;
  int sv_in_run, device;
  uint8_t *ec;                 /* the reader's empty_cache decisions per run (R7 sets some) */
  uint64_t nruns_ec;
  int subset_release;          /* max_split_size or a GC threshold set: a retry may free a subset */
  int plain_fit;               /* no max_split_size, no roundup_power2_divisions: R8's best fit is plain */
  int plain_round;             /* no roundup_power2_divisions: a block is its request rounded to 512 (pages) */
  size_t grow_pending;         /* R8: the creating event + 1 of the segment_alloc/map just seen, 0 = none */
  uint64_t grow_start, grow_end, grow_stream;   /* ... and what it mapped (a map) */
  int grow_map;
  uint8_t *create_final;       /* per creating event: R2 matched it to a listed segment */
};

/* pre-scan: one segment event (any device); run = its release run's number (releases). 0, or -1 OOM */
int  tp_scan_segment(struct trace_pools *tp, int device, uint8_t action, int64_t addr, int64_t size, uint64_t run);
/* after the pre-scan: pools of `device` from the segments list (R1-R4). 0, or -1 OOM */
int  tp_resolve(struct trace_pools *tp, const struct pk_seg *segs, size_t nsegs, int device);
/* R7: does the pre-scan show a release run? then the caller sets
 * ec, nruns_ec and subset_release, runs tp_survey_event over every record of the device,
 * in order, and tp_survey_end */
int  tp_survey_wanted(const struct trace_pools *tp);
int  tp_survey_event(struct trace_pools *tp, const struct pk_rec *r);
int  tp_survey_end(struct trace_pools *tp);
/* R6, after R1-R5 (and R7): the pools each release run frees. 0, or -1 OOM */
int  tp_finish(struct trace_pools *tp);
/* replay: back to the trace's start */
void tp_rewind(struct trace_pools *tp);
/* replay: a segment event of the device, in order; returns the pool of what a release
 * event freed (0 for creations). -1 out of memory. */
int64_t tp_segment(struct trace_pools *tp, uint8_t action, int64_t addr, int64_t size);
/* replay: the pool of an allocation at addr now (R5) */
uint32_t tp_pool_of(const struct trace_pools *tp, uint64_t addr);
/* the (run, pool) entries of release run `run` (R6): first index and count */
size_t tp_run_pools(const struct trace_pools *tp, uint64_t run, size_t *count);
void tp_free(struct trace_pools *tp);

#endif
