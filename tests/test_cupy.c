/* test_cupy.c - the rules of the `cupy` strategy (CuPy's SingleDeviceMemoryPool,
 * cupy/cuda/memory.pyx), one test per rule, driven through the allocator ops on a sim
 * device with range tracking. Each test is built so that changing its rule fails it. */
#include <stdlib.h>
#include "test.h"
#include "alloc_rig.h"
#include "../allocators/cupy.h"

static int rig_open(struct rig *r, uint64_t cap, const char *spec) { return rig_open_on(r, "cupy", 0, cap, spec); }
static int alloc(struct rig *r, uint64_t size, struct block *b) { return rig_alloc_on(r, size, 0, b); }
static uint64_t grew(struct rig *r, uint64_t size, struct block *b) { return rig_grew_on(r, size, 0, b); }

TEST(cupy_rounds_to_512_bytes_and_bins_by_exact_size) {
  CHECK_EQ(cupy_round_size(1), 512);
  CHECK_EQ(cupy_round_size(512), 512);
  CHECK_EQ(cupy_round_size(513), 1024);
  CHECK_EQ(cupy_bin_index(512), 0);
  CHECK_EQ(cupy_bin_index(1024), 1);
  CHECK_EQ(cupy_bin_index(3 * MiB), 3 * MiB / 512 - 1);
}

TEST(cupy_a_miss_mallocs_exactly_the_rounded_request) {
  struct rig r;
  struct block a, b;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(grew(&r, 1000, &a), 1024);           /* no minimum segment, no 2 MiB rounding */
  CHECK_EQ(a.size, 1024);
  CHECK_EQ(grew(&r, 3 * MiB + 1, &b), 3 * MiB + 512);
  r.ops->free(r.a, &a);
  r.ops->free(r.a, &b);
  CHECK(rig_close(&r));
}

TEST(cupy_best_fit_takes_the_smallest_free_chunk_and_always_splits) {
  struct rig r;
  struct block x[5], got, rest;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  uint64_t sizes[5] = {4 * MiB, 1 * MiB, 2 * MiB, 1 * MiB, 3 * MiB};
  for (int i = 0; i < 5; i++) CHECK(alloc(&r, sizes[i], &x[i]) == 0);
  r.ops->free(r.a, &x[0]);
  r.ops->free(r.a, &x[2]);
  r.ops->free(r.a, &x[4]);                      /* free: 4, 2, 3 MiB, each its own cudaMalloc */
  CHECK_EQ(grew(&r, 1536 * KiB, &got), 0);      /* the 2 MiB one, split: 1.5 MiB + 512 KiB free */
  CHECK_EQ(got.addr, x[2].addr);
  CHECK_EQ(got.size, 1536 * KiB);
  CHECK_EQ(grew(&r, 512 * KiB, &rest), 0);      /* the 512 KiB remainder, right after it */
  CHECK_EQ(rest.addr, x[2].addr + 1536 * KiB);
  uint64_t largest, free_inside;
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 4 * MiB);
  CHECK_EQ(free_inside, 7 * MiB);
  r.ops->free(r.a, &got);
  r.ops->free(r.a, &rest);
  r.ops->free(r.a, &x[1]);
  r.ops->free(r.a, &x[3]);
  CHECK(rig_close(&r));
}

TEST(cupy_free_merges_with_free_neighbours_on_both_sides) {
  struct rig r;
  struct block big, a, b, c, d, whole;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(alloc(&r, 4 * MiB, &big) == 0);
  r.ops->free(r.a, &big);
  CHECK(alloc(&r, 1 * MiB, &a) == 0);            /* a b c d tile the 4 MiB block */
  CHECK(alloc(&r, 1 * MiB, &b) == 0);
  CHECK(alloc(&r, 1 * MiB, &c) == 0);
  CHECK(alloc(&r, 1 * MiB, &d) == 0);
  CHECK_EQ(d.addr, big.addr + 3 * MiB);
  r.ops->free(r.a, &a);
  r.ops->free(r.a, &c);
  r.ops->free(r.a, &b);                          /* joins a before it and c after it */
  uint64_t largest, free_inside;
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 3 * MiB);
  r.ops->free(r.a, &d);
  CHECK_EQ(grew(&r, 4 * MiB, &whole), 0);        /* whole again, no new cudaMalloc */
  CHECK_EQ(whole.addr, big.addr);
  r.ops->free(r.a, &whole);
  CHECK(rig_close(&r));
}

TEST(cupy_free_all_blocks_frees_only_whole_unsplit_blocks) {
  struct rig r;
  struct block a, b, part;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(alloc(&r, 2 * MiB, &a) == 0);
  CHECK(alloc(&r, 4 * MiB, &b) == 0);
  r.ops->free(r.a, &a);
  r.ops->free(r.a, &b);
  CHECK(alloc(&r, 1 * MiB, &part) == 0);         /* best fit: the 2 MiB block, split */
  CHECK_EQ(part.addr, a.addr);
  r.ops->empty_cache(r.a);                       /* the 4 MiB block goes; the split one stays */
  CHECK_EQ(r.d.reserved, 2 * MiB);
  r.ops->free(r.a, &part);                       /* merged whole again */
  r.ops->empty_cache(r.a);
  CHECK_EQ(r.d.reserved, 0);
  CHECK(rig_close(&r));
}

TEST(cupy_limit_fails_at_once_without_freeing_cached_blocks) {
  struct rig r;
  struct block a, b;
  CHECK_MSG(rig_open(&r, 0, "limit=6MiB") == 0, "%s", r.err);
  CHECK(alloc(&r, 4 * MiB, &a) == 0);
  r.ops->free(r.a, &a);                          /* 4 MiB cached, free and whole */
  CHECK_EQ(alloc(&r, 3 * MiB, &b), 0);           /* best fit: from the cached block */
  r.ops->free(r.a, &b);
  CHECK_EQ(alloc(&r, 5 * MiB, &b), FB_OOM);      /* 4 + 5 > 6: OOM, the cache kept */
  CHECK_EQ(r.d.reserved, 4 * MiB);
  CHECK(rig_close(&r));
}

TEST(cupy_device_oom_frees_all_blocks_and_retries) {
  struct rig r;
  struct block a, b, c;
  CHECK_MSG(rig_open(&r, 8 * MiB, "") == 0, "%s", r.err);   /* the device refuses past 8 MiB */
  CHECK(alloc(&r, 4 * MiB, &a) == 0);
  CHECK(alloc(&r, 2 * MiB, &b) == 0);
  r.ops->free(r.a, &a);
  CHECK_EQ(alloc(&r, 5 * MiB, &c), 0);           /* 6 + 5 > 8: free_all_blocks drops 4, retry */
  CHECK_EQ(r.d.reserved, 7 * MiB);
  struct alloc_stats st = {0};
  r.ops->stats(r.a, &st);
  CHECK_EQ(st.cache_flushes, 1);
  struct block d;
  CHECK_EQ(alloc(&r, 2 * MiB, &d), FB_OOM);      /* nothing to free: OOM after the retries */
  r.ops->free(r.a, &b);
  r.ops->free(r.a, &c);
  CHECK(rig_close(&r));
}

TEST(cupy_each_stream_has_its_own_arena) {
  struct rig r;
  struct block a, b;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(rig_alloc_on(&r, 1 * MiB, 1, &a) == 0);
  r.ops->free(r.a, &a);
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 2, &b), 1 * MiB);   /* stream 1's free chunk is not taken */
  r.ops->free(r.a, &b);
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 1, &b), 0);         /* stream 1 gets its own back */
  CHECK_EQ(b.addr, a.addr);
  r.ops->free(r.a, &b);
  CHECK(rig_close(&r));
}

/* Which of two equal free chunks is taken must not depend on the addresses the device
 * hands out (sim and a real GPU differ there): the older cudaMalloc's chunk is taken,
 * even when the device placed a younger one below it. */
TEST(cupy_equal_chunks_taken_oldest_cudamalloc_first_whatever_the_addresses) {
  struct rig r;
  struct block x, a, b, got;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(alloc(&r, 8 * MiB, &x) == 0);
  CHECK(alloc(&r, 1 * MiB, &a) == 0);          /* cudaMalloc #2 */
  r.ops->free(r.a, &x);
  r.ops->empty_cache(r.a);                     /* #1 given back: its range is free on the device */
  CHECK(alloc(&r, 1 * MiB, &b) == 0);          /* cudaMalloc #3 */
  CHECK_MSG(b.addr < a.addr, "precondition: the sim device reuses the freed lower range (b %llx, a %llx)",
            (unsigned long long)b.addr, (unsigned long long)a.addr);
  r.ops->free(r.a, &a);
  r.ops->free(r.a, &b);
  CHECK(alloc(&r, 1 * MiB, &got) == 0);
  CHECK_EQ(got.addr, a.addr);                  /* the older cudaMalloc, though at the higher address */
  r.ops->free(r.a, &got);
  CHECK(rig_close(&r));
}
