/* test_oracle.c - the `oracle` reference row: its plan never puts two blocks with
 * overlapping lifetimes at overlapping offsets, its arena is >= the peak of requested
 * bytes and equals a hand-computed greedy-by-size plan on a tiny sequence, it reserves at
 * its first request (an OOM under too small a cap), it refuses a replay that is not the
 * planned one; and on every shared trace it needs no more than caching. Workloads here
 * are in-test arrays of events behind a minimal workload_ops. */
#include <stdlib.h>
#include "test.h"
#include "alloc_rig.h"
#include "replay.h"
#include "workload.h"

/* ---- an array of events as a workload ---- */

struct evarray { const struct event *ev; size_t n, pos; };

static int ea_next(void *st, struct event *ev, char *err) {
  (void)err;
  struct evarray *a = st;
  if (a->pos == a->n) return 0;
  *ev = a->ev[a->pos++];
  return 1;
}

static int ea_rewind(void *st, char *err) {
  (void)err;
  ((struct evarray *)st)->pos = 0;
  return 0;
}

static const struct workload_ops evarray_ops = {.name = "evarray", .help = "events from an array", .next = ea_next, .rewind = ea_rewind};

#define A(id_, sz) {.op = OP_ALLOC, .id = (id_), .size = (sz)}
#define F(id_) {.op = OP_FREE, .id = (id_)}

/* what the replay engine would do with the events: alloc for each accepted OP_ALLOC,
 * free for each OP_FREE of a live id; blocks indexed by id (ids < maxid) */
struct replayed { struct block b; int live; uint64_t born, died, req; };

static int replay_events(struct rig *r, const struct event *ev, size_t n, struct replayed *blk, uint64_t maxid, uint64_t *peak_req) {
  uint64_t live = 0;
  *peak_req = 0;
  for (size_t t = 0; t < n; t++) {
    const struct event *e = &ev[t];
    if (e->id >= maxid) return -1;
    struct replayed *x = &blk[e->id];
    if (e->op == OP_ALLOC) {
      if (!e->size || x->live) continue;   /* the engine skips these */
      if (rig_alloc_on(r, e->size, 0, &x->b)) return -1;
      x->live = 1;
      x->born = t;
      x->died = UINT64_MAX;
      x->req = e->size;
      live += e->size;
      if (live > *peak_req) *peak_req = live;
    } else if (e->op == OP_FREE && x->live) {
      r->ops->free(r->a, &x->b);
      x->live = 0;
      x->died = t;
      live -= x->req;
    }
  }
  return 0;
}

static int plan_on(struct rig *r, const struct event *ev, size_t n) {
  struct evarray a = {ev, n, 0};
  struct workload w = {.ops = &evarray_ops, .st = &a};
  if (r->ops->plan(r->a, &w, r->err)) return -1;
  return ea_rewind(&a, r->err);
}

TEST(oracle_packs_a_hand_computed_sequence_by_size) {
  /* lifetimes: a [0,2) 3 MiB, b [1,4) 1 MiB, c [3,6) 2 MiB, d [5,7) 3 MiB; peak requested 5 MiB.
   * largest first: a at 0; d at 0 (no overlap with a); c overlaps d -> 3 MiB; b overlaps a
   * [0,3) and c [3,5) -> 5 MiB. Arena 6 MiB (an optimal plan needs 5: greedy is not optimal). */
  static const struct event ev[] = {A(1, 3 * MiB), A(2, 1 * MiB), F(1), A(3, 2 * MiB), F(2), A(4, 3 * MiB), F(3), F(4)};
  struct rig r;
  CHECK_MSG(rig_open_on(&r, "oracle", 0, 0, "") == 0, "%s", r.err);
  CHECK_MSG(plan_on(&r, ev, 8) == 0, "%s", r.err);
  CHECK_EQ(r.d.reserved, 0);                       /* nothing taken before the first request */
  struct replayed blk[8] = {0};
  uint64_t peak_req;
  CHECK(replay_events(&r, ev, 8, blk, 8, &peak_req) == 0);
  CHECK_EQ(peak_req, 5 * MiB);
  CHECK_EQ(r.d.peak_reserved, 6 * MiB);            /* exactly the plan: one allocation */
  CHECK_EQ(r.d.c.device_allocs, 1);
  uint64_t base = blk[1].b.addr;
  CHECK_EQ(blk[4].b.addr, base);
  CHECK_EQ(blk[3].b.addr, base + 3 * MiB);
  CHECK_EQ(blk[2].b.addr, base + 5 * MiB);
  CHECK(rig_close(&r));
}

TEST(oracle_gap_best_takes_the_smallest_gap_that_fits) {
  /* lifetimes: p1 [0,5) 5 MiB, p2 [1,8) 4 MiB, q [2,4) 3.5 MiB, p3 [3,9) 3 MiB, x [6,7) 1 MiB.
   * largest first: p1 at 0; p2 (overlaps p1) at 5; q (p1, p2) at 9; p3 (p1, p2, q) at 12.5;
   * x overlaps only p2 [5,9) and p3 [12.5,15.5): gaps [0,5) and [9,12.5). The lowest offset
   * is 0; the smallest gap that fits is at 9. Arena 15.5 MiB, the peak itself, either way. */
  static const struct event ev[] = {A(1, 5 * MiB), A(2, 4 * MiB), A(3, 3584 * KiB), A(4, 3 * MiB), F(3), F(1),
                                    A(5, 1 * MiB), F(5), F(2), F(4)};
  for (int best = 0; best < 2; best++) {
    struct rig r;
    CHECK_MSG(rig_open_on(&r, "oracle", 0, 0, best ? "gap=best" : "") == 0, "%s", r.err);
    CHECK_MSG(plan_on(&r, ev, 10) == 0, "%s", r.err);
    struct replayed blk[8] = {0};
    uint64_t peak_req;
    CHECK(replay_events(&r, ev, 10, blk, 8, &peak_req) == 0);
    uint64_t base = blk[1].b.addr;
    CHECK_EQ(blk[2].b.addr, base + 5 * MiB);
    CHECK_EQ(blk[3].b.addr, base + 9 * MiB);
    CHECK_EQ(blk[4].b.addr, base + 12 * MiB + 512 * KiB);
    CHECK_EQ(blk[5].b.addr, best ? base + 9 * MiB : base);
    CHECK_EQ(r.d.peak_reserved, 15 * MiB + 512 * KiB);
    CHECK_EQ(peak_req, r.d.peak_reserved);
    CHECK(rig_close(&r));
  }
}

TEST(oracle_plan_never_overlaps_blocks_that_live_at_the_same_time) {
  enum { N = 3000, IDS = 400 };
  static struct event ev[N];
  uint64_t rng = 12345, live_ids[IDS];
  int nlive = 0;
  uint64_t next_id = 1;
  size_t n = 0;
  while (n < N) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    int do_free = nlive > 0 && (nlive >= 150 || rng % 3 == 0);
    if (do_free && n + 1 < N - 50) {             /* the last blocks stay live to the end */
      int k = (int)((rng >> 8) % (uint64_t)nlive);
      ev[n++] = (struct event)F(live_ids[k]);
      live_ids[k] = live_ids[--nlive];
    } else if (nlive < IDS && next_id < IDS) {
      uint64_t size = 512ull << ((rng >> 20) % 14);   /* 512 B .. 4 MiB */
      size += (rng >> 40) % size;
      if (rng % 97 == 0) size = 0;                   /* a zero-size request: skipped */
      ev[n++] = (struct event)A(next_id, size);
      if (size) live_ids[nlive++] = next_id;
      next_id++;
    } else if (nlive) {
      ev[n++] = (struct event)F(live_ids[--nlive]);
    } else break;
  }
  struct rig r;
  CHECK_MSG(rig_open_on(&r, "oracle", 0, 0, "") == 0, "%s", r.err);
  CHECK_MSG(plan_on(&r, ev, n) == 0, "%s", r.err);
  static struct replayed blk[IDS];
  memset(blk, 0, sizeof blk);
  uint64_t peak_req;
  CHECK(replay_events(&r, ev, n, blk, IDS, &peak_req) == 0);
  int pairs = 0;
  for (int i = 1; i < IDS; i++) {
    if (!blk[i].b.size) continue;
    CHECK(dev_holds(&r.d, blk[i].b.addr, blk[i].b.size));
    for (int j = i + 1; j < IDS; j++) {
      if (!blk[j].b.size) continue;
      int in_time = blk[i].born < blk[j].died && blk[j].born < blk[i].died;
      if (!in_time) continue;
      pairs++;
      int apart = blk[i].b.addr + blk[i].b.size <= blk[j].b.addr || blk[j].b.addr + blk[j].b.size <= blk[i].b.addr;
      CHECK_MSG(apart, "blocks %d and %d live together at overlapping addresses", i, j);
    }
  }
  CHECK(pairs > 1000);
  CHECK(r.d.peak_reserved >= peak_req);
  CHECK(rig_close(&r));
}

TEST(oracle_takes_its_arena_at_the_first_request_and_ooms_under_a_small_cap) {
  static const struct event ev[] = {A(1, 3 * MiB), A(2, 3 * MiB), F(1), F(2)};
  struct rig r;
  CHECK_MSG(rig_open_on(&r, "oracle", 0, 5 * MiB, "") == 0, "%s", r.err);
  CHECK_MSG(plan_on(&r, ev, 4) == 0, "%s", r.err);
  struct block b;
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &b), FB_OOM);   /* the plan needs 6 MiB */
  CHECK_EQ(r.d.reserved, 0);
  CHECK(rig_close(&r));
}

TEST(oracle_refuses_a_replay_that_is_not_the_plan) {
  static const struct event ev[] = {A(1, 3 * MiB), F(1)};
  struct rig r;
  CHECK_MSG(rig_open_on(&r, "oracle", 0, 0, "") == 0, "%s", r.err);
  CHECK_MSG(plan_on(&r, ev, 2) == 0, "%s", r.err);
  struct block b;
  CHECK(rig_alloc_on(&r, 2 * MiB, 0, &b) < 0);
  CHECK_CONTAINS(r.d.err, "plan");
  CHECK(rig_close(&r));
}

TEST(oracle_ignores_empty_cache_and_frees_nothing_before_destroy) {
  static const struct event ev[] = {A(1, 3 * MiB), F(1), A(2, 3 * MiB), F(2)};
  struct rig r;
  CHECK_MSG(rig_open_on(&r, "oracle", 0, 0, "") == 0, "%s", r.err);
  CHECK_MSG(plan_on(&r, ev, 4) == 0, "%s", r.err);
  struct block a, b;
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &a), 0);
  r.ops->free(r.a, &a);
  r.ops->empty_cache(r.a);
  CHECK_EQ(r.d.reserved, 3 * MiB);                     /* the two lifetimes share one 3 MiB place */
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &b), 0);
  CHECK_EQ(b.addr, a.addr);
  CHECK_EQ(r.d.c.device_allocs, 1);
  r.ops->free(r.a, &b);
  CHECK(rig_close(&r));
}

/* ---- on the shared traces: the bound every strategy is measured against ---- */

static const char *const traces[] = {
  "gpt_train.pickle.gz", "leaky_losses.pickle.gz", "resnet_varsize.pickle.gz", "gpt_train_short_frames.pickle",
  "leaky_losses.rmm.csv",
};

static int run_row(const char *trace, const char *allocator, struct run_result *r) {
  struct run_spec s = {.trace = trace, .allocator = allocator, .trace_device = -1, .world = 1,
                       .seed = 1, .device = {.kind = "sim"}, .quiet = 1, .validate = 1};
  run_result_init(r);
  return replay_run(&s, r);
}

TEST(oracle_needs_at_least_the_peak_and_no_more_than_caching_on_every_shared_trace) {
  for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
    struct run_result o, c;
    const char *path = test_data(traces[i]);
    CHECK_MSG(run_row(path, "oracle", &o) == 0 && o.completed, "%s: oracle: %s", traces[i], o.status);
    CHECK_MSG(run_row(path, "caching", &c) == 0 && c.completed, "%s: caching: %s", traces[i], c.status);
    CHECK_MSG(o.peak_reserved >= o.peak_requested, "%s: %llu < %llu", traces[i], (unsigned long long)o.peak_reserved,
              (unsigned long long)o.peak_requested);
    CHECK_MSG(o.peak_reserved <= c.peak_reserved, "%s: oracle %llu > caching %llu", traces[i],
              (unsigned long long)o.peak_reserved, (unsigned long long)c.peak_reserved);
    CHECK_EQ(o.device_allocs, 1);
    printf("    %-32s oracle overhead %.4f  caching %.4f\n", traces[i], o.overhead, c.overhead);
  }
}
