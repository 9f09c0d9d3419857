/* test_pools_reader.c - what the PyTorch snapshot reader makes of memory pools: one test per
 * rule of workloads/trace_pools.h (R1-R7) and the empty_cache rule of trace_pytorch.c, on
 * the small snapshots tests/pools/make_pools.py writes; the native trace's pool field and
 * its bad inputs; and the reader's naming of an action it does not know (deliverable 4). */
#include <stdio.h>
#include <stdlib.h>
#include "test.h"
#include "replay.h"
#include "status.h"
#include "workload.h"
#include "explain.h"

/* the events of a trace, one per line: "alloc ADDR-BASE_MIB SIZE STREAM pPOOL", "free ...",
 * "empty_cache pPOOL", "pool_release pPOOL" (addresses as MiB above 0x7f0000000000) */
static char *events_of(const char *path, struct workload_info *info) {
  char err[FB_ERRLEN];
  const struct workload_ops *ops = trace_detect(path, err);
  if (!ops) { fprintf(stderr, "%s\n", err); return NULL; }
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .path = path, .trace_device = -1};
  if (workload_open(&w, ops, NULL, &ctx, 0, err)) { fprintf(stderr, "%s\n", err); return NULL; }
  if (info) w.ops->info(w.st, info);
  size_t cap = 1 << 14, n = 0;
  char *s = calloc(1, cap);
  struct event ev;
  int rc;
  const uint64_t base = 0x7f0000000000ull;
  while ((rc = workload_next(&w, &ev, err)) > 0) {
    if (cap - n < 128) s = realloc(s, cap *= 2);
    if (ev.op == OP_ALLOC)
      n += (size_t)snprintf(s + n, cap - n, "alloc %llu %llu %llu p%u\n", (unsigned long long)((ev.id - base) >> 20),
                            (unsigned long long)ev.size, (unsigned long long)ev.stream, ev.pool);
    else if (ev.op == OP_FREE)
      n += (size_t)snprintf(s + n, cap - n, "free %llu\n", (unsigned long long)((ev.id - base) >> 20));
    else
      n += (size_t)snprintf(s + n, cap - n, "%s p%u\n", op_name(ev.op), ev.pool);
  }
  workload_close(&w);
  if (rc < 0) { fprintf(stderr, "%s\n", err); free(s); return NULL; }
  return s;
}

#define EXPECT_EVENTS(file, want) do { \
    char *got_ = events_of("tests/pools/" file, NULL); \
    CHECK(got_); \
    if (got_) CHECK_STR(got_, want); \
    free(got_); } while (0)

/* R1: pools numbered in the segments list's address order ((0,3) at 100 MiB is 1, (1,0) at
 * 300 MiB is 2); R2: the segment freed at 200 MiB was general, the one made there after it
 * is the listed (0,3); R5: an allocation in a listed segment the trace never made (400 MiB) */
TEST(pools_reader_listed_segments_give_their_pools) {
  EXPECT_EVENTS("listed.pickle",
                "alloc 100 4194304 7 p1\n"
                "alloc 0 4194304 0 p0\n"
                "alloc 300 4194304 7 p2\n"
                "alloc 400 4194304 7 p1\n"
                "alloc 200 4096 0 p0\n"
                "free 200\n"
                "empty_cache p0\n"          /* followed by pool 1's growth: not a retry */
                "alloc 200 4096 7 p1\n");
}

/* R3: maps take the pool of the listed expandable segment containing them; R6: a run that
 * unmaps pool 1's pages releases pool 1 first and is emptyCache(1); a later allocation in
 * the pool makes it live again */
TEST(pools_reader_maps_and_release_runs) {
  EXPECT_EVENTS("mapped.pickle",
                "alloc 0 4194304 5 p1\n"
                "alloc 20 16777216 5 p1\n"
                "free 20\n"
                "pool_release p1\n"
                "empty_cache p1\n"
                "alloc 4 1052672 5 p1\n"
                "alloc 20 16777216 5 p1\n"
                "alloc 1000 4194304 0 p0\n");
}

/* R7: the run freed an unlisted segment and left the listed (0,0) one at 0 wholly free:
 * emptyCache of a pool that went away (pool 2, after the listed one) */
TEST(pools_reader_r7_witness) {
  EXPECT_EVENTS("witness.pickle",
                "alloc 0 4096 0 p0\n"
                "alloc 100 4194304 3 p1\n"
                "alloc 200 4194304 3 p2\n"
                "free 0\n"
                "free 200\n"
                "pool_release p2\n"
                "empty_cache p2\n"
                "alloc 0 4096 0 p0\n");
}

/* R7 by majority: left two unlisted free segments, freed one: a private pool's, where the
 * segments list shows private pools; the last run (frees them both) is general */
TEST(pools_reader_r7_majority_only_with_listed_pools) {
  const char *tail = "alloc 300 4194304 0 p0\nfree 300\nalloc 400 4194304 0 p0\nfree 400\n";
  char want[512];
  snprintf(want, sizeof want, "alloc 100 4194304 3 p1\n%salloc 200 4194304 3 p2\nfree 200\npool_release p2\n"
           "empty_cache p2\nalloc 104 4194304 3 p1\nempty_cache p0\n", tail);
  EXPECT_EVENTS("majority.pickle", want);
  snprintf(want, sizeof want, "alloc 100 4194304 3 p0\n%salloc 200 4194304 3 p0\nfree 200\nempty_cache p0\n"
           "alloc 104 4194304 3 p0\nempty_cache p0\n", tail);
  EXPECT_EVENTS("majority_nolisted.pickle", want);
}

/* R8: the listed general segment at 300 MiB was made while the free 40 MiB segment at 200
 * MiB was cached on the same stream: best fit would have taken it had it been general, so
 * it was a private pool's (pool 2), released and emptied when freed */
TEST(pools_reader_r8_general_growth_beside_a_free_segment) {
  EXPECT_EVENTS("growth.pickle",
                "alloc 100 4194304 3 p1\n"
                "alloc 200 41943040 0 p2\n"
                "free 200\n"
                "alloc 300 16777216 0 p0\n"
                "pool_release p2\n"
                "empty_cache p2\n"
                "alloc 104 4194304 3 p1\n");
}

/* R8 with expandable segments: the general map at 1000 MiB was made while the pool-0
 * mapping at 20 MiB had a wholly free 20 MiB page for the 16 MiB request: a private pool's
 * (pool 2), and so is the mapping at 0 it grew from; released and emptied when unmapped */
TEST(pools_reader_r8_mapped_growth_beside_a_free_page) {
  EXPECT_EVENTS("growth_mapped.pickle",
                "alloc 500 4194304 3 p1\n"
                "alloc 0 4194304 0 p2\n"
                "alloc 20 16777216 0 p2\n"
                "free 20\n"
                "alloc 1000 16777216 0 p0\n"
                "free 0\n"
                "pool_release p2\n"
                "empty_cache p2\n"
                "alloc 504 4194304 3 p1\n");
}

/* a release run followed by a growth is the allocation's own retry only if the reserved
 * bytes before it plus the growth pass the trace's peak (100 + 20 > 100); else (60 + 20)
 * it was empty_cache() */
TEST(pools_reader_release_run_before_a_growth_that_fits_is_empty_cache) {
  EXPECT_EVENTS("fit.pickle",
                "alloc 0 41943040 0 p0\n"
                "alloc 100 41943040 0 p0\n"
                "alloc 200 20971520 0 p0\n"
                "free 200\n"
                "free 0\n"
                "alloc 300 20971520 0 p0\n"
                "free 300\n"
                "empty_cache p0\n"
                "alloc 400 20971520 0 p0\n");
}

/* ... but in a job that lists private pools and never ran out of memory, every release run
 * is empty_cache(): torch.cuda.graph empties the cache before a capture, maybe at the peak */
TEST(pools_reader_release_runs_of_a_pool_job_without_oom_are_empty_cache) {
  EXPECT_EVENTS("fit_pools.pickle",
                "alloc 0 41943040 0 p0\n"
                "alloc 100 41943040 0 p0\n"
                "alloc 200 20971520 0 p0\n"
                "free 200\n"
                "free 0\n"
                "empty_cache p0\n"
                "alloc 300 20971520 0 p0\n"
                "free 300\n"
                "empty_cache p0\n"
                "alloc 400 20971520 0 p0\n"
                "alloc 500 4096 3 p1\n");
}

/* ... and a run followed by a growth of a private pool is empty_cache() whatever its size:
 * no release-and-retry runs while a capture or a MemPool context is underway */
TEST(pools_reader_release_run_before_a_private_growth_is_empty_cache) {
  EXPECT_EVENTS("capture_after_empty_cache.pickle",
                "alloc 0 41943040 0 p0\n"
                "free 0\n"
                "empty_cache p0\n"
                "alloc 100 20971520 3 p1\n");
}

/* deliverable 4: an action the reader does not know is named, on stderr once and in the
 * row's status, and replayed as nothing */
TEST(pools_reader_unknown_action_is_named) {
  struct workload_info info;
  char *got = events_of("tests/pools/unknown_action.pickle", &info);
  CHECK(got);
  if (got) CHECK_STR(got, "alloc 0 4194304 0 p0\nfree 0\n");
  free(got);
  CHECK_CONTAINS(info.unmodelled, "1 trace entries with actions this reader does not know (e.g. 'mystery_action'): replayed as nothing");
  struct run_spec s = {.trace = "tests/pools/unknown_action.pickle", .allocator = "caching", .trace_device = -1,
                       .world = 1, .seed = 1, .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK(status_is(r.status, "ok"));
  CHECK_STR(r.status, "ok; not modelled: 1 trace entries with actions this reader does not know (e.g. 'mystery_action'): replayed as nothing");
  /* the CLI names it on stderr once, and the CSV row carries it */
  char out[512], o[512], e[512];
  snprintf(out, sizeof out, "%s/unknown.csv", test_tmpdir());
  snprintf(o, sizeof o, "%s/unknown.out", test_tmpdir());
  snprintf(e, sizeof e, "%s/unknown.err", test_tmpdir());
  CHECK_EQ(test_cli(o, e, "run", "--trace", "tests/pools/unknown_action.pickle", "--allocator", "caching",
                    "--allocator", "expandable", "--out", out, NULL), 0);
  char *err = test_read_file(e), *csv = test_read_file(out);
  CHECK(err && csv);
  if (err) {
    const char *first = strstr(err, "not modelled: 1 trace entries");
    CHECK(first);
    if (first) CHECK(!strstr(first + 1, "not modelled: 1 trace entries"));   /* once, for two rows */
  }
  if (csv) CHECK_CONTAINS(csv, ",ok; not modelled: 1 trace entries with actions this reader does not know (e.g. 'mystery_action')");
  free(err);
  free(csv);
}

/* deliverable 4: a segment_pool_id that is not a pair of ints is a pool the reader cannot
 * name: said in info.unmodelled (the row's status), its addresses in the general pool */
TEST(pools_reader_unreadable_pool_id_is_named) {
  struct workload_info info;
  char *got = events_of("tests/pools/bad_pool_id.pickle", &info);
  CHECK(got);
  if (got) CHECK_STR(got, "alloc 0 4194304 0 p0\n");
  free(got);
  CHECK_STR(info.unmodelled, "1 segments with a segment_pool_id that is not a pair of ints (a pool this reader cannot name): "
            "their addresses replayed in the general pool");
}

/* status_is: "ok" with or without notes; not a prefix of another word */
TEST(pools_status_is_reads_notes) {
  CHECK(status_is("ok", "ok"));
  CHECK(status_is("ok; not modelled: x", "ok"));
  CHECK(status_is("oom; not modelled: x", "oom"));
  CHECK(!status_is("oom", "ok"));
  CHECK(!status_is("ok: non-monotonic", "ok"));
  CHECK(!status_is("okay", "ok"));
}

/* the native trace: an optional sixth field is the pool; pool_release needs one */
TEST(pools_native_pool_field) {
  const char *good = test_write_tmp("pools_native.csv",
                                    "# fragbench-trace v1\nop,id,size,stream,device\n"
                                    "alloc,1,4096,0,0,3\nalloc,2,4096,0,0\nfree,1,,,0\n"
                                    "pool_release,,,,0,3\nempty_cache,,,,0,3\nempty_cache,,,,0\n");
  char *got = events_of(good, NULL);
  CHECK(got);
  (void)got;
  free(got);
  char err[FB_ERRLEN];
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .path = good, .trace_device = -1};
  CHECK_EQ(workload_open(&w, trace_detect(good, err), NULL, &ctx, 0, err), 0);
  struct event ev[6];
  for (int i = 0; i < 6; i++) CHECK_EQ(workload_next(&w, &ev[i], err), 1);
  workload_close(&w);
  CHECK_EQ(ev[0].pool, 3);
  CHECK_EQ(ev[1].pool, 0);
  CHECK_EQ(ev[3].op, OP_POOL_RELEASE);
  CHECK_EQ(ev[3].pool, 3);
  CHECK_EQ(ev[4].op, OP_EMPTY_CACHE);
  CHECK_EQ(ev[4].pool, 3);
  CHECK_EQ(ev[5].pool, 0);
  const char *bad[][2] = {
    {"free,1,,,0,2\n", ":3: free with a pool field"},
    {"pool_release,,,,0\n", ":3: pool_release without a pool"},
    {"alloc,1,64,0,0,99999\n", ":3: pool 99999 out of range"},
    {"alloc,1,64,0,0,x\n", ":3: pool 'x': expected a non-negative integer"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[256];
    snprintf(text, sizeof text, "# fragbench-trace v1\nop,id,size,stream,device\n%s", bad[i][0]);
    const char *p = test_write_tmp("pools_bad.csv", text);
    ctx.path = p;
    int rc = workload_open(&w, trace_detect(p, err), NULL, &ctx, 0, err);
    if (!rc) { workload_close(&w); CHECK_MSG(0, "%s: accepted", bad[i][0]); continue; }
    CHECK_CONTAINS(err, bad[i][1]);
  }
}

/* explain: a live private pool's free segment is not releasable (release-and-retry keeps
 * it), a released pool's is; the segment says whose it is */
TEST(pools_explain_live_pool_segments_are_not_releasable) {
  const char *t = test_write_tmp("pools_explain.csv",
                                 "# fragbench-trace v1\nop,id,size,stream,device\n"
                                 "alloc,1,31457280,0,0,1\nalloc,2,31457280,0,0\nfree,1,,,0\nfree,2,,,0\n"
                                 "alloc,3,4096,0,0\niter,,,,0\npool_release,,,,0,1\nalloc,4,4096,0,0\n");
  struct explain_opts o = {.trace = t, .trace_device = -1, .at = "4", .allocator = "caching"};
  struct explain_state st;
  char err[FB_ERRLEN];
  CHECK_EQ(explain_run(&o, &st, err), 0);
  CHECK_EQ(st.reserved, 60ull << 20);
  CHECK_EQ(st.releasable, 30ull << 20);     /* the general 30 MiB segment only */
  int seen = 0;
  for (size_t i = 0; i < st.nblocks; i++)
    if (st.blocks[i].pool == 1) { seen = 1; CHECK(st.blocks[i].pool_live); }
  CHECK(seen);
  explain_free(&st);
  o.at = "7";                               /* after pool 1's release */
  CHECK_EQ(explain_run(&o, &st, err), 0);
  CHECK_EQ(st.releasable, 60ull << 20);
  explain_free(&st);
}
