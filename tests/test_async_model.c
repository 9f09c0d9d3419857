/* test_async_model.c - the rules of the driver-pool model behind `async` on sim, one test
 * per rule, each set up as the probe that measured it on an H100 (tests/probes/async_*.cu,
 * docs/async-pool.md): chunks, packing, good fit, coalescing, the chunk tail, per-stream
 * reuse until a sync, trimming, the release threshold, the cap, and a validated churn. */
#include <stdlib.h>
#include "test.h"
#include "async_model.h"
#include "replay.h"

#define MiB (1ull << 20)

struct rig {
  struct device d;
  struct amodel *m;
};

static int rig_open_with(struct rig *r, uint64_t threshold, uint64_t cap, int own_class, int recycle) {
  char err[FB_ERRLEN];
  if (device_open(&r->d, &(struct device_config){.kind = "sim"}, err)) return -1;
  r->d.track_ranges = 1;
  device_set_cap(&r->d, cap);
  struct amodel_config cfg = {.granule = AMODEL_GRANULE_DEFAULT, .subclasses = AMODEL_SUBCLASSES_DEFAULT,
                              .release_threshold = threshold, .own_class = own_class, .recycle = recycle};
  return amodel_create(&r->m, &r->d, &cfg, err);
}

/* the strategy's defaults: own_class and recycle off */
static int rig_open(struct rig *r, uint64_t threshold, uint64_t cap) { return rig_open_with(r, threshold, cap, 0, 0); }

static void rig_close(struct rig *r) {
  amodel_destroy(r->m);
  if (dev_ranges_held(&r->d)) test_fail(__FILE__, __LINE__, "ranges still held after destroy: %llu", (unsigned long long)dev_ranges_held(&r->d));
  if (r->d.reserved) test_fail(__FILE__, __LINE__, "reserved after destroy: %llu", (unsigned long long)r->d.reserved);
  device_close(&r->d);
}

static uint64_t A(struct rig *r, uint64_t size, uint64_t stream) {
  uint64_t a = 0;
  int rc = amodel_alloc(r->m, size, stream, &a);
  if (rc) test_fail(__FILE__, __LINE__, "alloc of %llu failed: %d", (unsigned long long)size, rc);
  char err[FB_ERRLEN];
  if (amodel_check(r->m, err)) test_fail(__FILE__, __LINE__, "%s", err);
  return a;
}

static void F(struct rig *r, uint64_t a, uint64_t size, uint64_t stream) {
  amodel_free(r->m, a, size, stream);
  char err[FB_ERRLEN];
  if (amodel_check(r->m, err)) test_fail(__FILE__, __LINE__, "%s", err);
}

/* probe async_grow (grow_first): reserved = the 32 MiB chunks the packed blocks reach */
TEST(async_model_reserves_whole_32mib_chunks) {
  static const uint64_t size[] = {1, 2 * MiB, 20 * MiB, 32 * MiB, 32 * MiB + 1, 100 * MiB, 4096 * MiB + 1};
  static const uint64_t first[] = {32, 32, 32, 32, 64, 128, 4128};     /* MiB, as measured */
  static const uint64_t second[] = {32, 32, 64, 64, 96, 224, 8224};
  for (int i = 0; i < 7; i++) {
    struct rig r;
    CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
    uint64_t a = A(&r, size[i], 0);
    CHECK_EQ(amodel_reserved(r.m), first[i] * MiB);
    CHECK_EQ(r.d.reserved, first[i] * MiB);          /* counted by the device layer */
    uint64_t b = A(&r, size[i], 0);
    CHECK_EQ(r.d.reserved, second[i] * MiB);
    CHECK(dev_holds(&r.d, a, size[i]) && dev_holds(&r.d, b, size[i]));
    rig_close(&r);
  }
}

/* probe async_place (place_round) and async_grow (grow_run): 512-byte units, packed,
 * across chunk boundaries */
TEST(async_model_packs_requests_at_512_bytes_across_chunks) {
  static const uint64_t size[] = {1, 512, 513, 4097, 65537, 20 * MiB};
  static const uint64_t step[] = {512, 512, 1024, 4608, 66048, 20 * MiB};
  for (int i = 0; i < 6; i++) {
    struct rig r;
    CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
    uint64_t a = A(&r, size[i], 0), b = A(&r, size[i], 0), c = A(&r, size[i], 0);
    CHECK_EQ(b - a, step[i]);
    CHECK_EQ(c - b, step[i]);
    rig_close(&r);
  }
}

/* probe async_place (place_fit, place_fit2): a request takes the lowest-addressed range of
 * the first class above its own rounded-up class */
TEST(async_model_good_fit_takes_the_first_class_that_surely_fits) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
  F(&r, A(&r, 256 * MiB, 0), 256 * MiB, 0);          /* pre-grown, as the probe */
  uint64_t a = A(&r, 4 * MiB, 0), g1 = A(&r, MiB, 0), c = A(&r, 8 * MiB, 0), g2 = A(&r, MiB, 0);
  uint64_t e = A(&r, 4 * MiB, 0), g3 = A(&r, MiB, 0);
  CHECK_EQ(c - a, 5 * MiB);
  CHECK_EQ(e - a, 14 * MiB);
  F(&r, c, 8 * MiB, 0);
  F(&r, e, 4 * MiB, 0);
  uint64_t x = A(&r, 3 * MiB, 0), y = A(&r, 4 * MiB, 0), z = A(&r, 5 * MiB, 0);
  CHECK_EQ(x - a, 14 * MiB);                         /* e, not the larger c: measured 14 */
  CHECK_EQ(y - a, 5 * MiB);                          /* then c: measured 5 */
  CHECK_EQ(z - a, 19 * MiB);                         /* c's 4 MiB left is too small: measured 19 */
  F(&r, x, 3 * MiB, 0); F(&r, y, 4 * MiB, 0); F(&r, z, 5 * MiB, 0);
  F(&r, a, 4 * MiB, 0); F(&r, g1, MiB, 0); F(&r, g2, MiB, 0); F(&r, g3, MiB, 0);
  /* place_fit2: free a(2) c(16) e(6); 5 MiB -> e (measured 20), then 1 MiB -> e's rest (25) */
  a = A(&r, 2 * MiB, 0); g1 = A(&r, MiB, 0); c = A(&r, 16 * MiB, 0); g2 = A(&r, MiB, 0);
  e = A(&r, 6 * MiB, 0); g3 = A(&r, MiB, 0);
  F(&r, a, 2 * MiB, 0); F(&r, c, 16 * MiB, 0); F(&r, e, 6 * MiB, 0);
  x = A(&r, 5 * MiB, 0);
  y = A(&r, MiB, 0);
  CHECK_EQ(x - a, 20 * MiB);
  CHECK_EQ(y - a, 25 * MiB);
  rig_close(&r);
}

/* probe async_place (place_coalesce): adjacent free ranges become one */
TEST(async_model_coalesces_adjacent_frees) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
  uint64_t a = A(&r, 4 * MiB, 0), g1 = A(&r, MiB, 0), c = A(&r, 8 * MiB, 0);
  uint64_t keep = A(&r, MiB, 0);
  (void)keep;
  F(&r, g1, MiB, 0);
  F(&r, a, 4 * MiB, 0);
  F(&r, c, 8 * MiB, 0);
  uint64_t w = A(&r, 12 * MiB, 0);                   /* fits only in the three together */
  CHECK_EQ(w, a);
  CHECK_EQ(r.d.reserved, 32 * MiB);
  rig_close(&r);
}

/* probe async_place (place_coalesce) as measured: in a pool grown to 256 MiB, 13 MiB takes
 * the 13 MiB hole (4 + 1 + 8 freed) rather than the free space beyond; without own_class
 * the class rounding (13 -> 14 MiB) skips the hole */
TEST(async_model_takes_a_hole_of_its_own_class_before_the_tail) {
  for (int own = 0; own < 2; own++) {
    struct rig r;
    CHECK(rig_open_with(&r, UINT64_MAX, 0, own, 0) == 0);
    uint64_t grown = A(&r, 256 * MiB, 0);
    F(&r, grown, 256 * MiB, 0);
    amodel_trim(r.m, UINT64_MAX);                    /* the probe synchronizes */
    uint64_t a = A(&r, 4 * MiB, 0), g1 = A(&r, MiB, 0), c = A(&r, 8 * MiB, 0), g2 = A(&r, MiB, 0);
    F(&r, a, 4 * MiB, 0);
    F(&r, g1, MiB, 0);
    F(&r, c, 8 * MiB, 0);
    uint64_t w = A(&r, 13 * MiB, 0);
    if (own) CHECK_EQ(w, a);                         /* measured: took 0 (coalesced) */
    else CHECK_EQ(w, g2 + MiB);                      /* the old rule: past the hole */
    CHECK_EQ(r.d.reserved, 256 * MiB);
    rig_close(&r);
  }
}

/* recycle (a hypothesis): a chunk to map takes a wholly free chunk's page, reserved stays */
TEST(async_model_recycle_moves_a_free_chunks_page) {
  for (int rec = 0; rec < 2; rec++) {
    struct rig r;
    CHECK(rig_open_with(&r, UINT64_MAX, 0, 0, rec) == 0);
    uint64_t a = A(&r, 64 * MiB, 0), b = A(&r, MiB, 0);
    CHECK_EQ(r.d.reserved, 96 * MiB);
    F(&r, a, 64 * MiB, 0);
    uint64_t c = A(&r, 96 * MiB, 0);                 /* does not fit the 64 MiB hole: at the top */
    CHECK_EQ(c, b + MiB);
    CHECK_EQ(r.d.reserved, rec ? 128 * MiB : 192 * MiB);
    CHECK_EQ(r.d.peak_reserved, rec ? 128 * MiB : 192 * MiB);
    F(&r, c, 96 * MiB, 0);
    F(&r, b, MiB, 0);
    rig_close(&r);
  }
}

/* probe async_grow (grow_big_then_small): the unused end of the last chunk is a range too */
TEST(async_model_the_chunk_tail_competes_in_its_class) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
  uint64_t big = A(&r, 33 * MiB, 0), b = A(&r, MiB, 0), c = A(&r, 8 * MiB, 0);
  CHECK_EQ(b - big, 33 * MiB);
  CHECK_EQ(c - big, 34 * MiB);
  CHECK_EQ(r.d.reserved, 64 * MiB);                  /* measured: 64 */
  /* the 22 MiB tail is in a lower class than a freed 33 MiB range: the tail serves */
  F(&r, big, 33 * MiB, 0);
  uint64_t d = A(&r, 2 * MiB, 0);
  CHECK_EQ(d - big, 42 * MiB);
  uint64_t e = A(&r, 21 * MiB, 0);                   /* the tail (20 MiB) is too small now */
  CHECK_EQ(e, big);
  rig_close(&r);
}

/* probe async_reuse: a free is reused at once on its stream; another stream waits for a
 * synchronization (with the GPU busy, the driver cannot know the free has happened) */
TEST(async_model_other_streams_wait_for_a_sync) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
  uint64_t x = A(&r, 8 * MiB, 1);
  F(&r, x, 8 * MiB, 1);
  uint64_t same = A(&r, 8 * MiB, 1);
  CHECK_EQ(same, x);                                 /* measured: REUSED */
  F(&r, same, 8 * MiB, 1);
  uint64_t other = A(&r, 8 * MiB, 2);
  CHECK(other != x);                                 /* measured: not reused while pending */
  F(&r, other, 8 * MiB, 2);
  amodel_trim(r.m, UINT64_MAX);                      /* a sync that releases nothing */
  CHECK_EQ(r.d.reserved, 32 * MiB);
  uint64_t after = A(&r, 8 * MiB, 2);
  CHECK_EQ(after, x);                                /* measured: REUSED after a sync */
  rig_close(&r);
}

/* PyTorch's backend frees a block other streams used (record_stream) on a unifying stream
 * nothing allocates on (CUDAMallocAsyncAllocator.cpp, free_impl): the free comes when the
 * recording streams' work is done (free_completed), and the range is then every stream's,
 * its own creation stream's included, never one stream's */
TEST(async_model_a_record_stream_free_is_every_streams) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
  uint64_t x = A(&r, 8 * MiB, 1), y = A(&r, 8 * MiB, 1);
  F(&r, x, 8 * MiB, 1 | DEV_STREAM_RECORDED);
  uint64_t other = A(&r, 8 * MiB, 2);
  CHECK_EQ(other, x);                                /* another stream takes it without a sync */
  F(&r, other, 8 * MiB, 2);
  F(&r, y, 8 * MiB, 1);                              /* a plain free stays stream 1's */
  uint64_t z = A(&r, 8 * MiB, 2);
  CHECK(z != y);
  F(&r, z, 8 * MiB, 2);
  CHECK_EQ(r.d.reserved, 32 * MiB);
  rig_close(&r);
}

/* probe async_release (trim): wholly free chunks are unmapped, highest first, down to keep */
TEST(async_model_trim_releases_wholly_free_chunks) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
  uint64_t b[16];
  for (int i = 0; i < 16; i++) b[i] = A(&r, 20 * MiB, 0);
  CHECK_EQ(r.d.reserved, 320 * MiB);
  for (int i = 0; i < 16; i++)
    if (i % 4) F(&r, b[i], 20 * MiB, 0);
  CHECK_EQ(r.d.reserved, 320 * MiB);                 /* keep all: nothing goes at a free */
  amodel_trim(r.m, 250 * MiB);
  CHECK_EQ(r.d.reserved, 224 * MiB);                 /* chunks 9, 6, 4 */
  amodel_trim(r.m, 0);
  CHECK_EQ(r.d.reserved, 192 * MiB);                 /* measured TrimTo(0): 192 */
  for (int i = 0; i < 16; i += 4) CHECK(dev_holds(&r.d, b[i], 20 * MiB));
  for (int i = 0; i < 16; i += 4) F(&r, b[i], 20 * MiB, 0);
  amodel_trim(r.m, 0);
  CHECK_EQ(r.d.reserved, 0);
  uint64_t again = A(&r, MiB, 0);                    /* grows again from the start */
  CHECK_EQ(again, b[0]);
  rig_close(&r);
}

/* the free space the model reports (ext_frag's figures) is inside what it reserves: a free
 * range over chunks a trim unmapped counts only where its chunks are mapped, so the largest
 * free extent is never above the free bytes reserved (it was: ext_frag -0.90 for
 * async:release_threshold=0 on gpt_train_short_frames.pickle) */
TEST(async_model_free_space_is_counted_where_it_is_mapped) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);
  uint64_t b[8];
  for (int i = 0; i < 8; i++) b[i] = A(&r, 32 * MiB, 0);   /* a chunk each */
  for (int i = 1; i < 7; i++) F(&r, b[i], 32 * MiB, 0);    /* one free range over six chunks */
  uint64_t largest, inside;
  amodel_query(r.m, &largest, &inside);
  CHECK_EQ(largest, 192 * MiB);
  CHECK_EQ(inside, 192 * MiB);
  amodel_trim(r.m, 224 * MiB);                              /* keeps 7 chunks: one free chunk unmapped */
  CHECK_EQ(r.d.reserved, 224 * MiB);
  amodel_query(r.m, &largest, &inside);
  CHECK_EQ(inside, 160 * MiB);
  CHECK_EQ(largest, 160 * MiB);                             /* the range's mapped run (the highest chunk went) */
  amodel_trim(r.m, 128 * MiB);                              /* 4 chunks: 0 and 7 (live), 1 and 2 (free) */
  CHECK_EQ(r.d.reserved, 128 * MiB);
  amodel_query(r.m, &largest, &inside);
  CHECK_EQ(inside, 64 * MiB);
  CHECK_EQ(largest, 64 * MiB);
  for (int i = 0; i < 8; i += 7) F(&r, b[i], 32 * MiB, 0);
  rig_close(&r);
}

/* a run of the bundled trace that trims at every free: ext_frag in [0, 1] */
TEST(async_release_threshold_zero_keeps_ext_frag_a_fraction) {
  struct run_spec s = {.allocator = "async:release_threshold=0", .trace = test_data("gpt_train_short_frames.pickle"), .seed = 1,
                       .world = 1, .quiet = 1, .device = {.kind = "sim"}};
  struct run_result res;
  run_result_init(&res);
  CHECK_EQ(replay_run(&s, &res), 0);
  CHECK_MSG(res.ext_frag >= 0 && res.ext_frag <= 1, "ext_frag %f", res.ext_frag);
}

/* probe async_release (threshold): a finite threshold releases free chunks at each free */
TEST(async_model_release_threshold_releases_at_a_free) {
  struct rig r;
  CHECK(rig_open(&r, 0, 0) == 0);
  uint64_t keep = A(&r, MiB, 0), big = A(&r, 100 * MiB, 0), mid = A(&r, 40 * MiB, 0);
  CHECK_EQ(r.d.reserved, 160 * MiB);
  F(&r, big, 100 * MiB, 0);
  CHECK_EQ(r.d.reserved, 96 * MiB);                  /* measured after a sync: 96 */
  F(&r, mid, 40 * MiB, 0);
  CHECK_EQ(r.d.reserved, 32 * MiB);                  /* all but the chunk that holds `keep` */
  F(&r, keep, MiB, 0);
  CHECK_EQ(r.d.reserved, 0);
  rig_close(&r);
  CHECK(rig_open(&r, UINT64_MAX, 0) == 0);           /* keep all: reserved never shrinks at a free */
  keep = A(&r, MiB, 0);
  big = A(&r, 100 * MiB, 0);
  F(&r, big, 100 * MiB, 0);
  F(&r, keep, MiB, 0);
  CHECK_EQ(r.d.reserved, 128 * MiB);
  rig_close(&r);
}

/* probe async_limit: a chunk that would pass the cap (or the device) is refused whole */
TEST(async_model_a_chunk_past_the_cap_is_refused) {
  struct rig r;
  CHECK(rig_open(&r, UINT64_MAX, 64 * MiB) == 0);
  uint64_t a = A(&r, 40 * MiB, 0);
  uint64_t b = 0;
  CHECK_EQ(amodel_alloc(r.m, 30 * MiB, 0, &b), FB_OOM);
  CHECK_EQ(r.d.reserved, 64 * MiB);
  char err[FB_ERRLEN];
  CHECK(amodel_check(r.m, err) == 0);
  uint64_t c = A(&r, 20 * MiB, 0);                   /* the 24 MiB left in the second chunk */
  CHECK_EQ(c - a, 40 * MiB);
  F(&r, a, 40 * MiB, 0);
  F(&r, c, 20 * MiB, 0);
  rig_close(&r);
}

/* every rule at once, on two streams with empty_cache: validated, and reserved is the
 * device's */
TEST(async_model_churn_on_two_streams_validates) {
  struct run_spec s = {.workload = "random:events=40000,live=300,max=48MiB,streams=2", .allocator = "async",
                       .trace_device = -1, .world = 1, .seed = 7, .device = {.kind = "sim"}, .validate = 1, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.completed, 1);
  CHECK(r.peak_reserved % (32 * MiB) == 0);
  CHECK(r.peak_reserved >= r.peak_requested);
  struct run_result r2;
  run_result_init(&r2);
  CHECK_EQ(replay_run(&s, &r2), 0);
  CHECK_EQ(r2.peak_reserved, r.peak_reserved);       /* deterministic */
}

TEST(async_model_size_classes) {
  CHECK_EQ(amodel_class_of(512, 4), 0);
  CHECK_EQ(amodel_class_of(1024, 4), 4);
  CHECK_EQ(amodel_class_of(3 * MiB, 4), amodel_class_of(2 * MiB, 4) + 2);
  CHECK_EQ(amodel_class_needed(3 * MiB, 4), amodel_class_of(3 * MiB, 4));        /* on a boundary */
  CHECK_EQ(amodel_class_needed(3 * MiB + 1, 4), amodel_class_of(3 * MiB, 4) + 1); /* rounded up */
  CHECK_EQ(amodel_class_needed(4 * MiB - 512, 4), amodel_class_of(4 * MiB, 4));
}
