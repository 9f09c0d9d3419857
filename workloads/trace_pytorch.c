/* trace_pytorch.c - the `pytorch_snapshot` trace reader: torch.cuda.memory._dump_snapshot
 * pickles (plain or gzip'd), replayed as docs/oom.md ("Replay your own PyTorch snapshot") says:
 *   alloc (addr, size, stream)   -> OP_ALLOC, id = addr
 *   free_completed (addr)        -> OP_FREE (when the memory is reusable; free_requested is earlier);
 *                                   stream = EV_FREE_RECORDED when other records came between
 *                                   the two (the block was record_stream'ed: its free waited)
 *   segment_alloc/free/map/unmap -> no event; their running sum's peak is trace_peak_reserved
 *   a run of segment_free/unmap  -> OP_EMPTY_CACHE, unless a segment_alloc, segment_map or
 *                                   oom follows before the next alloc (then it was the
 *                                   allocator's own release inside an allocation); but a
 *                                   run followed by a segment_alloc or segment_map of S bytes
 *                                   when R bytes were reserved before it, R + S <= the
 *                                   trace's peak, is an empty_cache(): that growth could not
 *                                   have failed (the limit L >= the peak, and a retry needs
 *                                   R + S > L; for a map S is at least get_allocation_size of
 *                                   the request that follows, alloc_block's test;
 *                                   torch.cuda.graph's empty_cache() before a capture is
 *                                   followed by the capture's first segment); and a run
 *                                   followed by a growth of a private pool (trace_pools.h) is
 *                                   an empty_cache(): no retry runs while a pool is the target;
 *                                   in a snapshot that lists private pools and has no oom
 *                                   entry, every such run is an empty_cache()
 *   oom (device_free, size)      -> usable memory = device_free + reserved then; and the
 *                                   failed request is replayed (OP_ALLOC of a synthetic id,
 *                                   then OP_FREE of it) so that a run that died OOMs too;
 *                                   the limit the job ran under: oom_evidence.c, from the
 *                                   segment events and oom entries
 *   snapshot, free_requested     -> nothing; other keys are counted as ignored; an action this
 *                                   reader does not know is named in info.unmodelled
 * Memory pools (trace_pools.h): an alloc carries the pool of the segment it falls in (the
 * segments list's segment_pool_id, mapped onto the history by rules R1-R5); a release run
 * that frees a private pool's segment is preceded by OP_POOL_RELEASE of that pool, and is
 * emptyCache(pool) when it freed only that pool's segments (R6).
 * open() makes one pass over the whole file (constant memory) for what info() must know
 * before the first event: allocator_settings (written after device_traces), the peak, the
 * usable memory, which devices have events, and which segment_free runs were empty_cache()
 * calls; then rewinds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pickle.h"
#include "oom_evidence.h"
#include "trace_pools.h"

#define OOM_ID_BASE TRACE_OOM_ID_BASE

/* per-device results of the pre-scan */
struct dev_scan {
  uint64_t events, ignored, unknown_actions;
  int64_t reserved, min_reserved, max_reserved;   /* running sum of segment events */
  uint64_t usable;                                /* first oom: device_free + reserved */
  int saw_map;
  /* empty_cache runs: decisions as bits, one per run */
  uint8_t *ec;
  uint64_t ec_cap, runs, undecided_from;
  int in_run;
  int64_t run_start;                              /* reserved when the current run began */
  struct { uint64_t run, create; int64_t need, start; } *fit;   /* runs a segment_alloc/map followed: need = R + S;
                                                                  create: that growth's number among the device's */
  uint64_t ncreate;                               /* segment_alloc/map events so far */
  uint64_t nfit, fit_cap;
  int fit_open;                                   /* the last fit came from a map: its request is the next alloc */
  int64_t reserved_at_oom; uint64_t device_free_at_oom; int has_oom;
  struct oom_evidence ev;                         /* the limit the job ran under */
};

struct pt {
  struct trace_src src;
  struct pk_reader pk;
  int device;
  struct workload_info info;
  uint8_t *ec;                 /* decisions of the selected device (owned) */
  uint64_t runs;
  /* replay state */
  int in_run;
  uint64_t run_no, oom_no;
  int pending_free;            /* an OP_FREE of a replayed oom request is due */
  int req_open;                /* the last record was free_requested(req_addr) */
  int64_t req_addr;
  int64_t *deferred;           /* free_requested whose free_completed is still to come */
  size_t ndeferred, deferred_cap;
  uint64_t pending_id;
  uint64_t last_offset;
  char where[320];
  /* pools (trace_pools.h) */
  struct trace_pools tp;
  uint8_t *released;           /* per pool: OP_POOL_RELEASE given and no allocation since */
  struct event *pend;          /* events due before the next record: pool releases, an empty_cache */
  uint32_t npend, ipend;       /* (room for every pool's release and one empty_cache) */
};

static int valid_int(const struct pk_rec *r, uint8_t f) { return (r->has & f) && !(r->bad & f); }

static const char *field_name(uint8_t f) {
  switch (f) {
  case F_ACTION: return "action";
  case F_ADDR: return "addr";
  case F_SIZE: return "size";
  case F_STREAM: return "stream";
  case F_DEVFREE: return "device_free";
  }
  return "?";
}

/* Check one event's fields for its action: 0, or -1 with err. */
static int check_rec(const struct trace_src *src, const struct pk_rec *r, char *err) {
  uint64_t off = r->offset;
  if (r->bad) {
    uint8_t f = r->bad & (uint8_t)-r->bad;
    return src_error_at(src, off, err, "device_traces[%d][%llu]: '%s': expected %s, got %s", r->device, (unsigned long long)r->index,
                        field_name(f), f == F_ACTION ? "a string" : "an int", pk_type_name(r->bad_type));
  }
  if (!(r->has & F_ACTION)) {
    return src_error_at(src, off, err, "device_traces[%d][%llu]: event without an 'action' key", r->device, (unsigned long long)r->index);
  }
  uint8_t need = 0;
  switch (r->action) {
  case TK_ALLOC: need = F_ADDR | F_SIZE; break;
  case TK_FREE_REQUESTED: case TK_FREE_COMPLETED: need = F_ADDR; break;
  case TK_SEGMENT_ALLOC: case TK_SEGMENT_FREE: case TK_SEGMENT_MAP: case TK_SEGMENT_UNMAP: need = F_SIZE; break;
  case TK_OOM: need = F_DEVFREE | F_SIZE; break;
  default: return 0;
  }
  for (uint8_t f = 1; f <= F_DEVFREE; f <<= 1) {
    if ((need & f) && !valid_int(r, f)) {
      return src_error_at(src, off, err, "device_traces[%d][%llu]: '%s' event without '%s' (expected an int)", r->device,
                          (unsigned long long)r->index, pk_vocab_text((enum pk_tok)r->action), field_name(f));
    }
  }
  const char *what = NULL;
  int64_t v = 0;
  if ((need & F_ADDR) && r->addr < 0) { what = "addr"; v = r->addr; }
  else if ((need & F_SIZE) && (r->size < 0 || (uint64_t)r->size > TRACE_MAX_SIZE)) { what = "size"; v = r->size; }
  else if ((need & F_DEVFREE) && (r->device_free < 0 || (uint64_t)r->device_free > TRACE_MAX_SIZE)) { what = "device_free"; v = r->device_free; }
  if (what) {
    return src_error_at(src, off, err, "device_traces[%d][%llu]: %s %lld out of range (expected 0..2^50)", r->device,
                        (unsigned long long)r->index, what, (long long)v);
  }
  return 0;
}

static int is_release(uint8_t a) { return a == TK_SEGMENT_FREE || a == TK_SEGMENT_UNMAP; }

/* make room for bit i (zero-filled) */
static int grow_bits(uint8_t **bits, uint64_t *cap_bytes, uint64_t i) {
  if (i / 8 < *cap_bytes) return 0;
  uint64_t nc = *cap_bytes ? *cap_bytes * 2 : 8;
  while (i / 8 >= nc) nc *= 2;
  uint8_t *nb = realloc(*bits, nc);
  if (!nb) return -1;
  memset(nb + *cap_bytes, 0, nc - *cap_bytes);
  *bits = nb;
  *cap_bytes = nc;
  return 0;
}

static int get_bit(const uint8_t *bits, uint64_t i) { return (bits[i / 8] >> (i & 7)) & 1; }

/* decide the undecided runs of d: empty_cache() calls (1) or an allocation's own release (0) */
static void decide(struct dev_scan *d, int ec) {
  for (uint64_t i = d->undecided_from; i < d->runs; i++)
    if (ec) d->ec[i / 8] |= (uint8_t)(1u << (i & 7));
  d->undecided_from = d->runs;
}

/* the running sum of segment events stays within +-2^60 bytes (a device is under 2^48):
 * beyond, the file is corrupt, and the sums below could overflow */
#define RESERVED_MAX ((int64_t)1 << 60)
#define SCAN_RANGE (-2)

/* 0, -1 out of memory, SCAN_RANGE: reserved out of +-RESERVED_MAX */
static int scan_rec(struct dev_scan *d, const struct pk_rec *r) {
  d->events++;
  d->ignored += r->ignored_keys;
  uint8_t a = r->action;
  if (is_release(a)) {
    if (!d->in_run) {
      if (grow_bits(&d->ec, &d->ec_cap, d->runs)) return -1;
      d->runs++;
      d->in_run = 1;
      d->run_start = d->reserved;
    }
    d->reserved -= r->size;   /* |reserved| <= RESERVED_MAX + 2^50: no overflow */
    if (d->reserved < -RESERVED_MAX) return SCAN_RANGE;
    if (d->reserved < d->min_reserved) d->min_reserved = d->reserved;
    oom_evidence_release(&d->ev, (uint64_t)r->size);
    return 0;
  }
  d->in_run = 0;
  switch (a) {
  case TK_ALLOC:
    if (d->fit_open) {   /* a growth failed on alloc_block's test: held + get_allocation_size(request) > L */
      uint64_t rounded = r->size < 512 ? 512 : ((uint64_t)r->size + 511) & ~511ull;
      uint64_t as = rounded <= (1ull << 20) ? 2ull << 20 : rounded < (10ull << 20) ? 20ull << 20 : (rounded + (2ull << 20) - 1) & ~((2ull << 20) - 1);
      int64_t need = d->fit[d->nfit - 1].start + (int64_t)as;
      if (need > d->fit[d->nfit - 1].need) d->fit[d->nfit - 1].need = need;
      d->fit_open = 0;
    }
    decide(d, 1);
    oom_evidence_alloc(&d->ev);
    break;
  case TK_SEGMENT_ALLOC: case TK_SEGMENT_MAP:
    if (d->undecided_from < d->runs) {   /* R + S: checked against the peak at the end */
      if (d->nfit == d->fit_cap) {
        uint64_t nc = d->fit_cap ? 2 * d->fit_cap : 16;
        void *nf = realloc(d->fit, nc * sizeof *d->fit);
        if (!nf) return -1;
        d->fit = nf;
        d->fit_cap = nc;
      }
      d->fit[d->nfit].run = d->runs - 1;
      d->fit[d->nfit].create = d->ncreate;
      d->fit[d->nfit].start = d->run_start;
      d->fit[d->nfit++].need = d->run_start + r->size;
      d->fit_open = a == TK_SEGMENT_MAP;
    }
    decide(d, 0);
    d->ncreate++;
    d->saw_map |= a == TK_SEGMENT_MAP;
    d->reserved += r->size;
    if (d->reserved > RESERVED_MAX) return SCAN_RANGE;
    if (d->reserved > d->max_reserved) d->max_reserved = d->reserved;
    return oom_evidence_grow(&d->ev, (uint64_t)r->size);
  case TK_OOM:
    decide(d, 0);
    if (!d->has_oom) {
      d->has_oom = 1;
      d->reserved_at_oom = d->reserved;
      d->device_free_at_oom = (uint64_t)r->device_free;
    }
    return oom_evidence_oom(&d->ev, (uint64_t)r->size, r->has & F_STREAM ? (uint64_t)r->stream : 0, (uint64_t)r->device_free);
  case TK_FREE_REQUESTED: case TK_FREE_COMPLETED: case TK_SNAPSHOT: break;
  case TK_USER_DEFINED: d->ignored++; break;   /* an annotation: no allocator action */
  default: d->ignored++; d->unknown_actions++;  /* actions we do not know */
  }
  return 0;
}

static void settings_string(const struct pk_settings *s, char *out, size_t len) {
  size_t k = 0;
  out[0] = 0;
  if (s->has_max_split_size && s->max_split_size > 0 && (uint64_t)s->max_split_size < (1ULL << 62))
    k += (size_t)snprintf(out + k, len - k, "max_split_size_mb=%llu", (unsigned long long)(s->max_split_size >> 20));
  if (s->has_gc_threshold && s->gc_threshold > 0 && k < len)
    k += (size_t)snprintf(out + k, len - k, "%sgarbage_collection_threshold=%g", k ? "," : "", s->gc_threshold);
  int any = 0;
  for (int i = 0; i < 16; i++) any |= s->has_roundup && s->roundup[i] != 0;
  if (any && k < len) {
    k += (size_t)snprintf(out + k, len - k, "%sroundup_power2_divisions=[", k ? "," : "");
    for (int i = 0; i < 16 && k < len; i++)
      k += (size_t)snprintf(out + k, len - k, "%s%llu:%lld", i ? "," : "", 1ULL << i, (long long)s->roundup[i]);
    if (k < len) snprintf(out + k, len - k, "]");
  }
}

/* the pre-scan: every event of every device, then what info() says */
static int prescan(struct pt *t, int want_device, char *err) {
  struct dev_scan *dev = calloc(PK_MAX_DEVICES, sizeof *dev);
  if (!dev) {
    snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name);
    return -1;
  }
  int rc;
  struct pk_rec r;
  uint64_t mask = 0;
  while ((rc = pk_next(&t->pk, &r, err)) > 0) {
    if (check_rec(&t->src, &r, err)) { rc = -1; break; }
    mask |= 1ULL << r.device;
    int sr = scan_rec(&dev[r.device], &r);
    if (!sr && r.action >= TK_SEGMENT_ALLOC && r.action <= TK_SEGMENT_UNMAP &&
        tp_scan_segment(&t->tp, r.device, r.action, r.addr, r.size, dev[r.device].runs - 1))
      sr = -1;
    if (sr == SCAN_RANGE) {
      rc = src_error_at(&t->src, r.offset, err, "device_traces[%d][%llu]: segment events sum to %lld bytes reserved (expected within 2^60)",
                        r.device, (unsigned long long)r.index, (long long)dev[r.device].reserved);
      break;
    }
    if ((r.has & F_STREAM) && src_stream(&t->src, (uint64_t)r.stream)) {
      rc = src_error_at(&t->src, r.offset, err, "device_traces[%d][%llu]: stream %lld: more than %d distinct streams (the bound on "
                        "streams in a trace)", r.device, (unsigned long long)r.index, (long long)r.stream, TRACE_STREAMS_MAX);
      break;
    }
    if (sr) {
      snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name);
      rc = -1;
      break;
    }
  }
  if (rc == 0 && src_drain(&t->src, err)) rc = -1;   /* past STOP: the gzip trailer, checked */
  if (rc == 0) {
    int d = want_device;
    if (d == -1) d = mask ? __builtin_ctzll(mask) : 0;
    if (d < 0 || d >= PK_MAX_DEVICES || (mask && !(mask & (1ULL << d)))) {
      char list[200] = "";
      for (int i = 0, k = 0; i < PK_MAX_DEVICES && k < (int)sizeof list - 8; i++)
        if (mask & (1ULL << i)) k += snprintf(list + k, sizeof list - (size_t)k, "%s%d", k ? "," : "", i);
      int k = snprintf(err, FB_ERRLEN, "%s: device %d has no events in this snapshot", t->src.name, want_device);
      if (k > 0 && k < FB_ERRLEN)
        snprintf(err + k, (size_t)(FB_ERRLEN - k), " (devices with events: %s)", mask ? list : "none");
      rc = -1;
    } else {
      struct dev_scan *s = &dev[d];
      decide(s, 1);                             /* runs still open at the end: empty_cache() */
      for (uint64_t i = 0; i < s->nfit; i++)    /* that cudaMalloc could not have failed */
        if (s->fit[i].need <= s->max_reserved) s->ec[s->fit[i].run / 8] |= (uint8_t)(1u << (s->fit[i].run & 7));
      /* reserved before the first event: at least what the trace releases beyond what it
       * took; for a trace recorded from mid-run, the segments list (reserved at dump time)
       * minus the trace's net change, when that is larger */
      int64_t start = s->min_reserved < 0 ? -s->min_reserved : 0;
      int recorded_expandable = t->pk.settings.has_expandable ? t->pk.settings.expandable : s->saw_map;
      if (t->pk.segs_seen && !recorded_expandable && start > 0 &&
          (int64_t)t->pk.seg_total[d] - s->reserved > start)
        start = (int64_t)t->pk.seg_total[d] - s->reserved;
      t->device = d;
      t->info.trace_peak_reserved = (uint64_t)(start + s->max_reserved);
      if (s->has_oom) t->info.usable_bytes = s->device_free_at_oom + (uint64_t)(start + s->reserved_at_oom);
      oom_evidence_finish(&s->ev, start, recorded_expandable,
                          t->pk.settings.has_gc_threshold && t->pk.settings.gc_threshold > 0, &t->info);
      settings_string(&t->pk.settings, t->info.allocator_settings, sizeof t->info.allocator_settings);
      snprintf(t->info.recorded_allocator, sizeof t->info.recorded_allocator, "%s",
               recorded_expandable ? "expandable" : "caching");
      t->info.device_mask = mask;
      t->info.ignored = s->ignored + t->pk.ignored_top;
      if (s->unknown_actions) {
        if (t->pk.unknown_action[0])
          snprintf(t->info.unmodelled, sizeof t->info.unmodelled, "%llu trace entries with actions this reader does not know "
                   "(e.g. '%s'): replayed as nothing", (unsigned long long)s->unknown_actions, t->pk.unknown_action);
        else
          snprintf(t->info.unmodelled, sizeof t->info.unmodelled, "%llu trace entries with actions this reader does not know: "
                   "replayed as nothing", (unsigned long long)s->unknown_actions);
      }
      if (t->pk.bad_pool_ids) {   /* a pool kind this reader cannot place */
        size_t k = strlen(t->info.unmodelled);
        snprintf(t->info.unmodelled + k, sizeof t->info.unmodelled - k, "%s%llu segments with a segment_pool_id that is not "
                 "a pair of ints (a pool this reader cannot name): their addresses replayed in the general pool", k ? "; " : "",
                 (unsigned long long)t->pk.bad_pool_ids);
      }
      if (tp_resolve(&t->tp, t->pk.segs, t->pk.nsegs, d)) {
        snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name);
        rc = -1;
      } else if (t->tp.npools > EV_POOL_MAX) {
        snprintf(err, FB_ERRLEN, "%s: %u private memory pools in the segments list (at most %d)", t->src.name,
                 t->tp.npools, EV_POOL_MAX);
        rc = -1;
      } else {
        /* a growth into a private pool is never a retry's (no release_cached_blocks while a
         * capture or MemPool context is underway): the run before it was empty_cache(); and
         * in a job that uses private pools and never ran out of memory, a run is taken as
         * empty_cache() whatever follows it (torch.cuda.graph empties the cache before each
         * capture, at what may be the peak so far): the uncapped replay of a retry makes the
         * same release, the replay of an empty_cache() taken for a retry would make none */
        for (uint64_t i = 0; i < s->nfit; i++)
          if ((s->fit[i].create < t->tp.ncreate && t->tp.create_pool[s->fit[i].create]) ||
              (t->tp.nlisted_pools && !s->has_oom))
            s->ec[s->fit[i].run / 8] |= (uint8_t)(1u << (s->fit[i].run & 7));
      }

      t->info.holds_whole_trace = 0;
      t->ec = s->ec;
      t->runs = s->runs;
      s->ec = NULL;
    }
  }
  for (int i = 0; i < PK_MAX_DEVICES; i++) { free(dev[i].ec); free(dev[i].fit); oom_evidence_free(&dev[i].ev); }
  free(dev);
  return rc < 0 ? -1 : 0;
}

/* a snapshot that ended in an OOM: one more pass, keeping stack frames, for the stack of
 * the first failing request (the ordinary passes drop frames to keep constant memory) */
static int oom_frames_pass(struct pt *t, char *err) {
  if (pk_rewind(&t->pk, err) || pk_frames_begin(&t->pk, err)) return -1;
  struct pk_rec r;
  int rc;
  while ((rc = pk_next(&t->pk, &r, err)) > 0) {
    if (r.device != t->device || r.action != TK_OOM) continue;
    snprintf(t->info.oom_frames, sizeof t->info.oom_frames, "%s", pk_oom_frames(&t->pk, r.frames_ref));
    break;
  }
  pk_frames_end(&t->pk);
  return rc < 0 ? -1 : 0;
}

/* the pools' last rules: R7's and R8's pass over the device's records when the trace has
 * release runs (trace_pools.h, trace_survey.c), then R6 */
static int pools_pass(struct pt *t, char *err) {
  if (tp_survey_wanted(&t->tp)) {
    t->tp.ec = t->ec;
    t->tp.nruns_ec = t->runs;
    t->tp.subset_release = (t->pk.settings.has_max_split_size && t->pk.settings.max_split_size > 0 &&
                            (uint64_t)t->pk.settings.max_split_size < (1ULL << 62)) ||
                           (t->pk.settings.has_gc_threshold && t->pk.settings.gc_threshold > 0);
    int roundup = 0;
    for (int i = 0; i < 16; i++) roundup |= t->pk.settings.has_roundup && t->pk.settings.roundup[i] > 1;
    t->tp.plain_round = !roundup;
    t->tp.plain_fit = !roundup && !(t->pk.settings.has_max_split_size && t->pk.settings.max_split_size > 0 &&
                                    (uint64_t)t->pk.settings.max_split_size < (1ULL << 62));
    if (pk_rewind(&t->pk, err)) return -1;
    struct pk_rec r;
    int rc;
    while ((rc = pk_next(&t->pk, &r, err)) > 0)
      if (r.device == t->device && tp_survey_event(&t->tp, &r)) { rc = -2; break; }
    if (rc == 0 && tp_survey_end(&t->tp)) rc = -2;
    if (rc == -2) snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name);
    if (rc < 0) return -1;
  }
  if (tp_finish(&t->tp) || !(t->released = calloc(t->tp.npools + 1, 1)) ||
      !(t->pend = calloc(t->tp.npools + 1, sizeof *t->pend))) {
    snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name);
    return -1;
  }
  t->info.pools = t->tp.npools;
  return 0;
}

static void pt_close(void *st) {
  struct pt *t = st;
  if (!t) return;
  pk_close(&t->pk);
  src_close(&t->src);
  free(t->ec);
  free(t->deferred);
  free(t->released);
  free(t->pend);
  tp_free(&t->tp);
  free(t);
}

static void reset_replay(struct pt *t) {
  t->in_run = 0;
  t->run_no = t->oom_no = 0;
  t->pending_free = 0;
  t->req_open = 0;
  t->ndeferred = 0;
  t->npend = t->ipend = 0;
  tp_rewind(&t->tp);
  if (t->released) memset(t->released, 0, t->tp.npools + 1);
}

/* a free_requested not followed at once by its free_completed: the free waits for other
 * streams (record_stream); 0, or -1 out of memory */
static int defer_push(struct pt *t, int64_t addr) {
  if (t->ndeferred == t->deferred_cap) {
    size_t cap = t->deferred_cap ? 2 * t->deferred_cap : 64;
    int64_t *d = realloc(t->deferred, cap * sizeof *d);
    if (!d) return -1;
    t->deferred = d;
    t->deferred_cap = cap;
  }
  t->deferred[t->ndeferred++] = addr;
  return 0;
}

static int defer_take(struct pt *t, int64_t addr) {
  for (size_t i = t->ndeferred; i-- > 0;)
    if (t->deferred[i] == addr) { t->deferred[i] = t->deferred[--t->ndeferred]; return 1; }
  return 0;
}

int pytorch_snapshot_open_src(void **st, struct trace_src *src, const struct workload_ctx *ctx, char *err) {
  struct pt *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, FB_ERRLEN, "%s: out of memory", src->name);
    src_close(src);
    return -1;
  }
  t->src = *src;
  if (pk_open(&t->pk, &t->src, err) || prescan(t, ctx->trace_device, err) || pools_pass(t, err) ||
      (t->info.has_oom && oom_frames_pass(t, err)) || pk_rewind(&t->pk, err)) {
    pt_close(t);
    return -1;
  }
  reset_replay(t);
  *st = t;
  return 0;
}

static int pt_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  (void)p;
  if (ctx->src) return pytorch_snapshot_open_src(st, ctx->src, ctx, err);   /* opened once by the caller (trace_mem.c) */
  struct trace_src src;
  if (src_open_path(&src, ctx->path, err)) return -1;
  return pytorch_snapshot_open_src(st, &src, ctx, err);
}

/* R6: before release run `run`: the private pools it freed are released first; an
 * empty_cache() run that freed only pool P's segments is emptyCache(P) */
static void run_events(struct pt *t, uint64_t run, int ec) {
  size_t n = 0, first = tp_run_pools(&t->tp, run, &n);
  uint32_t only = 0;
  int general = 0;
  for (size_t i = first; i < first + n; i++) {
    uint32_t p = t->tp.runs[i].pool;
    if (!p) { general = 1; continue; }
    only = only ? UINT32_MAX : p;
    if (!t->released[p] && t->npend < t->tp.npools) {
      t->released[p] = 1;
      t->pend[t->npend++] = (struct event){.op = OP_POOL_RELEASE, .pool = p, .device = t->device};
    }
  }
  if (ec)
    t->pend[t->npend++] = (struct event){.op = OP_EMPTY_CACHE, .device = t->device,
                                         .pool = general || only == UINT32_MAX ? 0 : only};
}

static int pt_next(void *st, struct event *ev, char *err) {
  struct pt *t = st;
  if (t->ipend < t->npend) {
    *ev = t->pend[t->ipend++];
    if (t->ipend == t->npend) t->ipend = t->npend = 0;
    return 1;
  }
  if (t->pending_free) {
    t->pending_free = 0;
    *ev = (struct event){.op = OP_FREE, .id = t->pending_id, .device = t->device};
    return 1;
  }
  struct pk_rec r;
  int rc;
  while ((rc = pk_next(&t->pk, &r, err)) > 0) {
    if (r.device != t->device) continue;
    if (check_rec(&t->src, &r, err)) return -1;
    t->last_offset = r.offset;
    if (t->req_open && !(r.action == TK_FREE_COMPLETED && r.addr == t->req_addr)) {
      t->req_open = 0;
      if (defer_push(t, t->req_addr)) { snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name); return -1; }
    }
    int pools = t->tp.npools > 0;
    if (is_release(r.action)) {
      if (pools && tp_segment(&t->tp, r.action, r.addr, r.size) < 0) { snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name); return -1; }
      if (t->in_run) continue;
      t->in_run = 1;
      uint64_t run = t->run_no++;
      int ec = run < t->runs && get_bit(t->ec, run);
      if (pools) {
        run_events(t, run, ec);
        if (t->npend) return pt_next(st, ev, err);
        continue;
      }
      if (ec) {
        *ev = (struct event){.op = OP_EMPTY_CACHE, .device = t->device};
        return 1;
      }
      continue;
    }
    t->in_run = 0;
    switch (r.action) {
    case TK_ALLOC:
      *ev = (struct event){.op = OP_ALLOC, .id = (uint64_t)r.addr, .size = (uint64_t)r.size,
                           .stream = (uint64_t)r.stream, .device = t->device};
      if (pools && (ev->pool = tp_pool_of(&t->tp, (uint64_t)r.addr))) t->released[ev->pool] = 0;
      return 1;
    case TK_SEGMENT_ALLOC: case TK_SEGMENT_MAP:
      if (pools && tp_segment(&t->tp, r.action, r.addr, r.size) < 0) { snprintf(err, FB_ERRLEN, "%s: out of memory", t->src.name); return -1; }
      continue;
    case TK_FREE_REQUESTED:
      t->req_open = 1;
      t->req_addr = r.addr;
      continue;
    case TK_FREE_COMPLETED: {
      int waited = !t->req_open && t->ndeferred && defer_take(t, r.addr);
      t->req_open = 0;
      *ev = (struct event){.op = OP_FREE, .id = (uint64_t)r.addr, .stream = waited ? EV_FREE_RECORDED : 0, .device = t->device};
      return 1;
    }
    case TK_OOM:
      t->pending_id = OOM_ID_BASE | t->oom_no++;
      t->pending_free = 1;
      *ev = (struct event){.op = OP_ALLOC, .id = t->pending_id, .size = (uint64_t)r.size,
                           .stream = (uint64_t)r.stream, .device = t->device};
      return 1;
    default:
      continue;
    }
  }
  return rc;
}

static int pt_rewind(void *st, char *err) {
  struct pt *t = st;
  reset_replay(t);
  return pk_rewind(&t->pk, err);
}

static void pt_info(void *st, struct workload_info *out) { *out = ((struct pt *)st)->info; }

static const char *pt_where(void *st) {
  struct pt *t = st;
  snprintf(t->where, sizeof t->where, "%s:byte %llu", t->src.name, (unsigned long long)t->last_offset);
  return t->where;
}

static int pt_probe(const unsigned char *head, size_t n) {
  return n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}

const struct workload_ops pytorch_snapshot_workload = {
  .name = "pytorch_snapshot",
  .help = "PyTorch memory snapshot (torch.cuda.memory._dump_snapshot; pickle, plain or gzip'd): "
          "frees at free_completed, EMPTY_CACHE from segment_free runs, allocator_settings adopted",
  .params = NULL,
  .is_trace = 1,
  .probe = pt_probe,
  .open = pt_open,
  .next = pt_next,
  .rewind = pt_rewind,
  .info = pt_info,
  .where = pt_where,
  .close = pt_close,
};
