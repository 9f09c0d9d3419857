/* test_cap_blind.c - a strategy that says it makes its uncapped run under any cap it never
 * reached (run_result.blind_unreached: cap-blind, allocator.h, it learns of a cap only from
 * refused reservations; or ALLOC_CAP_READ_IN_USE, async, whose own read of the cap cannot
 * break at or above the peak requested) replays under such a cap exactly as uncapped:
 * every one, on several inputs, capped at its own uncapped peak reserved and above it. And the rule
 * mincap's confirmation takes from it (mincap_uncapped_stands): the uncapped run on the
 * confirming device stands for the run at the mincap only for such a strategy, a run that
 * completed, uncapped, and reserved at most the mincap. */
#include <string.h>
#include "allocator.h"
#include "mincap.h"
#include "replay.h"
#include "test.h"

static void replay_capped(const char *src, int is_trace, const char *alloc, uint64_t cap, struct run_result *r) {
  struct run_spec s = {.trace = is_trace ? src : NULL, .workload = is_trace ? NULL : src, .trace_device = -1, .world = 1,
                       .quiet = 1, .seed = 1, .allocator = alloc, .cap_bytes = cap};
  s.device.kind = "sim";
  run_result_init(r);
  replay_run(&s, r);
}

TEST(cap_blind_strategies_replay_under_an_unmet_cap_as_uncapped) {
  const char *src[] = {"tests/data/gpt_train_short_frames.pickle", "tests/data/leaky_losses.pickle.gz", "varlen", "checkpointing"};
  int is_trace[] = {1, 1, 0, 0};
  int nblind = 0;
  for (int i = 0; allocator_table[i]; i++) {
    const char *name = allocator_table[i]->name;
    for (int k = 0; k < 4; k++) {
      struct run_result u, c;
      replay_capped(src[k], is_trace[k], name, 0, &u);
      if (!u.blind_unreached || !u.completed) continue;
      CHECK_MSG(u.cap_blind || !strcmp(name, "async"), "%s: blind to unreached caps but not cap-blind", name);
      nblind += k == 0;
      uint64_t caps[] = {u.peak_reserved, u.peak_reserved + u.peak_reserved / 16, u.peak_reserved * 3 / 2, u.peak_reserved * 3};
      for (int j = 0; j < 4; j++) {   /* any cap at or above what it reserved */
        replay_capped(src[k], is_trace[k], name, caps[j], &c);
        CHECK_MSG(c.completed && !strcmp(c.status, u.status), "%s on %s: capped at %llu: %s", name, src[k], (unsigned long long)caps[j], c.status);
        CHECK_MSG(c.peak_reserved == u.peak_reserved && c.peak_allocated == u.peak_allocated, "%s on %s: cap %llu", name, src[k],
                  (unsigned long long)caps[j]);
        CHECK_MSG(c.device_allocs == u.device_allocs && c.device_frees == u.device_frees && c.maps == u.maps &&
                  c.unmaps == u.unmaps && c.cache_flushes == u.cache_flushes, "%s on %s: cap %llu: other device calls", name, src[k],
                  (unsigned long long)caps[j]);
        CHECK_MSG(c.ext_frag == u.ext_frag && c.internal_frag == u.internal_frag && c.events == u.events,
                  "%s on %s: cap %llu: other figures", name, src[k], (unsigned long long)caps[j]);
      }
    }
  }
  CHECK(nblind >= 6);   /* raw, caching, pool, stitch, oracle, cupy, async say so today */
  struct run_result r;
  replay_capped(src[0], 1, "raw", 0, &r);
  CHECK(r.cap_blind && r.blind_unreached);
  replay_capped(src[0], 1, "async", 0, &r);   /* reads the cap itself, against the bytes in use */
  CHECK(!r.cap_blind && r.blind_unreached);
  replay_capped(src[0], 1, "caching:garbage_collection_threshold=0.8", 0, &r);   /* reads a fraction of the cap */
  CHECK(!r.cap_blind);
  CHECK(!r.blind_unreached);
  replay_capped(src[0], 1, "expandable", 0, &r);   /* refuses by the cap itself, before the device would */
  CHECK(!r.cap_blind && !r.blind_unreached);
}

/* async under a cap below its peak requested refuses by itself (bytes in use + the request),
 * where no device would: that read is why it is blind only to caps it never reached */
TEST(async_refuses_by_itself_only_under_its_peak_requested) {
  struct run_result u, c;
  replay_capped("varlen", 0, "async", 0, &u);
  CHECK(u.completed && u.peak_requested);
  replay_capped("varlen", 0, "async", u.peak_requested - 1, &c);
  CHECK(!c.completed);
  replay_capped("varlen", 0, "async", u.peak_reserved, &c);
  CHECK(c.completed && c.peak_reserved == u.peak_reserved);
}

TEST(mincap_uncapped_row_stands_only_for_a_blind_run_within_the_cap) {
  struct run_result row, u;
  run_result_init(&row);
  run_result_init(&u);
  row.blind_unreached = 1;
  row.mincap_bytes = 1000;
  u.completed = 1;
  u.peak_reserved = 1000;
  CHECK(mincap_uncapped_stands(&row, &u));    /* reserved exactly the mincap: never refused */
  CHECK(!mincap_uncapped_stands(&row, NULL));
  u.peak_reserved = 1001;
  CHECK(!mincap_uncapped_stands(&row, &u));   /* met the cap: the run at it differs */
  u.peak_reserved = 10;
  CHECK(mincap_uncapped_stands(&row, &u));
  row.blind_unreached = 0;
  CHECK(!mincap_uncapped_stands(&row, &u));   /* a strategy that reads the cap */
  row.blind_unreached = 1;
  u.completed = 0;
  CHECK(!mincap_uncapped_stands(&row, &u));   /* did not complete */
  u.completed = 1;
  snprintf(u.status, sizeof u.status, "oom");
  CHECK(!mincap_uncapped_stands(&row, &u));
  snprintf(u.status, sizeof u.status, "ok");
  u.cap_bytes = 5000;
  CHECK(!mincap_uncapped_stands(&row, &u));   /* not an uncapped row */
  u.cap_bytes = 0;
  row.mincap_bytes = 0;
  CHECK(!mincap_uncapped_stands(&row, &u));   /* no mincap found */
}
