/* test_oracle_cache.c - the oracle's plans kept in the process (allocators/oracle_cache.c):
 * every row of one input plans once, whatever its cap, and gets the rows a plan of its own
 * gives; inputs that differ (another seed, another generator) never share a plan; and the
 * engine's helper (harness/engine/plan_ahead.c) makes a row's plan before the row runs. */
#include <stdlib.h>
#include <time.h>
#include "test.h"
#include "oracle.h"
#include "plan_ahead.h"
#include "replay.h"

static void spec_of(struct run_spec *s, const char *workload, const char *allocator, uint64_t seed, uint64_t cap) {
  memset(s, 0, sizeof *s);
  s->workload = workload;
  s->trace_device = -1;
  s->world = 1;
  s->seed = seed;
  s->allocator = allocator;
  s->device.kind = "sim";
  s->cap_bytes = cap;
  s->quiet = 1;
}

static void run_row(const char *workload, uint64_t seed, uint64_t cap, struct run_result *r) {
  struct run_spec s;
  spec_of(&s, workload, "oracle", seed, cap);
  run_result_init(r);
  replay_run(&s, r);
}

static int same_row(const struct run_result *a, const struct run_result *b) {
  return !strcmp(a->status, b->status) && a->completed == b->completed && a->peak_reserved == b->peak_reserved &&
         a->peak_requested == b->peak_requested && a->first_oom_event == b->first_oom_event && a->device_allocs == b->device_allocs;
}

TEST(oracle_plans_an_input_once_and_every_row_gets_its_own_plans_rows) {
  oracle_cache_clear();
  uint64_t made0, taken0, made, taken;
  oracle_cache_counts(&made0, &taken0);
  struct run_result uncapped, big, small;
  run_row("train_loop", 1, 0, &uncapped);
  CHECK_STR(uncapped.status, "ok");
  run_row("train_loop", 1, 2 * uncapped.peak_reserved, &big);
  run_row("train_loop", 1, uncapped.peak_reserved / 2, &small);   /* the arena does not fit: an OOM at the first request */
  oracle_cache_counts(&made, &taken);
  CHECK_EQ(made - made0, 1);
  CHECK_EQ(taken - taken0, 2);
  CHECK_STR(small.status, "oom");
  /* the same rows with a plan made for each */
  struct run_result fresh;
  oracle_cache_clear();
  run_row("train_loop", 1, 2 * uncapped.peak_reserved, &fresh);
  CHECK(same_row(&fresh, &big));
  oracle_cache_clear();
  run_row("train_loop", 1, uncapped.peak_reserved / 2, &fresh);
  CHECK(same_row(&fresh, &small));
  oracle_cache_clear();
  run_row("train_loop", 1, 0, &fresh);
  CHECK(same_row(&fresh, &uncapped));
}

TEST(oracle_plans_of_different_inputs_are_kept_apart) {
  const char *w[] = {"varlen", "varlen", "train_loop"};
  const uint64_t seed[] = {1, 2, 1};
  struct run_result kept[3], fresh;
  oracle_cache_clear();
  uint64_t made0, taken0, made, taken;
  oracle_cache_counts(&made0, &taken0);
  for (int i = 0; i < 3; i++) run_row(w[i], seed[i], 0, &kept[i]);
  oracle_cache_counts(&made, &taken);
  CHECK_EQ(made - made0, 3);     /* another seed of varlen is another input */
  CHECK_EQ(taken - taken0, 0);
  CHECK(kept[0].peak_requested != kept[1].peak_requested || kept[0].peak_reserved != kept[1].peak_reserved);
  for (int i = 0; i < 3; i++) {
    oracle_cache_clear();
    run_row(w[i], seed[i], 0, &fresh);
    CHECK_MSG(same_row(&fresh, &kept[i]), "%s seed %llu", w[i], (unsigned long long)seed[i]);
  }
}

TEST(plan_ahead_makes_a_rows_plan_before_the_row_runs) {
  oracle_cache_clear();
  struct run_spec specs[2];
  spec_of(&specs[0], "train_loop", "caching", 1, 0);   /* no prepare step: passed over */
  spec_of(&specs[1], "train_loop", "oracle", 1, 0);
  uint64_t base[2] = {SIM_TOTAL_DEFAULT, SIM_TOTAL_DEFAULT};
  uint64_t made0, taken0, made, taken;
  oracle_cache_counts(&made0, &taken0);
  struct plan_ahead a;
  CHECK_EQ(plan_ahead_start(&a, specs, base, 2), 1);
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {   /* the helper's plan, within 30 s */
    oracle_cache_counts(&made, &taken);
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (made == made0 && now.tv_sec - t0.tv_sec < 30);
  plan_ahead_stop(&a);
  CHECK_EQ(made - made0, 1);
  struct run_result r;
  run_row("train_loop", 1, 0, &r);
  CHECK_STR(r.status, "ok");
  oracle_cache_counts(&made, &taken);
  CHECK_EQ(made - made0, 1);     /* the row took the helper's plan */
  CHECK_EQ(taken - taken0, 1);
  /* rows with nothing to prepare: no helper */
  CHECK_EQ(plan_ahead_start(&a, specs, base, 1), 0);
  plan_ahead_stop(&a);
}
