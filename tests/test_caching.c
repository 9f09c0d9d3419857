/* test_caching.c - PyTorch's caching allocator, one test per rule and knob: rounding,
 * pools and segment sizes, splitting, best fit, the max_split_size knobs, coalescing
 * (the failure path and the rest: test_caching_recovery.c). Each test is built so that it
 * fails when the rule it names is changed (the comment over each says what the broken
 * variant would do). Fixture: strategy_fixture.h. */
#define FX_NAME "caching"
#define FX_OPS caching_allocator
#include "strategy_fixture.h"
#include "../allocators/caching_policy.h"

/* ---- rounding ----------------------------------------------------------------------- */

/* sizes < 512 -> 512, else up to a multiple of 512 (a different kMinBlockSize or a
 * rounding to powers of two would change these) */
TEST(caching_rounds_to_512) {
  struct caching_config c;
  struct params none = {0};
  char err[FB_ERRLEN];
  none.spec = caching_param_spec;
  CHECK(caching_config_parse(&none, &c, err) == 0);
  CHECK_EQ(caching_round_size(&c, 1), 512);
  CHECK_EQ(caching_round_size(&c, 512), 512);
  CHECK_EQ(caching_round_size(&c, 513), 1024);
  CHECK_EQ(caching_round_size(&c, MiB(5) + 1), MiB(5) + 512);
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block b;
  ALLOC(&f, b, 1, 0);
  CHECK_EQ(b.size, 512);
  ALLOC(&f, b, 1000, 0);
  CHECK_EQ(b.size, 1024);
  CHECK_EQ(b.addr % 512, 0);
  CONSISTENT(&f);
  fx_close(&f);
}

/* roundup_power2_divisions as one value: 4 steps between powers of two, only above
 * 512 * divisions (a rounding without that guard would round 1200 to 1280) */
TEST(caching_roundup_power2_single_value) {
  uint64_t div[CACHING_ROUNDUP_INTERVALS];
  char err[FB_ERRLEN];
  struct fx f;
  OPEN(&f, "roundup_power2_divisions=4", 0);
  struct block b;
  ALLOC(&f, b, 1200, 0);                     /* 1200 <= 512 * 4: plain 512 B rounding */
  CHECK_EQ(b.size, 1536);
  ALLOC(&f, b, 2049 + 512 * 4, 0);           /* 4609 in [4096, 8192): steps of 1024 */
  CHECK_EQ(b.size, 5120);
  ALLOC(&f, b, MiB(5) + 1, 0);               /* [4 MiB, 8 MiB): steps of 1 MiB */
  CHECK_EQ(b.size, MiB(6));
  ALLOC(&f, b, MiB(8), 0);                   /* a power of two stays */
  CHECK_EQ(b.size, MiB(8));
  CONSISTENT(&f);
  fx_close(&f);
  CHECK(caching_parse_roundup("1", div, err) == 0);
  CHECK_EQ(div[0], 1);
  CHECK_EQ(div[15], 1);
}

/* the per-interval form: the first key fills the intervals below it, '>' the ones above
 * the last key (PyTorch's newer parser: last_index + 1); keys in MiB */
TEST(caching_roundup_power2_per_interval) {
  uint64_t div[CACHING_ROUNDUP_INTERVALS];
  char err[FB_ERRLEN];
  CHECK_MSG(caching_parse_roundup("[256:1,512:2,>:8]", div, err) == 0, "%s", err);
  for (int i = 0; i <= 8; i++) CHECK_EQ(div[i], 1);
  CHECK_EQ(div[9], 2);
  for (int i = 10; i < 16; i++) CHECK_EQ(div[i], 8);
  CHECK(caching_parse_roundup("[ 1:0, 2:0, 4:0, 8:0, 16:0, 32:0, 64:0, 128:0, 256:0, 512:0, 1024:0, 2048:0, "
                              "4096:0, 8192:0, 16384:0, 32768:0 ]", div, err) == 0);
  for (int i = 0; i < 16; i++) CHECK_EQ(div[i], 0);
  CHECK(caching_parse_roundup("[1:2,4:16]", div, err) == 0);
  CHECK_EQ(div[0], 2);
  CHECK_EQ(div[1], 0);          /* between keys: untouched */
  CHECK_EQ(div[2], 16);
  CHECK_EQ(div[3], 0);          /* above the last key without '>': untouched */
  struct fx f;
  OPEN(&f, "roundup_power2_divisions=[256:1,512:2,>:8]", 0);
  struct block b;
  ALLOC(&f, b, MiB(600), 0);                 /* [512, 1024) MiB with 2 divisions */
  CHECK_EQ(b.size, MiB(768));
  FREE(&f, b);
  ALLOC(&f, b, MiB(2048) + 1, 0);            /* [2, 4) GiB with 8 divisions */
  CHECK_EQ(b.size, MiB(2048 + 256));
  FREE(&f, b);
  ALLOC(&f, b, MiB(300), 0);                 /* [256, 512) MiB with 1: plain rounding */
  CHECK_EQ(b.size, MiB(300));
  CONSISTENT(&f);
  fx_close(&f);
}

TEST(caching_rejects_bad_knobs) {
  struct fx f;
  const char *bad[][2] = {
    {"roundup_power2_divisions=3", "roundup_power2_divisions"},
    {"roundup_power2_divisions=[3:2]", "roundup_power2_divisions"},
    {"roundup_power2_divisions=[256:3]", "roundup_power2_divisions"},
    {"roundup_power2_divisions=[256:2,]", "roundup_power2_divisions"},
    {"roundup_power2_divisions=[256:2]x", "roundup_power2_divisions"},
    {"max_split_size_mb=10", "max_split_size_mb"},
    {"max_split_size_mb=abc", "max_split_size_mb"},
    {"max_non_split_rounding_mb=5", "max_non_split_rounding_mb"},
    {"garbage_collection_threshold=1.5", "garbage_collection_threshold"},
    {"garbage_collection_threshold=-0.1", "garbage_collection_threshold"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = fx_open(&f, bad[i][0], 0);
    CHECK_MSG(rc != 0, "'%s' was accepted", bad[i][0]);
    CHECK_CONTAINS(f.err, bad[i][1]);
    fx_close(&f);
  }
  OPEN(&f, "max_split_size_mb=none,garbage_collection_threshold=0,roundup_power2_divisions=[]", 0);
  fx_close(&f);
}

/* ---- pools and segment sizes --------------------------------------------------------- */

/* rounded <= 1 MiB: small pool, 2 MiB segments; above: large pool, 20 MiB segments
 * (moving the small/large line or the segment sizes changes reserved) */
TEST(caching_small_and_large_segment_sizes) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block s, l;
  ALLOC(&f, s, MiB(1), 0);
  CHECK_EQ(f.d.reserved, MiB(2));
  ALLOC(&f, l, MiB(1) + 1, 0);
  CHECK_EQ(f.d.reserved, MiB(22));
  CHECK_EQ(f.d.c.device_allocs, 2);
  FREE(&f, s);
  FREE(&f, l);
  /* a free small-pool block never serves a large request, nor a large one a small request */
  struct block x, y;
  ALLOC(&f, x, MiB(1) + 512, 0);             /* takes the free 20 MiB large block */
  ALLOC(&f, y, 512, 0);                      /* takes the free 2 MiB small block */
  CHECK_EQ(f.d.c.device_allocs, 2);
  FREE(&f, x);
  FREE(&f, y);
  struct block big;
  ALLOC(&f, big, MiB(2), 0);                 /* large pool: the 20 MiB block, not the 2 MiB one */
  CHECK_EQ(big.size, MiB(2));
  CHECK_EQ(f.d.c.device_allocs, 2);
  FREE(&f, big);
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.reserved, 0);
  ALLOC(&f, x, MiB(19), 0);                  /* only the large pool's block exists */
  FREE(&f, x);
  ALLOC(&f, y, MiB(1), 0);                   /* small request: a new 2 MiB segment */
  CHECK_EQ(f.d.c.device_allocs, 4);
  CHECK_EQ(f.d.reserved, MiB(22));
  CONSISTENT(&f);
  fx_close(&f);
}

/* < 10 MiB -> a 20 MiB segment; >= 10 MiB -> a segment of the size rounded to 2 MiB */
TEST(caching_10mib_boundary) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b, c;
  ALLOC(&f, b, MiB(10), 0);
  CHECK_EQ(f.d.reserved, MiB(10));
  ALLOC(&f, c, MiB(10) + 1, 0);              /* 10 MiB + 512 -> 12 MiB (remainder split off) */
  CHECK_EQ(f.d.reserved, MiB(22));
  ALLOC(&f, a, MiB(10) - 512, 0);            /* the free remainder is too small: 20 MiB */
  CHECK_EQ(f.d.reserved, MiB(42));
  CHECK_EQ(f.d.c.device_allocs, 3);
  CHECK_EQ(caching_allocation_size(MiB(10) - 512), MiB(20));
  CHECK_EQ(caching_allocation_size(MiB(10)), MiB(10));
  CHECK_EQ(caching_allocation_size(MiB(1)), MiB(2));
  CONSISTENT(&f);
  fx_close(&f);
}

/* ---- splitting ---------------------------------------------------------------------- */

/* small pool: split when the remainder is >= 512 (with '> 512' the first 512 B request
 * would take the whole 1 KiB left and the second one a new segment) */
TEST(caching_small_split_at_512_remainder) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b, c;
  ALLOC(&f, a, MiB(1), 0);
  ALLOC(&f, b, MiB(1) - 1024, 0);
  CHECK_EQ(b.size, MiB(1) - 1024);
  ALLOC(&f, c, 512, 0);
  CHECK_EQ(c.size, 512);
  CHECK_EQ(c.addr, b.addr + b.size);
  CHECK_EQ(f.d.c.device_allocs, 1);
  struct block d;
  ALLOC(&f, d, 512, 0);                      /* exactly fills the segment */
  CHECK_EQ(f.d.c.device_allocs, 1);
  CHECK_EQ(d.addr + 512, a.addr + MiB(2));
  CONSISTENT(&f);
  fx_close(&f);
}

/* large pool: split only when the remainder is > 1 MiB (a 1 MiB remainder stays with the
 * block; with '>= 1 MiB' the 19 MiB request would get 19 MiB) */
TEST(caching_large_split_needs_more_than_1mib) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b, c;
  ALLOC(&f, a, MiB(19), 0);                  /* 20 MiB segment, remainder exactly 1 MiB */
  CHECK_EQ(a.size, MiB(20));
  ALLOC(&f, b, MiB(19) - 512, 0);            /* remainder 1 MiB + 512: split */
  CHECK_EQ(b.size, MiB(19) - 512);
  ALLOC(&f, c, MiB(1) + 512, 0);             /* fits the remainder: no new segment */
  CHECK_EQ(f.d.c.device_allocs, 2);
  CHECK_EQ(c.addr, b.addr + b.size);
  CHECK_EQ(c.size, MiB(1) + 512);
  CONSISTENT(&f);
  fx_close(&f);
}

/* large pool: no split at or above max_split_size (the 20 MiB + 512 request keeps its
 * whole 22 MiB segment; without the knob it is split) */
TEST(caching_no_split_above_max_split_size) {
  struct fx f;
  struct block a;
  OPEN(&f, NULL, 0);
  ALLOC(&f, a, MiB(20) + 512, 0);
  CHECK_EQ(a.size, MiB(20) + 512);
  fx_close(&f);
  OPEN(&f, "max_split_size_mb=20", 0);
  ALLOC(&f, a, MiB(20) + 512, 0);
  CHECK_EQ(a.size, MiB(22));
  CONSISTENT(&f);
  fx_close(&f);
}

/* ---- best fit ----------------------------------------------------------------------- */

/* best fit by size: first fit by address would split the 30 MiB block (lower address)
 * for the 12 MiB request and then need a third segment for 30 MiB */
TEST(caching_best_fit_not_first_fit) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block b12, a30, x, y;
  ALLOC(&f, b12, MiB(12), 0);                /* higher address */
  ALLOC(&f, a30, MiB(30), 0);                /* lower address */
  CHECK(a30.addr < b12.addr);
  FREE(&f, b12);
  FREE(&f, a30);
  ALLOC(&f, x, MiB(12), 0);
  CHECK_EQ(x.addr, b12.addr);
  ALLOC(&f, y, MiB(30), 0);
  CHECK_EQ(y.addr, a30.addr);
  CHECK_EQ(f.d.c.device_allocs, 2);
  CHECK_EQ(f.d.peak_reserved, MiB(42));
  CONSISTENT(&f);
  fx_close(&f);
}

/* equal sizes: the lower address wins (insertion order would pick the first freed) */
TEST(caching_best_fit_ties_by_address) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block hi, lo, x;
  ALLOC(&f, hi, MiB(12), 0);
  ALLOC(&f, lo, MiB(12), 0);
  CHECK(lo.addr < hi.addr);
  FREE(&f, hi);
  FREE(&f, lo);
  ALLOC(&f, x, MiB(12), 0);
  CHECK_EQ(x.addr, lo.addr);
  CONSISTENT(&f);
  fx_close(&f);
}

/* per-stream pools: a free block of another stream never serves a request */
TEST(caching_per_stream_pools) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b, c, s1, s2;
  ALLOC(&f, a, MiB(12), 1);
  FREE(&f, a);
  ALLOC(&f, b, MiB(12), 2);                  /* stream 2 cannot use stream 1's block */
  CHECK_EQ(f.d.c.device_allocs, 2);
  CHECK(b.addr != a.addr);
  CHECK_EQ(b.stream, 2);
  ALLOC(&f, c, MiB(12), 1);                  /* stream 1 can */
  CHECK_EQ(c.addr, a.addr);
  CHECK_EQ(f.d.c.device_allocs, 2);
  /* small pool too, and a smaller request of stream 0 does not take stream 1's block */
  ALLOC(&f, s1, 4096, 1);
  FREE(&f, s1);
  ALLOC(&f, s2, 512, 0);
  CHECK_EQ(f.d.c.device_allocs, 4);
  CONSISTENT(&f);
  fx_close(&f);
}

/* ---- max_split_size_mb and max_non_split_rounding_mb --------------------------------- */

/* a request under max_split_size never takes a cached block >= max_split_size */
TEST(caching_max_split_size_keeps_small_requests_off_oversize_blocks) {
  struct fx f;
  struct block a, b;
  OPEN(&f, NULL, 0);
  ALLOC(&f, a, MiB(50), 0);
  FREE(&f, a);
  ALLOC(&f, b, MiB(30), 0);                  /* default: splits the cached 50 MiB block */
  CHECK_EQ(f.d.c.device_allocs, 1);
  CHECK_EQ(b.addr, a.addr);
  fx_close(&f);
  OPEN(&f, "max_split_size_mb=40", 0);
  ALLOC(&f, a, MiB(50), 0);
  FREE(&f, a);
  ALLOC(&f, b, MiB(30), 0);                  /* 30 < 40 <= 50: a new segment */
  CHECK_EQ(f.d.c.device_allocs, 2);
  CHECK_EQ(f.d.reserved, MiB(80));
  CONSISTENT(&f);
  fx_close(&f);
}

/* a request >= max_split_size takes a cached block only if it is less than
 * max_non_split_rounding (20 MiB by default) larger, and then whole */
TEST(caching_max_non_split_rounding) {
  struct fx f;
  struct block a, b;
  OPEN(&f, "max_split_size_mb=40", 0);
  ALLOC(&f, a, MiB(100), 0);
  FREE(&f, a);
  ALLOC(&f, b, MiB(60), 0);                  /* 100 >= 60 + 20: a new segment */
  CHECK_EQ(f.d.c.device_allocs, 2);
  FREE(&f, b);
  ALLOC(&f, b, MiB(85), 0);                  /* 100 < 85 + 20: takes it whole */
  CHECK_EQ(b.addr, a.addr);
  CHECK_EQ(b.size, MiB(100));
  CHECK_EQ(f.d.c.device_allocs, 2);
  CONSISTENT(&f);
  fx_close(&f);
  OPEN(&f, "max_split_size_mb=40,max_non_split_rounding_mb=50", 0);
  ALLOC(&f, a, MiB(100), 0);
  FREE(&f, a);
  ALLOC(&f, b, MiB(60), 0);                  /* 100 < 60 + 50 */
  CHECK_EQ(b.size, MiB(100));
  CHECK_EQ(f.d.c.device_allocs, 1);
  fx_close(&f);
}

/* ---- coalescing --------------------------------------------------------------------- */

/* freeing merges with free neighbours in the segment (without coalescing the 20 MiB
 * request would need a new segment) */
TEST(caching_coalesces_free_neighbours) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b, c, d;
  ALLOC(&f, a, MiB(4), 0);
  ALLOC(&f, b, MiB(4), 0);
  ALLOC(&f, c, MiB(4), 0);
  CHECK_EQ(f.d.c.device_allocs, 1);
  FREE(&f, a);
  FREE(&f, c);                               /* merges with the 8 MiB tail */
  uint64_t largest, inside;
  OPS.query(f.a, &largest, &inside);
  CHECK_EQ(largest, MiB(12));
  CHECK_EQ(inside, MiB(16));
  FREE(&f, b);                               /* merges both ways: one 20 MiB block */
  OPS.query(f.a, &largest, &inside);
  CHECK_EQ(largest, MiB(20));
  CHECK_EQ(inside, MiB(20));
  CONSISTENT(&f);
  ALLOC(&f, d, MiB(20), 0);
  CHECK_EQ(d.addr, a.addr);
  CHECK_EQ(f.d.c.device_allocs, 1);
  CONSISTENT(&f);
  fx_close(&f);
}

/* never across segments, even when the sim makes two segments adjacent in address */
TEST(caching_never_coalesces_across_segments) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block p, q, r;
  ALLOC(&f, p, MiB(16), 0);
  ALLOC(&f, q, MiB(16), 0);
  CHECK_EQ(q.addr + MiB(16), p.addr);
  FREE(&f, p);
  FREE(&f, q);
  ALLOC(&f, r, MiB(30), 0);
  CHECK_EQ(f.d.c.device_allocs, 3);
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.reserved, MiB(30));           /* both 16 MiB segments were unsplit and free */
  CONSISTENT(&f);
  fx_close(&f);
}
