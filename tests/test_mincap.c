/* test_mincap.c - `mincap` (the smallest cap that completes) against hand-computed
 * values on script workloads, its non-monotonic flag, its CLI row; and caps on every
 * registered strategy: an OOM is a result (first_oom_event, oom_count, completed),
 * --on-oom skip goes on, and each strategy recovers under a cap as its anchor does. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "mincap.h"
#include "replay.h"

#include "mincap_spec.h"

TEST(mincap_raw_is_peak_requested_by_hand) {
  struct run_spec s;
  base_spec(&s, SCRIPT_SMALL, "raw");
  struct run_result r;
  struct mincap_report rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.peak_requested, 8 * MiB);
  CHECK_EQ(r.mincap_bytes, 8388608);
  CHECK_EQ(r.cap_bytes, 8388608);
  CHECK(fabs(r.mincap_x - 1.0) < 1e-12);
  CHECK_EQ(r.completed, 1);
  CHECK_EQ(rep.lo, 0);                 /* peak_requested itself completed: no bisection */
}

TEST(mincap_caching_is_one_large_segment_by_hand) {
  if (!registered("caching")) SKIP("caching not registered");
  struct run_spec s;
  base_spec(&s, SCRIPT_SMALL, "caching");
  struct run_result r;
  struct mincap_report rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.mincap_bytes, 20971520);
  CHECK_EQ(r.cap_bytes, 20971520);
  CHECK_EQ(r.peak_reserved, 20 * MiB);
  CHECK(fabs(r.mincap_x - 2.5) < 1e-12);
  CHECK(rep.lo >= 8 * MiB && rep.lo < 20 * MiB);   /* a failing cap was seen below it */
}

/* a1=1MiB/a2=12MiB/f2/a3=14MiB/f3/f1
 *   live requested: 1, 13, 1, 15, 1, 0 MiB -> peak_requested = 15 MiB.
 *   caching: a1 (<= 1 MiB) takes a 2 MiB small-pool segment; a2 (>= 10 MiB) a 12 MiB
 *   segment; freed, it is cached; a3 (14 MiB) does not fit in it, so uncapped a 14 MiB
 *   segment is added: 2 + 12 + 14 = 28 MiB reserved. Under a cap c below 28 MiB, a3
 *   fails, the unsplit cached 12 MiB segment is released (one cache flush) and the retry
 *   needs 2 + 14 = 16 MiB. So mincap = 16 MiB = 16777216 bytes, strictly between
 *   peak_requested and the uncapped peak: bisection, then the survivor's own peak. */
#define SCRIPT_FLUSH "script:events=a1=1MiB/a2=12MiB/f2/a3=14MiB/f3/f1"

TEST(mincap_caching_with_a_flush_by_hand) {
  if (!registered("caching")) SKIP("caching not registered");
  struct run_spec s;
  base_spec(&s, SCRIPT_FLUSH, "caching");
  struct run_result r;
  struct mincap_report rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.peak_requested, 15 * MiB);
  CHECK_EQ(r.mincap_bytes, 16777216);
  CHECK_EQ(r.cache_flushes, 1);
  CHECK(fabs(r.mincap_x - 16.0 / 15.0) < 1e-12);
  CHECK(rep.lo >= 15 * MiB && rep.lo < 16 * MiB);
  CHECK(rep.runs > 4);                /* uncapped, floor, R, bisection steps, checks above */
  /* raw on the same: 15 MiB, the floor */
  base_spec(&s, SCRIPT_FLUSH, "raw");
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, NULL), 0);
  CHECK_EQ(r.mincap_bytes, 15 * MiB);
}

/* a1=30MiB/f1/a2=32MiB/a3=10MiB/f2/a4=50MiB/f3/f4   (all >= 10 MiB: exact-size segments)
 *   peak_requested = a3 + a4 = 60 MiB.
 *   caching, cap >= 62 MiB: a2 gets its own segment next to the cached 30 MiB one (62 MiB),
 *     a3 then splits the cached 30 MiB segment (pinning it), f2 frees the 32 MiB one; a4
 *     needs 62 + 50, the flush releases only the 32 MiB segment: 30 + 50 = 80 MiB. So every
 *     cap in [62, 80) MiB fails.
 *   caching, cap in [60, 62) MiB: a2 flushes the cached 30 MiB segment (32 MiB), a3 takes a
 *     fresh 10 MiB segment (42), a4 flushes the 32 MiB one: 10 + 50 = 60 MiB. Completes.
 *   So mincap = 60 MiB, but 60 MiB * 1.05 = 63 MiB fails: the row is flagged. */
#define SCRIPT_NONMONO "script:events=a1=30MiB/f1/a2=32MiB/a3=10MiB/f2/a4=50MiB/f3/f4"

TEST(mincap_flags_non_monotonic_caps) {
  if (!registered("caching")) SKIP("caching not registered");
  struct run_spec s;
  base_spec(&s, SCRIPT_NONMONO, "caching");
  struct run_result r;
  struct mincap_report rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK_EQ(r.mincap_bytes, 60 * MiB);
  CHECK_EQ(rep.fails_above, (uint64_t)ceil(60.0 * MiB * 1.05));
  CHECK_CONTAINS(r.status, "ok: non-monotonic (fails at 66060288 bytes = +5%)");
  CHECK_EQ(r.completed, 1);
  CHECK_EQ(r.cache_flushes, 2);
  /* raw completes at every cap from 60 MiB up: not flagged */
  base_spec(&s, SCRIPT_NONMONO, "raw");
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(rep.fails_above, 0);
  CHECK_EQ(r.mincap_bytes, 60 * MiB);
}

/* bfc (chunk_order=address: the sim's raw address order) on grad_accumulation completes
 * at 1.10x and at 1.17x of its peak requested but not at 1.15x: bisection from the
 * uncapped peak lands above the gap, so mincap also tries a grid of caps below the last
 * failing one. The smallest completing cap found is reported (at most 1.10x, which the cap
 * sweep shows completes), the row is flagged, and a run at the reported cap completes. */
TEST(mincap_finds_a_completing_cap_below_a_failing_one) {
  if (!registered("bfc")) SKIP("bfc not registered");
  struct run_spec s;
  base_spec(&s, "grad_accumulation", "bfc:chunk_order=address");
  s.validate = 0;
  struct run_result r;
  struct mincap_report rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK_MSG(r.mincap_x <= 1.10 + 1e-9, "mincap_x %.4f: the cap sweep completes at 1.10x", r.mincap_x);
  CHECK_CONTAINS(r.status, "ok: non-monotonic");
  CHECK(rep.fails_above > r.mincap_bytes);
  struct run_result again;
  run_result_init(&again);
  s.cap_bytes = r.mincap_bytes;
  replay_run(&s, &again);
  CHECK_STR(again.status, "ok");
  s.cap_bytes = rep.fails_above;
  run_result_init(&again);
  replay_run(&s, &again);
  CHECK_STR(again.status, "oom");
}

/* every strategy: the surviving row is a completed run at cap = mincap, between the
 * floor and the uncapped peak, with the validator on in every probe; deterministic */
#define SCRIPT_MIXED "script:events=a1=700KiB/a2=3MiB@1/a3=12MiB/f2/a4=5000000/a5=300/f1/a6=25MiB/f4/a7=9MiB@1/f3/f5/f6/f7,repeat=3"

TEST(mincap_every_strategy_row_is_consistent) {
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    struct run_spec s;
    base_spec(&s, SCRIPT_MIXED, a->name);
    struct run_result r, r2;
    struct mincap_report rep;
    int cls = mincap_find(&s, 0.005, 0, &r, &rep);
    CHECK_MSG(cls == 0, "%s: exit class %d: %s", a->name, cls, r.status);
    if (!strncmp(r.status, "skipped", 7)) {
      CHECK_MSG(a->flags & ALLOC_NEEDS_POOL, "%s skipped: %s", a->name, r.status);
      CHECK_EQ(r.mincap_bytes, 0);
      continue;
    }
    CHECK_MSG(!strncmp(r.status, "ok", 2), "%s: %s", a->name, r.status);
    CHECK_EQ(r.completed, 1);
    CHECK_EQ(r.cap_bytes, r.mincap_bytes);
    CHECK_MSG(r.mincap_bytes >= r.peak_requested, "%s: mincap %llu below peak_requested %llu", a->name,
              (unsigned long long)r.mincap_bytes, (unsigned long long)r.peak_requested);
    CHECK(r.peak_reserved <= r.mincap_bytes);
    CHECK(fabs(r.mincap_x - (double)r.mincap_bytes / (double)r.peak_requested) < 1e-9);
    if (rep.lo) {   /* the largest failing cap seen is within precision below */
      CHECK((double)(r.mincap_bytes - rep.lo) <= 0.005 * (double)r.mincap_bytes + 1);
      struct run_spec sl = s;
      sl.cap_bytes = rep.lo;
      run_result_init(&r2);
      replay_run(&sl, &r2);
      CHECK_MSG(!r2.completed || strcmp(r2.status, "ok"), "%s: cap %llu below the mincap completes", a->name,
                (unsigned long long)rep.lo);
    }
    CHECK_EQ(mincap_find(&s, 0.005, 0, &r2, NULL), 0);   /* deterministic on sim */
    CHECK_EQ(r2.mincap_bytes, r.mincap_bytes);
    CHECK_EQ(r2.peak_reserved, r.peak_reserved);
    CHECK_STR(r2.status, r.status);
  }
}

/* mincap_need (advise's needs) is the search without the three replays above the cap:
 * the same cap and surviving run as mincap_find on every strategy, on the scripts where
 * the cap is non-monotonic above (flagged by mincap_find only) and below (flagged by both),
 * in exactly 3 fewer replays wherever mincap_find ran all three */
TEST(mincap_need_is_the_same_cap_without_the_steps_above) {
  const char *scripts[] = {SCRIPT_MIXED, SCRIPT_NONMONO, "grad_accumulation"};
  for (int k = 0; k < 3; k++)
    for (int i = 0; allocator_table[i]; i++) {
      const struct allocator_ops *a = allocator_table[i];
      if (a->flags & ALLOC_NEEDS_POOL) continue;
      struct run_spec s;
      base_spec(&s, scripts[k], k == 2 && !strcmp(a->name, "bfc") ? "bfc:chunk_order=address" : a->name);
      s.validate = 0;
      struct run_result f, n;
      struct mincap_report rf, rn;
      CHECK_EQ(mincap_find(&s, 0.005, 0, &f, &rf), 0);
      CHECK_EQ(mincap_need(&s, 0.005, NULL, &n, &rn), 0);
      CHECK_MSG(n.mincap_bytes == f.mincap_bytes, "%s on %s: need %llu, find %llu", a->name, scripts[k],
                (unsigned long long)n.mincap_bytes, (unsigned long long)f.mincap_bytes);
      CHECK_EQ(n.peak_reserved, f.peak_reserved);
      CHECK_EQ(n.peak_requested, f.peak_requested);
      CHECK_EQ(rn.hi, rf.hi);
      CHECK_EQ(rn.lo, rf.lo);
      int above = !rf.fails_above ? 3 : 0;   /* all three completed above: none of them in need's count */
      if (above) CHECK_MSG(rn.runs == rf.runs - 3, "%s on %s: %d runs, find %d", a->name, scripts[k], rn.runs, rf.runs);
      else CHECK(rn.runs <= rf.runs);
      if (k == 1 && !strcmp(a->name, "caching")) {   /* flagged above by find only */
        CHECK_CONTAINS(f.status, "non-monotonic");
        CHECK_STR(n.status, "ok");
      }
    }
}

/* the CSV column by header name, from a file written by the CLI (row 1 = first data row) */
static int csv_cell(const char *text, int row, const char *col, char *out, size_t len) {
  const char *hdr = text;   /* the header is the first line */
  int idx = -1, k = 0;
  const char *p = hdr;
  while (*p && *p != '\n') {
    const char *e = p;
    while (*e && *e != ',' && *e != '\n') e++;
    if ((size_t)(e - p) == strlen(col) && !strncmp(p, col, (size_t)(e - p))) idx = k;
    k++;
    p = *e == ',' ? e + 1 : e;
  }
  if (idx < 0) return -1;
  const char *line = strchr(hdr, '\n');
  for (int i = 1; i < row && line; i++) line = strchr(line + 1, '\n');
  if (!line) return -1;
  line++;
  /* fields may be quoted */
  for (k = 0; *line && *line != '\n'; k++) {
    char buf[1024];
    size_t n = 0;
    if (*line == '"') {
      line++;
      while (*line && !(*line == '"' && line[1] != '"')) { if (*line == '"') line++; if (n < sizeof buf - 1) buf[n++] = *line; line++; }
      if (*line == '"') line++;
    } else {
      while (*line && *line != ',' && *line != '\n') { if (n < sizeof buf - 1) buf[n++] = *line; line++; }
    }
    buf[n] = 0;
    if (k == idx) { snprintf(out, len, "%s", buf); return 0; }
    if (*line == ',') line++;
  }
  return -1;
}

TEST(mincap_cli_writes_the_surviving_row) {
  char out[512], err[512], cell[256];
  snprintf(out, sizeof out, "%s/mincap.csv", test_tmpdir());
  snprintf(err, sizeof err, "%s/mincap.err", test_tmpdir());
  int rc = test_cli(NULL, err, "mincap", "--workload", SCRIPT_SMALL, "--allocator", "raw", "--allocator", "async",
                    "--device", "sim", "--validate", "--out", out, NULL);
  char *e = test_read_file(err);
  CHECK_MSG(rc == 0, "exit %d: %s", rc, e ? e : "");
  free(e);
  char *csv = test_read_file(out);
  CHECK(csv != NULL);
  CHECK(csv_cell(csv, 1, "allocator", cell, sizeof cell) == 0);
  CHECK_STR(cell, "raw");
  CHECK(csv_cell(csv, 1, "mincap_bytes", cell, sizeof cell) == 0);
  CHECK_STR(cell, "8388608");
  CHECK(csv_cell(csv, 1, "cap_bytes", cell, sizeof cell) == 0);
  CHECK_STR(cell, "8388608");
  CHECK(csv_cell(csv, 1, "mincap_x", cell, sizeof cell) == 0);
  CHECK_STR(cell, "1.0000");
  CHECK(csv_cell(csv, 1, "status", cell, sizeof cell) == 0);
  CHECK_STR(cell, "ok");
  CHECK(csv_cell(csv, 1, "completed", cell, sizeof cell) == 0);
  CHECK_STR(cell, "1");
  if (registered("async")) {   /* the pool model on sim: one 32 MiB chunk is what it needs */
    CHECK(csv_cell(csv, 2, "status", cell, sizeof cell) == 0);
    CHECK_STR(cell, "ok");
    CHECK(csv_cell(csv, 2, "mincap_bytes", cell, sizeof cell) == 0);
    CHECK_STR(cell, "33554432");
  }
  free(csv);
  CHECK_EQ(test_cli(NULL, NULL, "mincap", "--workload", SCRIPT_SMALL, "--cap-x", "1.5", "--device", "sim", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "mincap", "--workload", SCRIPT_SMALL, "--on-oom", "skip", "--device", "sim", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "mincap", "--device", "sim", NULL), 2);
}

/* ---- caps on every strategy ---- */

/* a1=4MiB/a2=8MiB/a3=64MiB/f1/f2/f3/a4=1MiB/f4 under a 32 MiB cap: a3 (event 2) can
 * never fit, whatever the strategy; everything else fits in any of them. */
#define SCRIPT_TOO_BIG "script:events=a1=4MiB/a2=8MiB/a3=64MiB/f1/f2/f3/a4=1MiB/f4"

TEST(caps_oom_stops_the_row_and_records_where) {
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    if (a->flags & ALLOC_NEEDS_POOL) continue;
    struct run_spec s;
    base_spec(&s, SCRIPT_TOO_BIG, a->name);
    s.cap_bytes = 32 * MiB;
    struct run_result r;
    run_result_init(&r);
    int cls = replay_run(&s, &r);
    CHECK_MSG(cls == 0, "%s: %s", a->name, r.status);
    CHECK_MSG(!strcmp(r.status, "oom"), "%s: status %s", a->name, r.status);
    CHECK_EQ(r.completed, 0);
    CHECK_EQ(r.oom_count, 1);
    CHECK_EQ(r.events, (uint64_t)r.first_oom_event);   /* the row stopped at the failing event */
    CHECK(r.peak_reserved <= 32 * MiB);
    if (a->flags & ALLOC_OFFLINE) {   /* a planner may take its whole arena at the first request */
      CHECK(r.first_oom_event >= 0 && r.first_oom_event <= 2);
      continue;
    }
    CHECK_MSG(r.first_oom_event == 2, "%s: first_oom_event %lld", a->name, (long long)r.first_oom_event);
  }
}

TEST(caps_oom_skip_goes_on) {
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    if (a->flags & ALLOC_NEEDS_POOL) continue;
    struct run_spec s;
    base_spec(&s, SCRIPT_TOO_BIG, a->name);
    s.cap_bytes = 32 * MiB;
    s.on_oom = ON_OOM_SKIP;
    struct run_result r;
    run_result_init(&r);
    int cls = replay_run(&s, &r);
    CHECK_MSG(cls == 0, "%s: %s", a->name, r.status);
    CHECK_MSG(!strcmp(r.status, "oom"), "%s: status %s", a->name, r.status);
    CHECK_EQ(r.completed, 1);
    CHECK_EQ(r.events, 8);
    CHECK_EQ(r.allocs, 4);
    CHECK(r.peak_reserved <= 32 * MiB);
    if (a->flags & ALLOC_OFFLINE) {   /* a planner's arena may not fit at all: every request OOMs */
      CHECK(r.oom_count >= 1 && r.first_oom_event >= 0 && r.first_oom_event <= 2);
      continue;
    }
    CHECK_EQ(r.oom_count, 1);
    CHECK_EQ(r.first_oom_event, 2);
    CHECK_EQ(r.frees, 3);             /* the free of the skipped request is not a call */
    CHECK_EQ(r.skipped_events, 0);
    CHECK_EQ(r.peak_requested, 12 * MiB);
  }
}

/* a1=12MiB/f1/a2=14MiB/f2 under a 14 MiB cap: a2 fits only if the 12 MiB the strategy
 * cached for a1 goes back to the device first. How each anchor recovers:
 *   raw      nothing cached: completes, no flush
 *   caching  release unsplit free segments and retry: completes, one flush
 *   bfc      garbage_collection=1 (TF's GPU default): frees wholly free regions and
 *            extends again: completes
 *   pool     RMM's pool never returns memory before destruction: OOM
 * other strategies: an OOM or a completion, both consistent (validator on). */
#define SCRIPT_RECOVER "script:events=a1=12MiB/f1/a2=14MiB/f2"

TEST(caps_each_strategy_recovers_as_its_anchor) {
  static const struct { const char *name; int completes; int flushes; } expect[] = {
    {"raw", 1, 0}, {"caching", 1, 1}, {"bfc", 1, -1}, {"pool", 0, -1},
  };
  int checked = 0;
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    if (a->flags & ALLOC_NEEDS_POOL) continue;
    struct run_spec s;
    base_spec(&s, SCRIPT_RECOVER, a->name);
    s.cap_bytes = 14 * MiB;
    struct run_result r;
    run_result_init(&r);
    int cls = replay_run(&s, &r);
    CHECK_MSG(cls == 0, "%s: %s", a->name, r.status);
    CHECK_MSG(!strcmp(r.status, "ok") || !strcmp(r.status, "oom"), "%s: %s", a->name, r.status);
    CHECK_EQ(r.completed, !strcmp(r.status, "ok"));
    CHECK_EQ(r.first_oom_event >= 0, r.oom_count > 0);
    CHECK(r.peak_reserved <= 14 * MiB);
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) {
      if (strcmp(expect[k].name, a->name)) continue;
      CHECK_MSG(r.completed == expect[k].completes, "%s under a 14 MiB cap: completed %d, expected %d (%s)", a->name,
                r.completed, expect[k].completes, r.status);
      if (expect[k].flushes >= 0)
        CHECK_MSG(r.cache_flushes == (uint64_t)expect[k].flushes, "%s: cache_flushes %llu, expected %d", a->name,
                  (unsigned long long)r.cache_flushes, expect[k].flushes);
      if (!expect[k].completes) CHECK_EQ(r.first_oom_event, 2);
      checked++;
    }
  }
  CHECK(checked >= 1);
}

/* a workload that does not fit the device even uncapped: the row is that run, an OOM,
 * with no mincap (8 MiB requested at once on a 6 MiB device) */
TEST(mincap_when_nothing_fits_the_device) {
  struct run_spec s;
  base_spec(&s, SCRIPT_SMALL, "raw");
  s.device.sim_total = s.device.sim_usable = 6 * MiB;
  struct run_result r;
  struct mincap_report rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK_STR(r.status, "oom");
  CHECK_EQ(r.completed, 0);
  CHECK_EQ(r.first_oom_event, 3);
  CHECK_EQ(r.mincap_bytes, 0);
  CHECK_EQ(rep.runs, 1);
}

/* mincap --found: the rows an earlier search wrote, each replayed once at its cap, give the
 * same CSV as the search (timings aside), a non-monotonic row's status and a row with no
 * cap (the input does not fit the device) included; rows of other strategies are refused
 * naming the file's line */
TEST(mincap_found_replays_each_cap_once_to_the_same_rows) {
  char a[512], b[512], err[512];
  snprintf(a, sizeof a, "%s/searched.csv", test_tmpdir());
  snprintf(b, sizeof b, "%s/found.csv", test_tmpdir());
  snprintf(err, sizeof err, "%s/found.err", test_tmpdir());
  const char *args[] = {"--workload", SCRIPT_NONMONO, "--workload", "script:events=a1=3GiB/f1", "--allocator", "caching", "--allocator",
                        "expandable", "--allocator", "raw", "--device", "sim", "--sim-total", "2GiB", "--quiet"};
  int rc1 = test_cli(NULL, err, "mincap", args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10],
                     args[11], args[12], args[13], args[14], "--out", a, NULL);
  int rc2 = test_cli(NULL, err, "mincap", args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10],
                     args[11], args[12], args[13], args[14], "--found", a, "--out", b, NULL);
  CHECK_EQ(rc1, 0);   /* the 3 GiB script does not fit the 2 GiB device: an OOM row (a result) */
  CHECK_EQ(rc2, rc1);
  char *x = test_read_file(a), *y = test_read_file(b);
  CHECK(x && y);
  CHECK_CONTAINS(x, "ok: non-monotonic");
  CHECK_CONTAINS(x, ",oom,");
  test_csv_drop_timed(x);
  test_csv_drop_timed(y);
  CHECK_STR(y, x);
  free(x);
  free(y);
  /* rows of other strategies than asked: refused, naming the line */
  CHECK_EQ(test_cli(NULL, err, "mincap", "--workload", SCRIPT_NONMONO, "--allocator", "bfc", "--device", "sim", "--found", a, "--quiet",
                    "--out", b, NULL), 2);
  char *e = test_read_file(err);
  CHECK_CONTAINS(e, "line 2 is");
  CHECK_CONTAINS(e, "the same inputs and strategies, in order");
  free(e);
}

/* the files a CLI test of mincap writes: test_tmpdir()/PREFIX_runs.csv, _second.csv
 * (found rows or a cap sweep), _a.csv, _b.csv and PREFIX.err */
struct cli_files { char runs[512], second[512], a[512], b[512], err[512]; };

static void cli_files(struct cli_files *f, const char *prefix, const char *second) {
  snprintf(f->runs, sizeof f->runs, "%s/%s_runs.csv", test_tmpdir(), prefix);
  snprintf(f->second, sizeof f->second, "%s/%s_%s.csv", test_tmpdir(), prefix, second);
  snprintf(f->a, sizeof f->a, "%s/%s_a.csv", test_tmpdir(), prefix);
  snprintf(f->b, sizeof f->b, "%s/%s_b.csv", test_tmpdir(), prefix);
  snprintf(f->err, sizeof f->err, "%s/%s.err", test_tmpdir(), prefix);
}

/* --uncapped: a cap-blind strategy's confirmation at the cap is its uncapped row there (the
 * same rows and confirmations as replaying it), a strategy that reads the cap is replayed
 * all the same, and the flag with --found but without --confirm-on is refused */
/* two results files hold the same rows but for their timing columns */
static void same_untimed_rows(const char *a, const char *b) {
  char *x = test_read_untimed(a), *y = test_read_untimed(b);
  CHECK(x && y);
  CHECK_STR(x, y);
  free(x);
  free(y);
}

TEST(mincap_uncapped_rows_confirm_cap_blind_strategies_only) {
  struct cli_files f;
  cli_files(&f, "u", "found");
  char *runs = f.runs, *found = f.second, *a = f.a, *b = f.b, *err = f.err;
  const char *tr = test_data("gpt_train_short_frames.pickle");
  CHECK_EQ(test_cli(NULL, err, "run", "--trace", tr, "--allocator", "raw", "--allocator", "expandable", "--device", "sim", "--quiet",
                    "--out", runs, NULL), 0);
  CHECK_EQ(test_cli(NULL, err, "mincap", "--trace", tr, "--allocator", "raw", "--allocator", "expandable", "--device", "sim", "--quiet",
                    "--out", found, NULL), 0);
  CHECK_EQ(test_cli(NULL, err, "mincap", "--trace", tr, "--allocator", "raw", "--allocator", "expandable", "--device", "sim",
                    "--confirm-on", "sim", "--found", found, "--uncapped", runs, "--out", a, NULL), 0);
  char *e = test_read_file(err);
  CHECK_CONTAINS(e, "2 of 2 found caps confirmed on sim (1 at the mincap by their uncapped row there)");   /* raw's, not expandable's */
  CHECK_CONTAINS(e, "x raw: confirmed on sim: completes at");
  CHECK_CONTAINS(e, "(its uncapped run there, which never met the cap)");
  free(e);
  CHECK_EQ(test_cli(NULL, err, "mincap", "--trace", tr, "--allocator", "raw", "--allocator", "expandable", "--device", "sim",
                    "--confirm-on", "sim", "--found", found, "--out", b, NULL), 0);
  same_untimed_rows(a, b);   /* the same rows either way */
  CHECK_EQ(test_cli(NULL, err, "mincap", "--trace", tr, "--allocator", "raw", "--device", "sim", "--found", found, "--uncapped", runs,
                    "--quiet", "--out", b, NULL), 2);
  e = test_read_file(err);
  CHECK_CONTAINS(e, "--uncapped with --found names rows on the device of --confirm-on");
  free(e);
}

/* SCRIPT_SMALL under caching (by hand above): uncapped P = 8 MiB, R = 20 MiB; the search
 * probes P (fails), R (completes), bisects, then checks +1/2/5% */
TEST(mincap_known_runs_stand_for_their_probes) {
  if (!registered("caching")) SKIP("caching not registered");
  struct run_spec s;
  base_spec(&s, SCRIPT_SMALL, "caching");
  struct run_result r0, r;
  struct mincap_report rep0, rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r0, &rep0), 0);
  CHECK_EQ(rep0.known, 0);
  /* the uncapped run known: it is not replayed, the same row. Every probe is answered one
   * way or another - replayed, by a known run, by a run of the search it is the same as
   * (caching compares demands with the cap only), or under the floor - and the probes are
   * the same, so they add up alike; a known run never makes more replays */
  int probes0 = rep0.runs + rep0.known + rep0.same + rep0.floor;
  struct mincap_known k = {.uncapped = 1, .peak_requested = 8 * MiB, .peak_reserved = 20 * MiB};
  CHECK_EQ(mincap_find_known(&s, 0.005, 0, &k, &r, &rep), 0);
  CHECK(rep0.same >= 1);
  CHECK_EQ(rep.known, 1);
  CHECK_EQ(rep.runs + rep.known + rep.same + rep.floor, probes0);
  CHECK(rep.runs <= rep0.runs);
  CHECK_EQ(r.mincap_bytes, r0.mincap_bytes);
  CHECK_EQ(r.peak_reserved, r0.peak_reserved);
  CHECK_STR(r.status, r0.status);
  /* and a run that ran out under P (the floor probe): one more known */
  uint64_t at_p = 8 * MiB;
  k.ran_out = &at_p;
  k.nran_out = 1;
  CHECK_EQ(mincap_find_known(&s, 0.005, 0, &k, &r, &rep), 0);
  CHECK_EQ(rep.known, 2);
  CHECK_EQ(rep.runs + rep.known + rep.same + rep.floor, probes0);
  CHECK(rep.runs <= rep0.runs);
  CHECK_EQ(r.mincap_bytes, r0.mincap_bytes);
  /* the known run decides, not a replay: one said to have run out under 20 MiB (where a
   * replay completes) leaves the mincap above it */
  uint64_t at_r = 20 * MiB;
  k.ran_out = &at_r;
  CHECK_EQ(mincap_find_known(&s, 0.005, 0, &k, &r, &rep), 0);
  CHECK(r.mincap_bytes > 20 * MiB);
  CHECK(rep.known >= 2);
  /* a known uncapped run that allocated nothing is replayed (its run would be the row) */
  struct mincap_known none = {.uncapped = 1};
  CHECK_EQ(mincap_find_known(&s, 0.005, 0, &none, &r, &rep), 0);
  CHECK_EQ(rep.runs, rep0.runs);
  CHECK_EQ(rep.known, 0);
}

/* the CLI: a search from run's uncapped rows and a cap sweep's rows writes the rows a
 * search from nothing writes, says how many probes they answered, and --known is refused
 * where nothing is searched */
TEST(mincap_searches_from_known_rows_write_the_same_rows) {
  struct cli_files f;
  cli_files(&f, "k", "sweep");
  char *runs = f.runs, *sweep = f.second, *a = f.a, *b = f.b, *err = f.err;
  const char *tr = test_data("gpt_train_short_frames.pickle");
  CHECK_EQ(test_cli(NULL, err, "run", "--trace", tr, "--workload", "train_loop", "--allocator", "async", "--allocator", "caching",
                    "--device", "sim", "--quiet", "--out", runs, NULL), 0);
  CHECK_EQ(test_cli(NULL, err, "run", "--trace", tr, "--workload", "train_loop", "--allocator", "async", "--allocator", "caching",
                    "--device", "sim", "--cap-x", "1.0,1.05,1.1,1.2", "--quiet", "--out", sweep, NULL), 0);
  CHECK_EQ(test_cli(NULL, err, "mincap", "--trace", tr, "--workload", "train_loop", "--allocator", "async", "--allocator", "caching",
                    "--device", "sim", "--quiet", "--out", a, NULL), 0);
  CHECK_EQ(test_cli(NULL, err, "mincap", "--trace", tr, "--workload", "train_loop", "--allocator", "async", "--allocator", "caching",
                    "--device", "sim", "--uncapped", runs, "--known", sweep, "--out", b, NULL), 0);
  char *e = test_read_file(err);
  CHECK_CONTAINS(e, "probes answered by rows of --uncapped and --known instead of replayed");
  int n = 0;
  const char *m = e ? strstr(e, "mincap: ") : NULL;
  while (m && sscanf(m, "mincap: %d probes answered", &n) != 1) m = strstr(m + 1, "mincap: ");
  CHECK(n >= 4 + 4);   /* at least the four uncapped runs and the four floors (cap-x 1.0 is the peak requested) */
  free(e);
  same_untimed_rows(a, b);
  CHECK_EQ(test_cli(NULL, err, "mincap", "--trace", tr, "--allocator", "caching", "--device", "sim", "--found", a, "--known", sweep,
                    "--quiet", "--out", b, NULL), 2);
  e = test_read_file(err);
  CHECK_CONTAINS(e, "--known answers a search's probes");
  free(e);
}
