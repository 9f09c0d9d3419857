/* test_bounds.c - what keeps a long run or a crafted input within bounds: the simulated
 * device reusing freed address ranges (a run lasts as long as its live volume fits), the
 * absurd sizes the engine refuses on its own, the live-block map's seeded hash, and the
 * caching pools' largest free block without a walk over every stream. */
#include <stdlib.h>
#include "test.h"
#include "device.h"
#include "sim_va.h"
#include "livemap.h"
#include "replay.h"
#include "stress.h"

#define FX_NAME "caching"
#define FX_OPS caching_allocator
#include "strategy_fixture.h"

static int open_sim(struct device *d, uint64_t total) {
  char err[FB_ERRLEN];
  return device_open(d, &(struct device_config){.kind = "sim", .sim_total = total}, err);
}

TEST(sim_reuses_freed_ranges_once_fresh_space_is_used_up) {
  struct device d;
  CHECK(open_sim(&d, 0) == 0);
  /* 2100 x 64 GiB = 131 TiB through cudaMalloc/cudaFree: more than the 2^47 range */
  uint64_t a, first = 0, lowest = UINT64_MAX;
  int failed = 0;
  for (int i = 0; i < 2100 && !failed; i++) {
    if (dev_malloc(&d, 64ull << 30, &a)) { failed = i + 1; break; }
    if (i == 0) first = a;
    if (a < lowest) lowest = a;
    dev_free(&d, a, 64ull << 30);
  }
  CHECK_MSG(!failed, "cudaMalloc %d failed: %s", failed, d.err);
  CHECK_EQ(first, (1ull << 47) - (64ull << 30));   /* fresh space first: the old addresses */
  CHECK_EQ(lowest, 0);                              /* ... down to the bottom, then reuse */
  /* the same for cuMemAddressReserve/Free */
  for (int i = 0; i < 2100 && !failed; i++) {
    if (dev_va_reserve(&d, 64ull << 30, &a)) { failed = i + 1; break; }
    dev_va_release(&d, a, 64ull << 30);
  }
  CHECK_MSG(!failed, "va_reserve %d failed: %s", failed, d.err);
  device_close(&d);
}

TEST(sim_va_hands_out_the_same_addresses_for_the_same_calls) {
  uint64_t got[2][64] = {{0}};
  for (int run = 0; run < 2; run++) {
    struct sim_va v;
    sim_va_init(&v, 1ull << 30);   /* 512 pages of 2 MiB */
    uint64_t live[64] = {0}, sz[64] = {0};
    uint64_t x = 12345;
    int oom;
    for (int i = 0; i < 4000; i++) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      int k = (int)(x % 64);
      if (sz[k]) {
        CHECK(sim_va_give(&v, live[k], sz[k], 2ull << 20) == 0);
        sz[k] = 0;
      } else {
        sz[k] = ((x >> 8) % 6 + 1) << 21;
        if (sim_va_take(&v, sz[k], 2ull << 20, &live[k], &oom)) sz[k] = 0;
        CHECK(!oom);
      }
      if (i >= 3936) got[run][i - 3936] = sz[k] ? live[k] : 0;
    }
    /* no two live ranges overlap */
    for (int i = 0; i < 64; i++)
      for (int j = i + 1; j < 64; j++)
        if (sz[i] && sz[j]) CHECK(live[i] + sz[i] <= live[j] || live[j] + sz[j] <= live[i]);
    sim_va_destroy(&v);
  }
  for (int i = 0; i < 64; i++) CHECK_EQ(got[0][i], got[1][i]);
}

TEST(sim_va_coalesces_freed_neighbours) {
  struct sim_va v;
  sim_va_init(&v, 6ull << 21);   /* six pages */
  uint64_t a[6];
  int oom;
  for (int i = 0; i < 6; i++) CHECK(sim_va_take(&v, 2ull << 20, 2ull << 20, &a[i], &oom) == 0);
  CHECK(sim_va_take(&v, 1, 2ull << 20, &a[0], &oom) != 0);   /* full */
  CHECK(sim_va_give(&v, a[1], 2ull << 20, 2ull << 20) == 0);
  CHECK(sim_va_give(&v, a[3], 2ull << 20, 2ull << 20) == 0);
  CHECK(sim_va_give(&v, a[2], 2ull << 20, 2ull << 20) == 0);   /* joins 1 and 3 into one range */
  uint64_t big;
  CHECK(sim_va_take(&v, 6ull << 20, 2ull << 20, &big, &oom) == 0);
  CHECK_EQ(big, a[3]);
  CHECK_EQ(v.free_bytes, 0);
  sim_va_destroy(&v);
}

TEST(raw_run_lasts_past_the_address_range) {
  /* 2100 x 64 GiB allocated and freed: 131 TiB of cudaMalloc, more than 2^47 */
  struct run_spec s = {.workload = "script:events=a1=68719476736/f1,repeat=2100", .allocator = "raw", .trace_device = -1,
                       .world = 1, .seed = 1, .device = {.kind = "sim", .sim_total = 1ull << 40, .sim_usable = 1ull << 40},
                       .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.allocs, 2100);
}

TEST(sim_refuses_a_device_larger_than_it_can_model) {
  struct device d;
  char err[FB_ERRLEN];
  CHECK(device_open(&d, &(struct device_config){.kind = "sim", .sim_total = UINT64_MAX}, err) != 0);
  CHECK_CONTAINS(err, "at most 4398046511104");
  CHECK(device_open(&d, &(struct device_config){.kind = "sim", .sim_usable = 1ull << 60}, err) != 0);
  CHECK_CONTAINS(err, "usable");
  CHECK(open_sim(&d, SIM_TOTAL_MAX) == 0);
  device_close(&d);
}

TEST(stress_refuses_seconds_past_its_bound) {
  struct stress_spec s = {.allocator = "caching", .device = {.kind = "sim"}, .threads = 1, .seconds = 1e30, .seed = 1};
  struct stress_result *r = calloc(1, sizeof *r);
  CHECK(r);
  CHECK_EQ(stress_run(&s, r), 2);
  CHECK_CONTAINS(r->status, "at most 2592000");
  free(r);
}

TEST(livemap_spreads_ids_built_to_collide) {
  /* ids that all had one home under the old multiplicative hash: j * 2^47 * K^-1 */
  uint64_t k = 0x9E3779B97F4A7C15ull, inv = k;
  for (int i = 0; i < 6; i++) inv *= 2 - k * inv;   /* Newton: k * inv = 1 mod 2^64 */
  CHECK_EQ(k * inv, 1);
  struct livemap m;
  CHECK_EQ(livemap_init(&m, 100), 0);
  enum { N = 20000 };
  size_t worst = 0;
  for (uint64_t j = 1; j <= N; j++) {
    uint64_t id = (j << 47) * inv;
    struct live_entry *e = livemap_put(&m, id);
    CHECK(e);
  }
  for (uint64_t j = 1; j <= N; j++) {   /* probe distance of each from its home */
    uint64_t id = (j << 47) * inv;
    size_t i = livemap_home(&m, id), d = 0;
    while (m.slots[i].id != id) { i = (i + 1) & m.mask; d++; }
    if (d > worst) worst = d;
  }
  CHECK_MSG(worst < 200, "an id sits %zu slots from its home", worst);   /* one shared home: ~N */
  size_t n;
  uint64_t *ids = livemap_sorted_ids(&m, LIVE_BLOCK, &n);
  CHECK_EQ(n, N);
  for (size_t i = 1; i < n; i++) CHECK(ids[i - 1] < ids[i]);
  free(ids);
  livemap_free(&m);
}

TEST(caching_largest_free_block_is_the_largest_over_every_stream) {
  struct fx f;
  OPEN(&f, "", 0);
  enum { S = 300 };
  struct block b[S];
  uint64_t want = 0;
  for (int s = 0; s < S; s++) {   /* > 10 MiB: a segment each, freed whole */
    ALLOC(&f, b[s], MiB(12 + 2 * ((s * 37) % 150)), (uint64_t)s + 1);
    if (b[s].size > want) want = b[s].size;
  }
  for (int s = 0; s < S; s++) FREE(&f, b[s]);
  uint64_t largest, inside;
  OPS.query(f.a, &largest, &inside);
  CHECK_EQ(largest, want);
  /* take the largest blocks back one by one (same stream, same size): the next largest shows */
  for (int round = 0; round < 5; round++) {
    int top = 0;
    for (int s = 1; s < S; s++) if (b[s].size > b[top].size) top = s;
    struct block again;
    ALLOC(&f, again, b[top].size, (uint64_t)top + 1);
    b[top].size = 0;
    uint64_t next = 0;
    for (int s = 0; s < S; s++) if (b[s].size > next) next = b[s].size;
    OPS.query(f.a, &largest, &inside);
    CHECK_EQ(largest, next);
  }
  CONSISTENT(&f);
  OPS.empty_cache(f.a);
  OPS.query(f.a, &largest, &inside);
  CHECK(largest <= want);
  OPS.destroy(f.a);
  f.a = NULL;
  device_close(&f.d);
}
