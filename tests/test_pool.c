/* test_pool.c - the rules of the `pool` strategy (RAPIDS RMM pool_memory_resource), one
 * test per rule, driven through the allocator ops on a sim device with range tracking.
 * Each test is built so that changing the rule it names makes it fail. The sim hands
 * out addresses downward: a later upstream block ends where the earlier one starts. */
#include "test.h"
#include "alloc_rig.h"

static int rig_open(struct rig *r, uint64_t cap, const char *spec) { return rig_open_on(r, "pool", 0, cap, spec); }

TEST(pool_rounds_sizes_up_to_256_bytes) {
  struct rig r;
  struct block a, b, c;
  CHECK_MSG(rig_open(&r, 0, "initial=1MiB") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 1, 0, &a), 0);
  CHECK_EQ(rig_grew_on(&r, 257, 0, &b), 0);
  CHECK_EQ(rig_grew_on(&r, 256, 0, &c), 0);
  CHECK_EQ(a.size, 256);
  CHECK_EQ(b.size, 512);
  CHECK_EQ(c.size, 256);
  CHECK_EQ(b.addr, a.addr + 256);      /* carved back to back from the initial block */
  CHECK_EQ(c.addr, b.addr + 512);
  CHECK(a.addr % 256 == 0);
  CHECK(rig_close(&r));
}

TEST(pool_grows_by_doubling_without_a_maximum) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  uint64_t grew[8];
  int n = 0;
  for (int i = 0; i < 16; i++) {         /* 1 MiB each: growth max(request, pool size) */
    uint64_t g = rig_grew_on(&r, 1 * MiB, 0, &b);
    CHECK(g != ~0ull && g != ~1ull);
    if (g) grew[n++] = g;
  }
  CHECK_EQ(n, 5);
  CHECK_EQ(grew[0], 1 * MiB);
  CHECK_EQ(grew[1], 1 * MiB);
  CHECK_EQ(grew[2], 2 * MiB);
  CHECK_EQ(grew[3], 4 * MiB);
  CHECK_EQ(grew[4], 8 * MiB);
  CHECK_EQ(rig_grew_on(&r, 40 * MiB, 0, &b), 40 * MiB);   /* a request above the pool size: the request */
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 0, &b), 56 * MiB);
  CHECK(rig_close(&r));
}

TEST(pool_grows_halfway_to_the_maximum) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 0, "maximum=64MiB") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 0, &b), 32 * MiB);   /* max(1 MiB, 64/2) */
  CHECK_EQ(rig_grew_on(&r, 31 * MiB, 0, &b), 0);
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 0, &b), 16 * MiB);   /* max(1 MiB, 32/2) */
  CHECK_EQ(rig_grew_on(&r, 15 * MiB, 0, &b), 0);
  CHECK_EQ(rig_grew_on(&r, 10 * MiB, 0, &b), 10 * MiB);  /* max(10 MiB, 16/2) */
  uint64_t calls = r.d.c.device_allocs;
  CHECK_EQ(rig_alloc_on(&r, 7 * MiB, 0, &b), FB_OOM);    /* 6 MiB left under the maximum: no device call */
  CHECK_EQ(r.d.c.device_allocs, calls);
  CHECK(rig_close(&r));
}

TEST(pool_halves_the_growth_down_to_the_request_when_the_device_refuses) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 12 * MiB, "") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &b), 4 * MiB);
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &b), 4 * MiB);
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 0, &b), 4 * MiB);    /* 8 MiB refused, then 4 */
  uint64_t calls = r.d.c.device_allocs;
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &b), FB_OOM);    /* 12, 6, 4 MiB all refused: OOM */
  CHECK_EQ(r.d.c.device_allocs, calls);
  CHECK(rig_close(&r));
  /* the last try is the request itself: 8 refused, 4 refused, max(3, 2) = 3 MiB taken */
  CHECK_MSG(rig_open(&r, 8 * MiB + 3584 * KiB, "") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &b), 4 * MiB);
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &b), 4 * MiB);
  CHECK_EQ(rig_grew_on(&r, 3 * MiB, 0, &b), 3 * MiB);
  CHECK(rig_close(&r));
}

TEST(pool_initial_percent_is_of_the_device_total_aligned_down_to_256) {
  struct rig r;
  struct block b;
  CHECK_MSG(rig_open(&r, 0, "initial=50%") == 0, "%s", r.err);
  CHECK_EQ(r.d.c.device_allocs, 1);
  CHECK_EQ(r.d.reserved, SIM_TOTAL_DEFAULT / 2);
  CHECK_EQ(rig_grew_on(&r, 1ull << 30, 0, &b), 0);
  CHECK_EQ(rig_grew_on(&r, 1ull << 30, 5, &b), 0);       /* another stream takes from the initial block */
  CHECK(rig_close(&r));
  /* the initial block is the default stream's: its own frees coalesce back into it */
  CHECK_MSG(rig_open(&r, 0, "initial=4MiB") == 0, "%s", r.err);
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &b) == 0);
  r.ops->free(r.a, &b);
  uint64_t largest, free_inside;
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 4 * MiB);
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open_on(&r, "pool", 1000000007, 0, "initial=50%") == 0, "%s", r.err);
  CHECK_EQ(r.d.reserved, 500000000);                     /* 500000003 aligned down to 256 */
  CHECK(rig_close(&r));
  /* an initial pool the cap refuses is an OOM at the first allocation, not an error */
  CHECK_MSG(rig_open(&r, SIM_TOTAL_DEFAULT / 10 * 3, "initial=50%") == 0, "%s", r.err);
  CHECK_EQ(r.d.reserved, 0);
  CHECK_EQ(rig_alloc_on(&r, 1 * MiB, 0, &b), FB_OOM);
  CHECK(rig_close(&r));
}

TEST(pool_takes_from_another_streams_list_before_growing) {
  struct rig r;
  struct block x, y, z, w;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 8 * MiB, 1, &x), 8 * MiB);
  r.ops->free(r.a, &x);                                  /* stream 1's list: 8 MiB */
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 2, &y), 0);          /* stream 2 takes it */
  CHECK_EQ(y.addr, x.addr);
  CHECK_EQ(rig_grew_on(&r, 7 * MiB, 1, &z), 0);          /* the 7 MiB remainder */
  CHECK_EQ(z.addr, x.addr + 1 * MiB);
  r.ops->free(r.a, &y);                                  /* stream 2's list: 1 MiB */
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 3, &w), 0);
  CHECK_EQ(w.addr, y.addr);
  CHECK_EQ(r.d.c.device_allocs, 1);
  r.ops->free(r.a, &z);
  r.ops->free(r.a, &w);
  CHECK(rig_close(&r));
}

TEST(pool_takes_another_lists_best_fit_as_it_stands_before_merging_lists) {
  struct rig r;
  struct block a, b, g, c, h, got;
  CHECK_MSG(rig_open(&r, 0, "initial=8MiB") == 0, "%s", r.err);   /* one upstream block U, stream 0's */
  CHECK(rig_alloc_on(&r, 1 * MiB, 1, &a) == 0);          /* U+0, taken by stream 1 */
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &b) == 0);          /* U+1M */
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &g) == 0);          /* U+2M */
  CHECK(rig_alloc_on(&r, 2 * MiB, 0, &c) == 0);          /* U+3M */
  CHECK(rig_alloc_on(&r, 3 * MiB, 0, &h) == 0);          /* U+5M, the rest */
  CHECK_EQ(b.addr, a.addr + 1 * MiB);
  r.ops->free(r.a, &a);                                  /* stream 1: [a] */
  r.ops->free(r.a, &b);                                  /* stream 0: [b][c] */
  r.ops->free(r.a, &c);
  /* 2 MiB on stream 1: stream 0's list has c as it stands, so c is taken; merging the
   * lists first would have joined a and b into a lower 2 MiB block */
  CHECK(rig_alloc_on(&r, 2 * MiB, 1, &got) == 0);
  CHECK_EQ(got.addr, c.addr);
  CHECK_EQ(r.d.c.device_allocs, 1);
  CHECK(rig_close(&r));
}

TEST(pool_remainder_of_a_block_taken_from_another_stream_stays_in_that_list) {
  struct rig r;
  struct block e, f, t, y;
  CHECK_MSG(rig_open(&r, 0, "initial=8MiB") == 0, "%s", r.err);
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &e) == 0);          /* U+0 */
  CHECK(rig_alloc_on(&r, 2 * MiB, 0, &f) == 0);          /* U+1M */
  CHECK(rig_alloc_on(&r, 5 * MiB, 0, &t) == 0);          /* U+3M */
  r.ops->free(r.a, &f);                                  /* stream 0: [f 2 MiB] */
  CHECK(rig_alloc_on(&r, 1 * MiB, 2, &y) == 0);          /* stream 2 takes f's first half */
  CHECK_EQ(y.addr, f.addr);
  r.ops->free(r.a, &t);                                  /* stream 0: the 1 MiB remainder joins t */
  uint64_t largest, free_inside;
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 6 * MiB);
  CHECK(rig_close(&r));
}

TEST(pool_merges_other_streams_lists_when_no_single_block_fits) {
  struct rig r;
  struct block a, b, c, d;
  CHECK_MSG(rig_open(&r, 0, "initial=4MiB") == 0, "%s", r.err);   /* in stream 0's list */
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 1, &a), 0);
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 2, &b), 0);
  CHECK_EQ(rig_grew_on(&r, 2 * MiB, 3, &c), 0);
  CHECK_EQ(b.addr, a.addr + 1 * MiB);
  r.ops->free(r.a, &a);                                  /* stream 1: [a] */
  r.ops->free(r.a, &b);                                  /* stream 2: [b], right after a */
  /* 2 MiB on stream 1: neither list alone has it; merged, a and b coalesce */
  CHECK_EQ(rig_grew_on(&r, 2 * MiB, 1, &d), 0);
  CHECK_EQ(d.addr, a.addr);
  CHECK_EQ(r.d.c.device_allocs, 1);
  r.ops->free(r.a, &c);
  r.ops->free(r.a, &d);
  CHECK(rig_close(&r));
}

TEST(pool_never_coalesces_blocks_of_different_upstream_allocations) {
  struct rig r;
  struct block p, q, big;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 2 * MiB, 0, &p), 2 * MiB);
  CHECK_EQ(rig_grew_on(&r, 2 * MiB, 0, &q), 2 * MiB);
  CHECK_EQ(q.addr + 2 * MiB, p.addr);                    /* contiguous in address */
  uint64_t largest, free_inside;
  for (int order = 0; order < 2; order++) {              /* p (a head) inserted after q, then before it */
    r.ops->free(r.a, order ? &q : &p);
    r.ops->free(r.a, order ? &p : &q);
    r.ops->query(r.a, &largest, &free_inside);
    CHECK_EQ(largest, 2 * MiB);
    CHECK_EQ(free_inside, 4 * MiB);
    CHECK_EQ(rig_grew_on(&r, 2 * MiB, 0, &q), 0);        /* equal sizes: the lower address first */
    CHECK_EQ(rig_grew_on(&r, 2 * MiB, 0, &p), 0);
    CHECK_EQ(q.addr + 2 * MiB, p.addr);
  }
  r.ops->free(r.a, &p);
  r.ops->free(r.a, &q);
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &big), 4 * MiB);  /* p's head stops the merge: grow */
  r.ops->free(r.a, &big);
  CHECK(rig_close(&r));
}

TEST(pool_coalesces_in_address_order_and_takes_the_best_fit) {
  struct rig r;
  struct block a, b, c, d, got;
  CHECK_MSG(rig_open(&r, 0, "initial=4MiB") == 0, "%s", r.err);
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &a) == 0);
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &b) == 0);
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &c) == 0);
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &d) == 0);
  r.ops->free(r.a, &c);
  r.ops->free(r.a, &a);                                  /* two 1 MiB blocks: the lower one is taken */
  CHECK(rig_alloc_on(&r, 512 * KiB, 0, &got) == 0);
  CHECK_EQ(got.addr, a.addr);
  r.ops->free(r.a, &got);                                /* [a][c] free, b and d live */
  r.ops->free(r.a, &d);                                  /* d joins c: [a 1 MiB][c+d 2 MiB] */
  uint64_t largest, free_inside;
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 2 * MiB);
  CHECK(rig_alloc_on(&r, 1 * MiB, 0, &got) == 0);        /* best fit: a, not the 2 MiB block */
  CHECK_EQ(got.addr, a.addr);
  r.ops->free(r.a, &got);
  r.ops->free(r.a, &b);                                  /* b joins both sides */
  r.ops->query(r.a, &largest, &free_inside);
  CHECK_EQ(largest, 4 * MiB);
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &got), 0);
  r.ops->free(r.a, &got);
  CHECK(rig_close(&r));
}

TEST(pool_random_churn_on_three_streams_keeps_its_invariants) {
  struct rig r;
  enum { N = 256 };
  struct block live[N];
  int used[N] = {0};
  CHECK_MSG(rig_open(&r, 768 * MiB, "") == 0, "%s", r.err);
  uint64_t rng = 987654321;
  for (int step = 0; step < 20000; step++) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    int i = (int)(rng % N);
    if (used[i]) {
      r.ops->free(r.a, &live[i]);
      used[i] = 0;
    } else {
      uint64_t size = 1 + (rng >> 20) % ((rng >> 60) < 2 ? 8 * MiB : 64 * KiB);
      int rc = rig_alloc_on(&r, size, (rng >> 8) % 3, &live[i]);
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
