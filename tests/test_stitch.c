/* test_stitch.c - the rules of the `stitch` strategy (GMLake-style virtual memory
 * stitching), one test per rule, driven through the allocator ops on a sim device with
 * range tracking; and its target: overhead <= 1.05 on every shared trace and generator.
 * Each rule test is built so that changing the rule it names makes it fail. */
#include "test.h"
#include "alloc_rig.h"
#include "replay.h"
#include "workload.h"

#define PAGE (2 * MiB)

static int rig_open(struct rig *r, uint64_t cap, const char *spec) { return rig_open_on(r, "stitch", 0, cap, spec); }

static uint64_t flushes(struct rig *r) {
  struct alloc_stats st = {0};
  r->ops->stats(r->a, &st);
  return st.cache_flushes;
}

/* four 2 MiB blocks side by side on four new pages; the second and fourth freed */
static int four_then_two_free(struct rig *r, struct block b[4]) {
  for (int i = 0; i < 4; i++)
    if (rig_grew_on(r, PAGE, 0, &b[i]) != PAGE) return -1;
  r->ops->free(r->a, &b[1]);
  r->ops->free(r->a, &b[3]);
  return 0;
}

TEST(stitch_maps_free_pages_into_one_range_before_creating_memory) {
  struct rig r;
  struct block b[4], big;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(four_then_two_free(&r, b) == 0);
  CHECK_EQ(r.d.reserved, 8 * MiB);
  CHECK_EQ(b[1].addr, b[0].addr + PAGE);          /* one primitive range, packed */
  uint64_t maps = r.d.c.maps, allocs = r.d.c.device_allocs, vas = r.d.c.va_reserves;
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &big), 0);  /* no free block of 4 MiB: two free pages stitched */
  CHECK_EQ(r.d.reserved, 8 * MiB);                /* no new physical memory */
  CHECK_EQ(r.d.c.device_allocs, allocs);
  CHECK_EQ(r.d.c.maps, maps + 2);                 /* each free page mapped again */
  CHECK_EQ(r.d.c.va_reserves, vas + 1);           /* into a new virtual range */
  CHECK(big.addr + big.size <= b[0].addr || big.addr >= b[3].addr + PAGE);
  CHECK(dev_holds(&r.d, big.addr, big.size));
  CHECK(rig_close(&r));
}

TEST(stitch_reuses_a_stitched_range_without_mapping_again) {
  struct rig r;
  struct block b[4], big, again, other;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(four_then_two_free(&r, b) == 0);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &big), 0);
  r.ops->free(r.a, &big);
  uint64_t maps = r.d.c.maps, unmaps = r.d.c.unmaps;
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &again), 0);   /* still holding its pages */
  CHECK_EQ(again.addr, big.addr);
  CHECK_EQ(r.d.c.maps, maps);
  r.ops->free(r.a, &again);
  CHECK_EQ(rig_alloc_on(&r, PAGE, 0, &other), 0);     /* its pages go back home for this one... */
  CHECK(other.addr == b[1].addr || other.addr == b[3].addr);
  r.ops->free(r.a, &other);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &again), 0);   /* ...and the range, still mapped, serves again */
  CHECK_EQ(again.addr, big.addr);
  CHECK_EQ(r.d.c.maps, maps);
  CHECK_EQ(r.d.c.unmaps, unmaps);
  CHECK_EQ(r.d.reserved, 8 * MiB);
  CHECK(rig_close(&r));
}

/* eight 2 MiB blocks on eight new pages; the second, fourth and sixth freed and stitched
 * into one 6 MiB view, which is then freed (it keeps its three pages lent) */
static int six_mib_view(struct rig *r, struct block b[8], struct block *view) {
  for (int i = 0; i < 8; i++)
    if (rig_grew_on(r, PAGE, 0, &b[i]) != PAGE) return -1;
  for (int i = 1; i < 6; i += 2) r->ops->free(r->a, &b[i]);
  if (rig_alloc_on(r, 6 * MiB, 0, view)) return -1;
  r->ops->free(r->a, view);
  return 0;
}

TEST(stitch_serves_a_smaller_request_from_a_larger_views_front_without_mapping) {
  struct rig r;
  struct block b[8], view, small;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(six_mib_view(&r, b, &view) == 0);
  uint64_t maps = r.d.c.maps, vas = r.d.c.va_reserves;
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &small), 0);   /* no free 4 MiB block: the view's first two pages */
  CHECK_EQ(small.addr, view.addr);
  CHECK_EQ(r.d.c.maps, maps);
  CHECK_EQ(r.d.c.va_reserves, vas);
  CHECK_EQ(r.d.reserved, 16 * MiB);
  r.ops->free(r.a, &small);
  CHECK_EQ(rig_alloc_on(&r, 6 * MiB, 0, &view), 0);    /* whole again once freed */
  CHECK_EQ(view.addr, small.addr);
  CHECK_EQ(r.d.c.maps, maps);
  CHECK(rig_close(&r));
}

TEST(stitch_gives_back_the_idle_pages_of_a_view_serving_its_front_before_creating_memory) {
  struct rig r;
  struct block b[8], view, front, big;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(six_mib_view(&r, b, &view) == 0);
  r.ops->free(r.a, &b[0]);                              /* two free pages at home, apart */
  r.ops->free(r.a, &b[7]);
  uint64_t maps = r.d.c.maps, allocs = r.d.c.device_allocs;
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &front), 0);   /* the view's front; its third page idle, still lent */
  CHECK_EQ(front.addr, view.addr);
  CHECK_EQ(r.d.c.maps, maps);
  CHECK_EQ(rig_alloc_on(&r, 6 * MiB, 0, &big), 0);     /* three free pages: the two at home and the idle one */
  CHECK_EQ(r.d.c.device_allocs, allocs);                /* no new memory */
  CHECK_EQ(r.d.reserved, 16 * MiB);
  CHECK_EQ(r.d.c.maps, maps + 3);
  CHECK(rig_close(&r));
}

TEST(stitch_counts_a_page_mapped_twice_once_in_reserved) {
  struct rig r;
  struct block b[4], big;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(four_then_two_free(&r, b) == 0);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &big), 0);
  CHECK_EQ(r.d.c.maps, 6);                /* four pages at home, two of them again */
  CHECK_EQ(r.d.reserved, 8 * MiB);        /* four physical pages */
  CHECK_EQ(r.d.peak_reserved, 8 * MiB);
  struct alloc_stats st = {0};
  r.ops->stats(r.a, &st);
  CHECK_EQ(st.held, r.d.reserved);
  CHECK(rig_close(&r));
}

/* One 40 MiB block freed, then four 10 MiB blocks carved from its memory, the first and
 * third freed: 20 MiB free, but in two pieces. A 20 MiB request under a 40 MiB cap. */
static int fragmented_under_cap(struct rig *r, struct block *want) {
  struct block x, q[4];
  if (rig_alloc_on(r, 40 * MiB, 0, &x)) return -1;
  r->ops->free(r->a, &x);
  for (int i = 0; i < 4; i++)
    if (rig_alloc_on(r, 10 * MiB, 0, &q[i])) return -1;
  if (r->d.reserved != 40 * MiB) return -1;
  r->ops->free(r->a, &q[0]);
  r->ops->free(r->a, &q[2]);
  return rig_alloc_on(r, 20 * MiB, 0, want);
}

TEST(stitch_survives_a_cap_where_caching_ooms) {
  struct rig r;
  struct block want;
  if (!allocator_find("caching")) SKIP("no caching strategy");
  CHECK_MSG(rig_open_on(&r, "caching", 0, 40 * MiB, "") == 0, "%s", r.err);
  CHECK_EQ(fragmented_under_cap(&r, &want), FB_OOM);   /* contiguous only: the segment is split, nothing to release */
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open(&r, 40 * MiB, "") == 0, "%s", r.err);
  CHECK_EQ(fragmented_under_cap(&r, &want), 0);
  CHECK_EQ(r.d.peak_reserved, 40 * MiB);
  CHECK_EQ(flushes(&r), 0);
  CHECK(rig_close(&r));
}

TEST(stitch_small_requests_share_2mib_pages) {
  struct rig r;
  struct block s[8];
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < 8; i++) {
    CHECK_EQ(rig_alloc_on(&r, 200 * KiB + 1, 0, &s[i]), 0);   /* 8 x 200.5 KiB: one page */
    CHECK_EQ(s[i].size, 200 * KiB + 512);
    if (s[i].addr < lo) lo = s[i].addr;
    if (s[i].addr + s[i].size > hi) hi = s[i].addr + s[i].size;
  }
  CHECK_EQ(r.d.reserved, PAGE);
  CHECK(lo / PAGE == (hi - 1) / PAGE);
  for (int i = 0; i < 8; i++) r.ops->free(r.a, &s[i]);
  CHECK_EQ(rig_grew_on(&r, 1 * MiB, 0, &s[0]), 0);            /* the emptied page serves again */
  CHECK(rig_close(&r));
}

TEST(stitch_packs_large_requests_at_512_bytes_by_default) {
  struct rig r;
  struct block a, b;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &a), 0);
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &b), 0);
  CHECK_EQ(a.size, 3 * MiB);
  CHECK_EQ(b.addr, a.addr + 3 * MiB);      /* the second shares the first one's last page */
  CHECK_EQ(r.d.reserved, 6 * MiB);
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open(&r, 0, "large_round=2MiB") == 0, "%s", r.err);   /* GMLake's own rounding */
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &a), 0);
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &b), 0);
  CHECK_EQ(a.size, 4 * MiB);
  CHECK_EQ(r.d.reserved, 8 * MiB);
  CHECK(rig_close(&r));
}

TEST(stitch_keeps_at_most_max_stitched_ranges_mapped) {
  struct rig r;
  struct block b[4], big;
  CHECK_MSG(rig_open(&r, 0, "max_stitched=0") == 0, "%s", r.err);
  CHECK(four_then_two_free(&r, b) == 0);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &big), 0);
  uint64_t maps = r.d.c.maps, unmaps = r.d.c.unmaps, vas = r.d.c.va_releases;
  r.ops->free(r.a, &big);                  /* nothing may be kept: unmapped at once */
  CHECK_EQ(r.d.c.unmaps, unmaps + 2);
  CHECK_EQ(r.d.c.va_releases, vas + 1);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &big), 0);
  CHECK_EQ(r.d.c.maps, maps + 2);          /* stitched again */
  CHECK_EQ(r.d.reserved, 8 * MiB);
  CHECK(rig_close(&r));
}

TEST(stitch_empty_cache_unmaps_and_releases_free_pages) {
  struct rig r;
  struct block b[4], big, keep;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK(four_then_two_free(&r, b) == 0);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &big), 0);
  CHECK_EQ(rig_alloc_on(&r, 100 * KiB, 0, &keep), 0);   /* a small page that stays busy */
  r.ops->free(r.a, &big);
  r.ops->free(r.a, &b[0]);
  uint64_t unmaps = r.d.c.unmaps;
  r.ops->empty_cache(r.a);
  CHECK_EQ(r.d.reserved, 2 * PAGE);        /* b[2] and the small page stay */
  CHECK_EQ(r.d.c.unmaps, unmaps + 2 + 3);  /* the stitched range's two mappings, three pages at home */
  struct alloc_stats st = {0};
  r.ops->stats(r.a, &st);
  CHECK_EQ(st.held, r.d.reserved);
  uint64_t before = r.d.reserved;
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &big), 0);      /* released memory is created again */
  CHECK_EQ(r.d.reserved, before + 4 * MiB);
  CHECK(rig_close(&r));
}

TEST(stitch_creates_a_handle_per_page_by_default_and_at_most_handle_max_bytes) {
  struct rig r;
  struct block x;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(rig_alloc_on(&r, 16 * MiB, 0, &x), 0);
  CHECK_EQ(r.d.c.device_allocs, 8);        /* a handle per 2 MiB page, as GMLake */
  CHECK_EQ(r.d.c.maps, 8);
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open(&r, 0, "handle_max=8MiB") == 0, "%s", r.err);
  CHECK_EQ(rig_alloc_on(&r, 16 * MiB, 0, &x), 0);
  CHECK_EQ(r.d.c.device_allocs, 2);        /* at most four pages a handle */
  CHECK_EQ(r.d.c.maps, 2);
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open(&r, 0, "handle_max=0") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 16 * MiB, 0, &x), 16 * MiB);   /* one handle for the growth */
  CHECK_EQ(r.d.c.maps, 1);
  CHECK(rig_close(&r));
  CHECK(rig_open(&r, 0, "handle_max=3MiB") != 0);          /* not a multiple of a page */
}

TEST(stitch_grow_whole_grows_by_whole_handles_and_serves_the_next_request_from_the_spare) {
  struct rig r;
  struct block x, y;
  CHECK_MSG(rig_open(&r, 0, "handle_max=8MiB") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 3 * MiB, 0, &x), 4 * MiB);      /* the shortfall: 2 pages */
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &y), 4 * MiB);      /* and again */
  CHECK_EQ(r.d.c.device_allocs, 2);
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open(&r, 0, "handle_max=8MiB,grow_whole=1") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 3 * MiB, 0, &x), 8 * MiB);      /* one whole handle of 4 pages */
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &y), 0);            /* its spare 5 MiB serve this */
  CHECK_EQ(r.d.c.device_allocs, 1);
  CHECK_EQ(r.d.c.maps, 1);
  CHECK(y.addr >= x.addr + x.size && dev_holds(&r.d, y.addr, y.size));
  CHECK(rig_close(&r));
  CHECK_MSG(rig_open(&r, 0, "grow_whole=1") == 0, "%s", r.err);   /* 2 MiB handles: no change */
  CHECK_EQ(rig_alloc_on(&r, 3 * MiB, 0, &x), 0);
  CHECK_EQ(r.d.reserved, 4 * MiB);                          /* 2 pages, a handle each */
  CHECK_EQ(r.d.c.device_allocs, 2);
  CHECK(rig_close(&r));
}

TEST(stitch_maps_only_whole_free_handles_one_call_each) {
  struct rig r;
  struct block x, z, y, p, big;
  CHECK_MSG(rig_open(&r, 0, "handle_max=0") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 8 * MiB, 0, &x), 8 * MiB);   /* handle A: 4 pages */
  CHECK_EQ(rig_grew_on(&r, 4 * MiB, 0, &z), 4 * MiB);   /* handle C: 2 pages, after A */
  CHECK_EQ(rig_grew_on(&r, 8 * MiB, 0, &y), 8 * MiB);   /* handle B after C, stays busy */
  r.ops->free(r.a, &x);
  CHECK_EQ(rig_alloc_on(&r, PAGE, 0, &p), 0);           /* A's first page: A partly busy */
  CHECK_EQ(p.addr, x.addr);
  r.ops->free(r.a, &z);                                 /* one free block: A's last 3 pages and C */
  uint64_t maps = r.d.c.maps, allocs = r.d.c.device_allocs;
  CHECK_EQ(rig_alloc_on(&r, 12 * MiB, 0, &big), 0);     /* 6 pages: only C is a whole free handle */
  CHECK_EQ(r.d.c.device_allocs, allocs + 1);            /* a new handle of 4 pages... */
  CHECK_EQ(r.d.reserved, 28 * MiB);
  CHECK_EQ(r.d.c.maps, maps + 1 + 2);                   /* ...mapped at home; the view: C and it, a call each */
  CHECK(big.addr + big.size <= x.addr || big.addr >= y.addr + y.size);
  CHECK(dev_holds(&r.d, big.addr, big.size));
  CHECK(rig_close(&r));
}

TEST(stitch_gives_a_handle_back_only_when_all_its_pages_are_free) {
  struct rig r;
  struct block x, p;
  CHECK_MSG(rig_open(&r, 0, "handle_max=0") == 0, "%s", r.err);
  CHECK_EQ(rig_grew_on(&r, 8 * MiB, 0, &x), 8 * MiB);
  r.ops->free(r.a, &x);
  CHECK_EQ(rig_alloc_on(&r, PAGE, 0, &p), 0);   /* one page of the handle busy */
  r.ops->empty_cache(r.a);
  CHECK_EQ(r.d.c.device_frees, 0);
  CHECK_EQ(r.d.reserved, 8 * MiB);
  r.ops->free(r.a, &p);
  r.ops->empty_cache(r.a);
  CHECK_EQ(r.d.c.device_frees, 1);
  CHECK_EQ(r.d.reserved, 0);
  CHECK(rig_close(&r));
}

TEST(stitch_releases_its_cache_once_then_reports_oom) {
  struct rig r;
  struct block a, b;
  CHECK_MSG(rig_open(&r, 8 * MiB, "") == 0, "%s", r.err);
  CHECK_EQ(rig_alloc_on(&r, 6 * MiB, 0, &a), 0);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &b), FB_OOM);
  CHECK_EQ(flushes(&r), 1);
  CHECK_EQ(r.d.reserved, 6 * MiB);
  CHECK_MSG(r.ops->check(r.a, r.err) == 0, "%s", r.err);
  r.ops->free(r.a, &a);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 0, &b), 0);   /* the freed memory serves */
  CHECK(rig_close(&r));
}

TEST(stitch_streams_take_each_others_free_pages_only_in_a_range_of_their_own) {
  struct rig r;
  struct block a, b;
  CHECK_MSG(rig_open(&r, 0, "") == 0, "%s", r.err);
  CHECK_EQ(rig_alloc_on(&r, 4 * MiB, 1, &a), 0);
  r.ops->free(r.a, &a);
  CHECK_EQ(rig_alloc_on(&r, 2 * MiB, 2, &b), 0);   /* another stream: not stream 1's free block */
  CHECK(b.addr + b.size <= a.addr || b.addr >= a.addr + a.size);
  CHECK_EQ(r.d.reserved, 4 * MiB);                 /* but stream 1's free pages, stitched: no new memory */
  CHECK(rig_close(&r));
}

/* Views built, released run by run, reclaimed, repaired and evicted many times over
 * (random sizes and lifetimes; max_stitched=2 evicts constantly): every structure stays
 * consistent (check() under --validate, which also checks that the holding list is the
 * LRU list's views with pages lent to them, in order), and destroy gives everything back. */
TEST(stitch_stays_consistent_through_view_churn) {
  const char *allocators[] = {"stitch", "stitch:max_stitched=2"};
  for (int i = 0; i < 2; i++) {
    struct run_spec s = {.workload = "random:events=40000", .allocator = allocators[i], .trace_device = -1, .world = 1,
                         .seed = 1, .device = {.kind = "sim"}, .quiet = 1, .validate = 1};
    struct run_result r;
    run_result_init(&r);
    CHECK_MSG(replay_run(&s, &r) == 0 && r.completed, "%s: %s", allocators[i], r.status);
    CHECK_MSG(!strcmp(r.status, "ok"), "%s: %s", allocators[i], r.status);
  }
}

/* ---- the target: overhead <= 1.05 on every shared trace and every generator ---- */

static const char *const shared_traces[] = {
  "gpt_train.pickle.gz", "leaky_losses.pickle.gz", "resnet_varsize.pickle.gz", "gpt_train_short_frames.pickle",
  "leaky_losses.rmm.csv",
};

static int run_row(const char *trace, const char *workload, const char *allocator, struct run_result *r) {
  struct run_spec s = {.trace = trace, .workload = workload, .allocator = allocator, .trace_device = -1, .world = 1,
                       .seed = 1, .device = {.kind = "sim"}, .quiet = 1};
  run_result_init(r);
  return replay_run(&s, r);
}

TEST(stitch_overhead_at_most_1_05_on_every_shared_trace) {
  for (size_t i = 0; i < sizeof shared_traces / sizeof shared_traces[0]; i++) {
    struct run_result r;
    CHECK_MSG(run_row(test_data(shared_traces[i]), NULL, "stitch", &r) == 0, "%s: %s", shared_traces[i], r.status);
    CHECK_MSG(r.completed && r.overhead <= 1.05, "%s: overhead %.4f", shared_traces[i], r.overhead);
    printf("    %-32s stitch overhead %.4f  maps %llu  modeled %.0f ms\n", shared_traces[i], r.overhead,
           (unsigned long long)r.maps, (double)r.modeled_driver_ns / 1e6);
  }
}

/* Every generator at its defaults (what `make bench` runs). Where stitch is above 1.05,
 * the offline oracle (greedy by size with the whole workload known) is run on the same
 * events: the target is only missed where the oracle misses it too, and then stitch may
 * be no worse than the oracle. `random` (log-uniform sizes, random lifetimes) is such a
 * workload: oracle 1.059, stitch 1.052 at the time of writing. */
LONG_TEST(stitch_overhead_at_most_1_05_on_every_generator_or_within_the_oracle) {
  int n = 0, bad = 0;
  for (int i = 0; workload_table[i]; i++) {
    const struct workload_ops *w = workload_table[i];
    if (w->is_trace || !strcmp(w->name, "script")) continue;   /* script has no events of its own */
    struct run_result r, o;
    CHECK_MSG(run_row(NULL, w->name, "stitch", &r) == 0 && r.completed, "%s: %s", w->name, r.status);
    printf("    %-32s stitch overhead %.4f  maps %llu  modeled %.0f ms\n", w->name, r.overhead,
           (unsigned long long)r.maps, (double)r.modeled_driver_ns / 1e6);
    n++;
    if (r.overhead <= 1.05) continue;
    CHECK_MSG(run_row(NULL, w->name, "oracle", &o) == 0 && o.completed, "%s: oracle: %s", w->name, o.status);
    printf("    %-32s above 1.05: the oracle's overhead is %.4f\n", w->name, o.overhead);
    if (o.overhead <= 1.05 || r.overhead > o.overhead) {
      test_fail(__FILE__, __LINE__, "%s: stitch overhead %.4f (oracle %.4f)", w->name, r.overhead, o.overhead);
      bad++;
    }
  }
  CHECK(n > 0);
  CHECK(!bad);
}
