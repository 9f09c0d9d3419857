/* test_caching_recovery.c - PyTorch's caching allocator, continued: the failure path in
 * PyTorch's order (release and retry, OOM, release of cached oversize blocks, GC under a
 * cap), empty_cache, query, destroy, a random consistency run and the CLI's knob
 * checks. Each test fails when the rule it names is changed. Fixture: strategy_fixture.h. */
#define FX_NAME "caching"
#define FX_OPS caching_allocator
#include "strategy_fixture.h"
#include "../allocators/caching_policy.h"

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
