/* test_caching.c - PyTorch's caching allocator, one test per rule and knob. Each test is
 * built so that it fails when the rule it names is changed (the comment over each says
 * what the broken variant would do). Driven directly through caching_allocator's ops on
 * a sim device with range tracking; figures come from the device struct. */
#include <stdlib.h>
#include "test.h"
#include "allocator.h"
#include "../allocators/caching_policy.h"

extern const struct allocator_ops caching_allocator;
#define OPS caching_allocator
#define MiB(x) ((uint64_t)(x) << 20)

struct fx { struct device d; void *a; char err[FB_ERRLEN]; };

static int fx_open(struct fx *f, const char *params, uint64_t cap) {
  memset(f, 0, sizeof *f);
  if (device_open(&f->d, &(struct device_config){.kind = "sim"}, f->err)) return -1;
  f->d.track_ranges = 1;
  device_set_cap(&f->d, cap);
  char spec[400], name[32];
  snprintf(spec, sizeof spec, "caching%s%s", params && *params ? ":" : "", params ? params : "");
  struct params p;
  if (params_parse_spec(spec, name, sizeof name, &p, f->err)) return -1;
  p.percent_base = f->d.total;
  if (params_check(&p, OPS.params, "caching", f->err)) return -1;
  return OPS.create(&f->a, &f->d, &p, f->err);
}

static void fx_close(struct fx *f) {
  if (f->a) OPS.destroy(f->a);
  f->a = NULL;
  device_close(&f->d);
}

#define OPEN(f, params, cap) CHECK_MSG(fx_open((f), (params), (cap)) == 0, "open: %s", (f)->err)
#define ALLOC(f, blk, sz, st) CHECK_EQ(OPS.alloc((f)->a, (sz), (st), &(blk)), 0)
#define FREE(f, blk) OPS.free((f)->a, &(blk))
#define CONSISTENT(f) do { char e_[FB_ERRLEN]; CHECK_MSG(OPS.check((f)->a, e_) == 0, "%s", e_); } while (0)

static uint64_t flushes(struct fx *f) {
  struct alloc_stats st;
  OPS.stats(f->a, &st);
  return st.cache_flushes;
}

static uint64_t held(struct fx *f) {
  struct alloc_stats st;
  OPS.stats(f->a, &st);
  return st.held;
}

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

/* ---- failure path ------------------------------------------------------------------- */

/* alloc_block fails under the cap -> release every unsplit free segment -> retry once:
 * one cache flush, and the request succeeds */
TEST(caching_release_and_retry_counts_one_flush) {
  struct fx f;
  OPEN(&f, NULL, MiB(50));
  struct block a, b;
  ALLOC(&f, a, MiB(30), 0);
  FREE(&f, a);
  ALLOC(&f, b, MiB(40), 0);                  /* 30 + 40 > 50: flush, then 40 fits */
  CHECK_EQ(flushes(&f), 1);
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(40));
  CHECK_EQ(held(&f), MiB(40));
  CONSISTENT(&f);
  fx_close(&f);
}

/* OOM when nothing can be freed: live blocks and split segments stay; one flush counted */
TEST(caching_oom_when_nothing_can_be_freed) {
  struct fx f;
  OPEN(&f, NULL, MiB(50));
  struct block a, b, x;
  ALLOC(&f, a, MiB(4), 0);                   /* a split 20 MiB segment (16 MiB free in it) */
  CHECK_EQ(OPS.alloc(f.a, MiB(40), 0, &x), FB_OOM);
  CHECK_EQ(flushes(&f), 1);
  CHECK_EQ(f.d.reserved, MiB(20));
  CHECK_EQ(f.d.c.device_frees, 0);
  ALLOC(&f, b, MiB(16), 0);                  /* the split remainder still serves */
  CHECK_EQ(f.d.c.device_allocs, 1);
  CONSISTENT(&f);
  fx_close(&f);
}

/* release_available_cached_blocks: with max_split_size set, free the smallest oversize
 * block big enough before falling back to the flush (no flush, the other blocks stay) */
TEST(caching_release_available_oversize_single) {
  struct fx f;
  OPEN(&f, "max_split_size_mb=40", MiB(200));
  struct block o1, o2, x;
  ALLOC(&f, o1, MiB(100), 0);
  ALLOC(&f, o2, MiB(60), 0);
  FREE(&f, o1);
  FREE(&f, o2);
  ALLOC(&f, x, MiB(80), 0);                  /* best fit 100 >= 80 + 20: refused; 240 > 200 */
  CHECK_EQ(flushes(&f), 0);
  CHECK_EQ(f.d.c.device_frees, 1);           /* only the 100 MiB block */
  CHECK_EQ(f.d.reserved, MiB(140));
  CONSISTENT(&f);
  fx_close(&f);
}

/* ...or, when no single block is big enough, oversize blocks from the largest down until
 * enough is freed; blocks under max_split_size stay */
TEST(caching_release_available_oversize_several) {
  struct fx f;
  OPEN(&f, "max_split_size_mb=40", MiB(180));
  struct block l, o2, o3, s, x;
  ALLOC(&f, l, MiB(40), 0);
  ALLOC(&f, o2, MiB(60), 0);
  ALLOC(&f, o3, MiB(50), 0);
  ALLOC(&f, s, MiB(30), 0);
  FREE(&f, o2);
  FREE(&f, o3);
  FREE(&f, s);
  ALLOC(&f, x, MiB(100), 0);                 /* frees 60 + 50, keeps the 30 */
  CHECK_EQ(flushes(&f), 0);
  CHECK_EQ(f.d.c.device_frees, 2);
  CHECK_EQ(f.d.reserved, MiB(170));
  fx_close(&f);
  /* without max_split_size the same sequence needs the flush, which also frees the 30 */
  OPEN(&f, NULL, MiB(180));
  ALLOC(&f, l, MiB(40), 0);
  ALLOC(&f, o2, MiB(60), 0);
  ALLOC(&f, o3, MiB(50), 0);
  ALLOC(&f, s, MiB(30), 0);
  FREE(&f, o2);
  FREE(&f, o3);
  FREE(&f, s);
  ALLOC(&f, x, MiB(100), 0);
  CHECK_EQ(flushes(&f), 1);
  CHECK_EQ(f.d.reserved, MiB(140));
  CONSISTENT(&f);
  fx_close(&f);
}

/* garbage_collection_threshold under a cap: before cudaMalloc, free unsplit large blocks
 * whose age (the large pool's get_free_block calls since they were cached, hits included)
 * is at least the average; the younger one stays, and no flush is needed. Freeing all
 * cached blocks, counting only misses, or skipping GC each end elsewhere. */
TEST(caching_gc_frees_old_blocks_under_a_cap) {
  struct fx f;
  OPEN(&f, "garbage_collection_threshold=0.5", MiB(100));
  struct block a, b, d, x;
  ALLOC(&f, a, MiB(30), 0);
  ALLOC(&f, b, MiB(30), 0);
  ALLOC(&f, d, MiB(12), 0);
  FREE(&f, a);
  for (int i = 0; i < 5; i++) {              /* five hits age a */
    FREE(&f, d);
    ALLOC(&f, d, MiB(12), 0);
  }
  FREE(&f, b);
  ALLOC(&f, x, MiB(40), 0);                  /* miss: 72 > 50 -> GC frees a (age 6 >= 3.5) */
  CHECK_EQ(flushes(&f), 0);
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(82));
  CONSISTENT(&f);
  fx_close(&f);
  /* no GC without a cap (set_fraction), nor without the threshold */
  OPEN(&f, "garbage_collection_threshold=0.5", 0);
  ALLOC(&f, a, MiB(30), 0);
  ALLOC(&f, b, MiB(30), 0);
  FREE(&f, a);
  FREE(&f, b);
  ALLOC(&f, x, MiB(40), 0);
  CHECK_EQ(f.d.c.device_frees, 0);
  fx_close(&f);
  OPEN(&f, NULL, MiB(100));
  ALLOC(&f, a, MiB(30), 0);
  ALLOC(&f, b, MiB(30), 0);
  ALLOC(&f, d, MiB(12), 0);
  FREE(&f, a);
  FREE(&f, b);
  ALLOC(&f, x, MiB(40), 0);                  /* 112 > 100: the flush frees both */
  CHECK_EQ(flushes(&f), 1);
  CHECK_EQ(f.d.reserved, MiB(52));
  fx_close(&f);
}

/* GC stops once enough is reclaimed, pass by pass; split blocks are never its to free */
TEST(caching_gc_spares_split_blocks) {
  struct fx f;
  OPEN(&f, "garbage_collection_threshold=0.2", MiB(100));
  struct block a, s, x;
  ALLOC(&f, a, MiB(4), 0);                   /* 20 MiB segment, split: 16 MiB free in it */
  ALLOC(&f, s, MiB(30), 0);
  FREE(&f, s);
  ALLOC(&f, x, MiB(40), 0);                  /* 50 > 20: GC frees the 30, never the split one */
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(60));
  CONSISTENT(&f);
  fx_close(&f);
}

/* ---- empty_cache, query, destroy ----------------------------------------------------- */

/* empty_cache releases only unsplit free segments (small pool included) */
TEST(caching_empty_cache_releases_only_unsplit_free_segments) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block live, whole, small;
  ALLOC(&f, live, MiB(4), 0);                /* its 20 MiB segment is split: stays */
  ALLOC(&f, whole, MiB(30), 0);
  ALLOC(&f, small, 4096, 0);
  FREE(&f, whole);
  FREE(&f, small);
  CHECK_EQ(f.d.reserved, MiB(52));
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.reserved, MiB(20));
  CHECK_EQ(f.d.c.device_frees, 2);
  CHECK_EQ(flushes(&f), 0);                  /* empty_cache is not a retry */
  FREE(&f, live);
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.reserved, 0);
  CONSISTENT(&f);
  fx_close(&f);
}

/* query: the largest free block over every stream and pool, and all free bytes */
TEST(caching_query_over_streams) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b, c;
  ALLOC(&f, a, MiB(30), 0);
  ALLOC(&f, b, MiB(12), 7);
  ALLOC(&f, c, 4096, 3);
  FREE(&f, a);
  FREE(&f, b);
  FREE(&f, c);
  uint64_t largest, inside;
  OPS.query(f.a, &largest, &inside);
  CHECK_EQ(largest, MiB(30));
  CHECK_EQ(inside, MiB(44));
  fx_close(&f);
}

/* destroy hands every segment back, live blocks included */
TEST(caching_destroy_returns_everything) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b;
  ALLOC(&f, a, MiB(4), 0);
  ALLOC(&f, b, 4096, 1);
  OPS.destroy(f.a);
  f.a = NULL;
  CHECK_EQ(f.d.reserved, 0);
  CHECK_EQ(dev_ranges_held(&f.d), 0);
  fx_close(&f);
}

/* random sizes and streams: check() after every call, blocks inside held memory and
 * never overlapping, held == the device's reserved */
TEST(caching_random_consistency) {
  enum { SLOTS = 300, STEPS = 20000 };
  struct fx f;
  OPEN(&f, "max_split_size_mb=64,garbage_collection_threshold=0.6", (uint64_t)4 << 30);
  static struct block live[SLOTS];
  static int used[SLOTS];
  memset(used, 0, sizeof used);
  uint64_t x = 88172645463325252ull;
  for (int step = 0; step < STEPS; step++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    int i = (int)(x % SLOTS);
    if (used[i]) {
      FREE(&f, live[i]);
      used[i] = 0;
    } else {
      uint64_t sz = 1ull << (x >> 20) % 27;
      sz += (x >> 40) % sz;
      int rc = OPS.alloc(f.a, sz, (x >> 50) % 3, &live[i]);
      CHECK(rc == 0 || rc == FB_OOM);
      if (rc == 0) {
        used[i] = 1;
        CHECK(live[i].size >= sz);
        CHECK(dev_holds(&f.d, live[i].addr, live[i].size));
        for (int j = 0; j < SLOTS; j++)
          CHECK(j == i || !used[j] || live[j].addr + live[j].size <= live[i].addr ||
                live[i].addr + live[i].size <= live[j].addr);
      }
    }
    if (step % 5000 == 4999) OPS.empty_cache(f.a);
    CHECK_EQ(held(&f), f.d.reserved);
    if (step % 16 == 0) CONSISTENT(&f);
  }
  CONSISTENT(&f);
  fx_close(&f);
}

/* `fragbench list` documents every knob with PyTorch's default; a bad value is exit 2
 * with a message naming the key */
TEST(caching_knobs_listed_and_checked_by_the_cli) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/caching_list.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/caching_list.err", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "list", NULL), 0);
  char *out = test_read_file(outp);
  CHECK(out != NULL);
  const char *want[] = {"max_split_size_mb", "max_non_split_rounding_mb", "roundup_power2_divisions",
                        "garbage_collection_threshold"};
  const char *def[] = {"(default none)", "(default 20)", "(default none)", "(default 0)"};
  for (int i = 0; i < 4; i++) {
    const char *line = NULL;                      /* the line that starts with the key */
    for (const char *l = out; l && *l && !line; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
      const char *k = l;
      while (*k == ' ') k++;
      if (!strncmp(k, want[i], strlen(want[i])) && k[strlen(want[i])] == ' ') line = k;
    }
    CHECK_MSG(line != NULL, "'%s' not listed", want[i]);
    const char *eol = strchr(line, '\n');
    const char *d = strstr(line, def[i]);
    CHECK_MSG(d && (!eol || d < eol), "'%s' does not show %s", want[i], def[i]);
  }
  free(out);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1K/f1", "--allocator",
                    "caching:max_split_size_mb=8", "--device", "sim", "--quiet", NULL), 2);
  char *err = test_read_file(errp);
  CHECK_CONTAINS(err, "max_split_size_mb");
  free(err);
}
