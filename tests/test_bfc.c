/* test_bfc.c - the rules of the `bfc` strategy (TF/XLA BFCAllocator), one test per rule,
 * driven through the allocator ops on a sim device with range tracking. Each test is
 * built so that changing the rule it names makes it fail. */
#include <stdlib.h>
#include "test.h"
#include "alloc_rig.h"
#include "../allocators/bfc.h"

/* a capped sim device and a bfc built from "k=v,..." */
static int rig_open(struct rig *r, uint64_t cap, const char *spec) { return rig_open_on(r, "bfc", 0, cap, spec); }
static int alloc(struct rig *r, uint64_t size, struct block *b) { return rig_alloc_on(r, size, 0, b); }
static uint64_t alloc_region(struct rig *r, uint64_t size, struct block *b) { return rig_grew_on(r, size, 0, b); }

TEST(bfc_bin_index_is_floor_log2_of_256_units_capped_at_20) {
  CHECK_EQ(bfc_bin_index(1), 0);
  CHECK_EQ(bfc_bin_index(256), 0);
  CHECK_EQ(bfc_bin_index(511), 0);
  CHECK_EQ(bfc_bin_index(512), 1);
  CHECK_EQ(bfc_bin_index(1023), 1);
  CHECK_EQ(bfc_bin_index(1024), 2);
  CHECK_EQ(bfc_bin_index(2 * MiB), 13);
  for (int b = 0; b < BFC_NUM_BINS; b++) {
    CHECK_EQ(bfc_bin_index(256ull << b), b);
    if (b < BFC_NUM_BINS - 1) CHECK_EQ(bfc_bin_index((256ull << (b + 1)) - 1), b);
  }
  CHECK_EQ(bfc_bin_index(256 * MiB), 20);              /* 256 << 20: the last bin */
  CHECK_EQ(bfc_bin_index(64ull << 30), 20);            /* unbounded */
  CHECK_EQ(bfc_rounded_bytes(1), 256);
  CHECK_EQ(bfc_rounded_bytes(257), 512);
}

TEST(bfc_splits_a_chunk_of_exactly_twice_the_request_but_not_less) {
  struct rig r;
  struct block b;
  /* the first 2 MiB region, asked for 1 MiB: chunk == 2x request -> split */
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 2 * MiB);
  CHECK_EQ(b.size, 1 * MiB);
  uint64_t largest, free_inside;
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 1 * MiB);
  CHECK(rig_close(&r));
  /* 1 MiB + 1 byte rounds to 1 MiB + 256: chunk < 2x and excess < 128 MiB -> whole chunk */
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 1 * MiB + 1, &b), 2 * MiB);
  CHECK_EQ(b.size, 2 * MiB);
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 0);
  CHECK_EQ(free_inside, 0);
  CHECK(rig_close(&r));
}

TEST(bfc_splits_when_the_excess_reaches_max_internal_fragmentation) {
  struct rig r;
  struct block b;
  /* one region of 328 MiB (allow_growth=0), 200 MiB asked: under 2x, excess exactly 128 MiB */
  CHECK_MSG(rig_open(&r, 0, "allow_growth=0,memory_limit=328MiB") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 200 * MiB, &b), 328 * MiB);
  CHECK_EQ(b.size, 200 * MiB);
  CHECK(rig_close(&r));
  /* 256 bytes less: the excess is under 128 MiB, the whole chunk is handed out */
  CHECK_MSG(rig_open(&r, 0, "allow_growth=0,memory_limit=343932672") == 0, "%s", r.err);   /* 328 MiB - 256 */
  CHECK_EQ(alloc_region(&r, 200 * MiB, &b), 328 * MiB - 256);
  CHECK_EQ(b.size, 328 * MiB - 256);
  CHECK(rig_close(&r));
  /* the threshold is the parameter */
  CHECK_MSG(rig_open(&r, 0, "allow_growth=0,memory_limit=343932672,max_internal_fragmentation=64MiB") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 200 * MiB, &b), 328 * MiB - 256);
  CHECK_EQ(b.size, 200 * MiB);
  CHECK(rig_close(&r));
}

TEST(bfc_coalesces_free_neighbours_on_both_sides) {
  struct rig r;
  struct block x, y, z, w;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 256 * KiB, &x), 2 * MiB);
  CHECK_EQ(alloc_region(&r, 256 * KiB, &y), 0);
  CHECK_EQ(alloc_region(&r, 256 * KiB, &z), 0);
  CHECK_EQ(y.addr, x.addr + 256 * KiB);
  CHECK_EQ(z.addr, y.addr + 256 * KiB);
  uint64_t largest, free_inside;
  r.ops->free(r.a, &x);
  r.ops->free(r.a, &z);               /* z joins the free tail: 256 KiB + 1.25 MiB */
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 1536 * KiB);
  CHECK_EQ(free_inside, 1792 * KiB);
  r.ops->free(r.a, &y);               /* y joins x before it and the tail after it */
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 2 * MiB);
  CHECK_MSG(r.ops->check(r.a, r.err) == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 2 * MiB, &w), 0);   /* the whole region again, no new memory */
  CHECK_EQ(w.addr, x.addr);
  r.ops->free(r.a, &w);
  CHECK(rig_close(&r));
}

TEST(bfc_best_fit_by_size_then_address) {
  struct rig r;
  struct block b[6], got;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  uint64_t sizes[6] = {256 * KiB, 128 * KiB, 512 * KiB, 128 * KiB, 256 * KiB, 128 * KiB};
  for (int i = 0; i < 6; i++) CHECK(alloc(&r, sizes[i], &b[i]) == 0);
  r.ops->free(r.a, &b[0]);   /* free: 256 KiB @0, 512 KiB @2, 256 KiB @4 (separated by live blocks) */
  r.ops->free(r.a, &b[2]);
  r.ops->free(r.a, &b[4]);
  CHECK(alloc(&r, 200 * KiB, &got) == 0);   /* smallest fitting size, lowest address of those */
  CHECK_EQ(got.addr, b[0].addr);
  CHECK_EQ(got.size, 256 * KiB);
  CHECK(alloc(&r, 200 * KiB, &got) == 0);
  CHECK_EQ(got.addr, b[4].addr);
  CHECK(alloc(&r, 200 * KiB, &got) == 0);   /* then the 512 KiB one, split */
  CHECK_EQ(got.addr, b[2].addr);
  CHECK_EQ(got.size, 200 * KiB);
  CHECK(rig_close(&r));
}

TEST(bfc_regions_double_from_2_MiB_and_a_large_request_resets_the_doubling) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  uint64_t regions[8];
  int n = 0;
  for (int i = 0; i < 14; i++) {     /* 1 MiB each: fills 2 + 4 + 8 MiB exactly */
    uint64_t got = alloc_region(&r, 1 * MiB, &b);
    CHECK(got != ~0ull && got != ~1ull);
    if (got) regions[n++] = got;
  }
  CHECK_EQ(n, 3);
  CHECK_EQ(regions[0], 2 * MiB);
  CHECK_EQ(regions[1], 4 * MiB);
  CHECK_EQ(regions[2], 8 * MiB);
  /* next size is 16 MiB; 40 MiB needs 64: the region is 64 MiB, and since the size was
   * raised for the request, it is not doubled again afterwards */
  CHECK_EQ(alloc_region(&r, 40 * MiB, &b), 64 * MiB);
  CHECK_EQ(b.size, 64 * MiB);       /* 64 < 2 x 40 and 24 MiB < 128 MiB: not split */
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 64 * MiB);
  for (int i = 0; i < 63; i++) CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 0);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 128 * MiB);   /* doubled after an ordinary extension */
  CHECK(rig_close(&r));
}

TEST(bfc_backs_off_by_0_9x_when_the_device_refuses) {
  struct rig r;
  struct block b;
  /* memory_limit above the cap, so the device (not BFC) refuses the 8 MiB region */
  CHECK_MSG(rig_open(&r, 11 * MiB, "memory_limit=1GiB") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 2 * MiB, &b), 2 * MiB);
  CHECK_EQ(alloc_region(&r, 4 * MiB, &b), 4 * MiB);
  /* 8 MiB, then RoundedBytes(bytes * 0.9f) until it fits in the 5 MiB left:
   * 7549952, 6795008, 6115584, 5504256, 4953856 */
  uint64_t expect = 8 * MiB;
  while (expect + 6 * MiB > 11 * MiB) expect = ((uint64_t)((float)expect * 0.9f) + 255) / 256 * 256;
  CHECK_EQ(expect, 4953856);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 4953856);
  CHECK_EQ(b.size, 1 * MiB);
  /* the back-off stops at the request: 4 MiB does not fit in the 5 MiB - 4953856 left */
  struct block big;
  CHECK_EQ(alloc(&r, 4 * MiB, &big), FB_OOM);
  CHECK_EQ(r.d.c.device_allocs, 3);
  CHECK(rig_close(&r));
}

TEST(bfc_memory_limit_defaults_to_the_cap) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 11 * MiB, "") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 2 * MiB, &b), 2 * MiB);
  CHECK_EQ(alloc_region(&r, 4 * MiB, &b), 4 * MiB);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 5 * MiB);   /* min(8 MiB, limit - pool): no refusal, no back-off */
  CHECK(rig_close(&r));
}

TEST(bfc_without_growth_takes_one_region_of_memory_limit_at_the_first_allocation) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 0, "allow_growth=0,memory_limit=64MiB") == 0, "%s", r.err);
  CHECK_EQ(r.d.c.device_allocs, 0);
  CHECK_EQ(alloc_region(&r, 1000, &b), 64 * MiB);
  CHECK_EQ(b.size, 1024);
  for (int i = 0; i < 62; i++) CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 0);
  CHECK_EQ(alloc(&r, 2 * MiB, &b), FB_OOM);          /* 2 MiB - 1 KiB left: no second region */
  CHECK_EQ(r.d.c.device_allocs, 1);
  CHECK(rig_close(&r));
  /* default memory_limit: the cap (rounded down to 256) */
  CHECK_MSG(rig_open(&r, 100 * MiB + 100, "allow_growth=0") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 100 * MiB);
  CHECK(rig_close(&r));
}

TEST(bfc_garbage_collection_frees_wholly_free_regions_and_retries) {
  for (int gc = 0; gc <= 1; gc++) {
    struct rig r;
    struct block keep, x, y, big;
    CHECK_MSG(rig_open(&r, 0, gc ? "memory_limit=12MiB,garbage_collection=1" : "memory_limit=12MiB,garbage_collection=0") == 0, "%s", r.err);
    CHECK_EQ(alloc_region(&r, 1 * MiB, &keep), 2 * MiB);    /* region 1: keeps a live block */
    CHECK_EQ(alloc_region(&r, 1 * MiB, &x), 0);
    CHECK_EQ(alloc_region(&r, 4 * MiB, &y), 4 * MiB);       /* region 2 */
    r.ops->free(r.a, &x);
    r.ops->free(r.a, &y);                                   /* region 2 wholly free, region 1 not */
    /* 8 MiB: no chunk fits and 12 - 6 MiB is too little to extend */
    int rc = alloc(&r, 8 * MiB, &big);
    struct alloc_stats st;
    r.ops->stats(r.a, &st);
    if (!gc) {
      CHECK_EQ(rc, FB_OOM);
      CHECK_EQ(r.d.reserved, 6 * MiB);
      CHECK_EQ(st.cache_flushes, 0);
    } else {
      CHECK_EQ(rc, 0);
      CHECK_EQ(r.d.c.device_frees, 1);           /* only the wholly free 4 MiB region */
      CHECK_EQ(r.d.reserved, 2 * MiB + 8 * MiB);
      CHECK_EQ(st.cache_flushes, 1);
      CHECK(dev_holds(&r.d, keep.addr, keep.size));
      r.ops->free(r.a, &big);
    }
    r.ops->free(r.a, &keep);
    CHECK(rig_close(&r));
  }
}

TEST(bfc_empty_cache_frees_free_regions_only_with_garbage_collection) {
  for (int gc = 0; gc <= 1; gc++) {
    struct rig r;
    struct block keep, y;
    CHECK_MSG(rig_open(&r, 0, gc ? "garbage_collection=1" : "garbage_collection=0") == 0, "%s", r.err);
    CHECK_EQ(alloc_region(&r, 2 * MiB, &keep), 2 * MiB);
    CHECK_EQ(alloc_region(&r, 4 * MiB, &y), 4 * MiB);
    r.ops->free(r.a, &y);
    r.ops->empty_cache(r.a);
    CHECK_EQ(r.d.reserved, gc ? 2 * MiB : 6 * MiB);
    r.ops->free(r.a, &keep);
    CHECK(rig_close(&r));
  }
}

TEST(bfc_random_churn_keeps_its_invariants) {
  struct rig r;
  enum { N = 256 };
  struct block live[N];
  int used[N] = {0};
  CHECK_MSG(rig_open(&r, 512 * MiB, "") == 0, "%s", r.err);
  uint64_t rng = 12345;
  for (int step = 0; step < 20000; step++) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    int i = (int)(rng % N);
    if (used[i]) {
      r.ops->free(r.a, &live[i]);
      used[i] = 0;
    } else {
      uint64_t size = 1 + (rng >> 20) % ((rng >> 60) < 2 ? 8 * MiB : 64 * KiB);
      int rc = alloc(&r, size, &live[i]);
      CHECK(rc == 0 || rc == FB_OOM);
      if (rc == 0) {
        CHECK(live[i].size >= size && live[i].addr % 256 == 0);
        CHECK(dev_holds(&r.d, live[i].addr, live[i].size));
        used[i] = 1;
      }
    }
    if (step % 500 == 0) CHECK_MSG(r.ops->check(r.a, r.err) == 0, "step %d: %s", step, r.err);
  }
  struct alloc_stats st;
  r.ops->stats(r.a, &st);
  CHECK_EQ(st.held, r.d.reserved);
  for (int i = 0; i < N; i++) if (used[i]) r.ops->free(r.a, &live[i]);
  CHECK(rig_close(&r));
}

/* Free chunks of one size are taken oldest region first (on the GPU cudaMalloc'd regions
 * ascend, so BFC's (size, address) order is region age; the sim's descend). */
static void equal_chunks_in_two_regions(const char *spec, int older_first) {
  struct rig r;
  struct block x, y, z, q, p, t;
  CHECK_MSG(rig_open(&r, 0, spec) == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &x), 2 * MiB);    /* region 1: x + 1 MiB free */
  CHECK_EQ(alloc_region(&r, 1 * MiB, &y), 0);          /* region 1 full */
  CHECK_EQ(alloc_region(&r, 1 * MiB, &z), 4 * MiB);    /* region 2: z + 3 MiB free */
  CHECK_EQ(alloc_region(&r, 1 * MiB, &q), 0);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &p), 0);          /* region 2: z q p + a 1 MiB tail */
  r.ops->free(r.a, &x);                                /* region 1: a 1 MiB hole, a higher address on sim */
  CHECK(x.addr > p.addr);
  CHECK_EQ(alloc(&r, 1 * MiB, &t), 0);
  CHECK_EQ(t.addr, older_first ? x.addr : p.addr + 1 * MiB);   /* region 1's hole, or region 2's tail */
  r.ops->free(r.a, &t);
  r.ops->free(r.a, &y);
  r.ops->free(r.a, &z);
  r.ops->free(r.a, &q);
  r.ops->free(r.a, &p);
  CHECK(rig_close(&r));
}

TEST(bfc_equal_free_chunks_go_to_the_older_region_first) { equal_chunks_in_two_regions("", 1); }

/* chunk_order=address: the device's raw addresses decide (on sim the newer region is lower) */
TEST(bfc_chunk_order_address_takes_the_lowest_address) { equal_chunks_in_two_regions("chunk_order=address", 0); }

/* preset=jax: memory_limit = size_t(total * XLA_PYTHON_CLIENT_MEM_FRACTION), default .75,
 * taken in one region at the first allocation (XLA_PYTHON_CLIENT_PREALLOCATE=true). */
TEST(bfc_preset_jax_preallocates_three_quarters_of_the_device_total) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 0, "preset=jax") == 0, "%s", r.err);
  CHECK_EQ(r.d.total, 85017493504ull);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 63763120128ull);   /* 0.75 of the H100's total */
  r.ops->free(r.a, &b);
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open(&r, 0, "preset=jax,mem_fraction=0.5") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &b), 85017493504ull / 2);
  r.ops->free(r.a, &b);
  CHECK(rig_close(&r));
}

/* preset=jax,allow_growth=1 (XLA_PYTHON_CLIENT_PREALLOCATE=false): regions from 2 MiB,
 * never more than 0.75 of the device in all, and no garbage collection on OOM. */
TEST(bfc_preset_jax_growth_starts_at_2MiB_under_the_fraction_without_gc) {
  struct rig r;
  struct block a, b, c;
  CHECK_MSG(rig_open(&r, 0, "preset=jax,allow_growth=1,mem_fraction=0.001") == 0, "%s", r.err);
  CHECK_EQ(alloc_region(&r, 1 * MiB, &a), 2 * MiB);
  /* limit 85017493 -> 85017344 after rounding down to 256: a 60 MiB request fits once */
  CHECK_EQ(alloc_region(&r, 60 * MiB, &b), 64 * MiB);
  r.ops->free(r.a, &b);                       /* region 2 wholly free; GC would give it back */
  CHECK_EQ(alloc(&r, 70 * MiB, &c), FB_OOM);  /* no DeallocateFreeRegions under preset=jax */
  CHECK_EQ(r.d.reserved, 66 * MiB);
  r.ops->free(r.a, &a);
  CHECK(rig_close(&r));
  CHECK(rig_open(&r, 0, "preset=xla") != 0);
  CHECK(strstr(r.err, "expected tf or jax") != NULL);
  device_close(&r.d);
}
