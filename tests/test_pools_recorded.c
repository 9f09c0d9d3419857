/* test_pools_recorded.c - the graphed jobs recorded on an H100 with PyTorch 2.11
 * (tests/data/recorded/pools: make_graphed_callables, a whole training step under
 * torch.cuda.graph, torch.compile mode="reduce-overhead", torch.cuda.MemPool; each under the
 * default settings and expandable_segments:True; pools_ref.csv: PyTorch's own peaks).
 * Replayed with the recorded allocator on the sim device, peak reserved and peak allocated
 * equal PyTorch's to the byte; the same snapshot exported to the native format (pools
 * carried in its sixth field) replays to the same figures; a strategy that does not model
 * pools says so in the status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "replay.h"
#include "status.h"

struct pref { char snap[64], conf[64]; unsigned long long reserved, allocated; };

static int load_refs(struct pref *out, int max) {
  char *csv = test_read_file(test_data("recorded/pools/pools_ref.csv"));
  if (!csv) return 0;
  int n = 0;
  for (char *line = strtok(csv, "\n"); line && n < max; line = strtok(NULL, "\n")) {
    char job[64];
    struct pref r = {0};
    /* snapshot,job,conf,peak_reserved,peak_allocated,pools */
    if (sscanf(line, "%63[^,],%63[^,],,%llu,%llu", r.snap, job, &r.reserved, &r.allocated) == 4 ||
        sscanf(line, "%63[^,],%63[^,],%63[^,],%llu,%llu", r.snap, job, r.conf, &r.reserved, &r.allocated) == 5)
      out[n++] = r;
  }
  free(csv);
  return n;
}

static int replay(const char *trace, const char *allocator, struct run_result *r) {
  struct run_spec s = {.trace = trace, .allocator = allocator, .trace_device = -1, .world = 1, .seed = 1,
                       .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .validate = 1, .quiet = 1};
  run_result_init(r);
  return replay_run(&s, r);
}

TEST(pools_recorded_jobs_replay_to_pytorchs_peaks) {
  struct pref refs[16];
  int n = load_refs(refs, 16);
  CHECK_EQ(n, 8);
  for (int i = 0; i < n; i++) {
    char path[128];
    snprintf(path, sizeof path, "recorded/pools/%.60s", refs[i].snap);
    struct run_result r;
    CHECK_MSG(replay(test_data(path), "recorded", &r) == 0, "%s: %s", refs[i].snap, r.status);
    CHECK_STR(r.status, "ok");
    CHECK_STR(r.allocator, refs[i].conf[0] ? "expandable" : "caching");
    CHECK_MSG(r.peak_reserved == refs[i].reserved, "%s: peak reserved %llu, PyTorch %llu", refs[i].snap,
              (unsigned long long)r.peak_reserved, refs[i].reserved);
    CHECK_MSG(r.peak_allocated == refs[i].allocated, "%s: peak allocated %llu, PyTorch %llu", refs[i].snap,
              (unsigned long long)r.peak_allocated, refs[i].allocated);
    fprintf(stderr, "    %-26s %-10s peak reserved %llu = PyTorch's\n", refs[i].snap, r.allocator, refs[i].reserved);
  }
}

/* export keeps the pools: the native trace replays to the snapshot's figures */
TEST(pools_recorded_export_round_trip) {
  const char *snap = test_data("recorded/pools/mempool.pickle.gz");
  char out[512], outp[512], errp[512];
  snprintf(out, sizeof out, "%s/mempool.csv", test_tmpdir());
  snprintf(outp, sizeof outp, "%s/export.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/export.err", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "export", "--trace", snap, "--out", out, NULL), 0);
  char *text = test_read_file(out);
  CHECK(text);
  CHECK(text && strstr(text, "\npool_release,,,,0,"));
  free(text);
  struct run_result a, b;
  CHECK_EQ(replay(snap, "caching", &a), 0);
  CHECK_EQ(replay(out, "caching", &b), 0);
  CHECK_EQ(a.peak_reserved, b.peak_reserved);
  CHECK_EQ(a.peak_allocated, b.peak_allocated);
  CHECK_EQ(a.device_allocs, b.device_allocs);
}

/* a pool-blind strategy replays the pools' allocations in the general pool and says so */
TEST(pools_recorded_pool_blind_strategy_says_so) {
  struct run_result r;
  CHECK_EQ(replay(test_data("recorded/pools/graphed.pickle.gz"), "bfc", &r), 0);
  CHECK(status_is(r.status, "ok"));
  CHECK_CONTAINS(r.status, "; not modelled: private memory pools (CUDA graphs or MemPool): bfc replays their allocations in the general pool");
  CHECK_EQ(replay(test_data("recorded/pools/graphed.pickle.gz"), "caching", &r), 0);
  CHECK_STR(r.status, "ok");
  /* the CLI: the note once on stderr, the table's status ok*, the CSV's status in full */
  char out[512], o[512], e[512];
  snprintf(out, sizeof out, "%s/blind.csv", test_tmpdir());
  snprintf(o, sizeof o, "%s/blind.out", test_tmpdir());
  snprintf(e, sizeof e, "%s/blind.err", test_tmpdir());
  CHECK_EQ(test_cli(o, e, "run", "--trace", test_data("recorded/pools/mempool.pickle.gz"), "--allocator", "bfc",
                    "--allocator", "caching", "--out", out, NULL), 0);
  char *err = test_read_file(e), *csv = test_read_file(out);
  CHECK(err && csv);
  if (err) {
    CHECK_CONTAINS(err, "fragbench: warning: ");
    CHECK_CONTAINS(err, ": not modelled: private memory pools (CUDA graphs or MemPool): bfc replays their allocations in the general pool\n");
    CHECK_CONTAINS(err, " ok*  ");
  }
  if (csv) {
    CHECK_CONTAINS(csv, ",bfc,");
    CHECK_CONTAINS(csv, ",ok; not modelled: private memory pools (CUDA graphs or MemPool): bfc replays their allocations in the general pool,");
  }
  free(err);
  free(csv);
}

/* run --breakdown: a private pool's segments are charged to "private small/large" */
TEST(pools_recorded_breakdown_names_private_pools) {
  char out[512], bd[512], o[512], e[512];
  snprintf(out, sizeof out, "%s/bd.csv", test_tmpdir());
  snprintf(bd, sizeof bd, "%s/bd_split.csv", test_tmpdir());
  snprintf(o, sizeof o, "%s/bd.out", test_tmpdir());
  snprintf(e, sizeof e, "%s/bd.err", test_tmpdir());
  CHECK_EQ(test_cli(o, e, "run", "--trace", test_data("recorded/pools/compiled.pickle.gz"), "--allocator", "caching",
                    "--breakdown", bd, "--out", out, NULL), 0);
  char *csv = test_read_file(bd);
  CHECK(csv);
  if (csv) {
    CHECK_CONTAINS(csv, ",private large,");
    CHECK_CONTAINS(csv, ",large,");
  }
  free(csv);
}
