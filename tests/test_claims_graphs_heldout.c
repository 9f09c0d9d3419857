/* test_claims_graphs_heldout.c - the second set of graphed PyTorch jobs
 * (tests/data/recorded/graphs/heldout: graphed, step_graph, mempool, compiled, each under the
 * default and expandable_segments:True, other parameters than pools/), committed unread in
 * 83cb260 before most of the private-pool reader and model, read once that code was final;
 * a build set from then on (docs/evidence.md). Replayed with the recorded allocator on sim,
 * each snapshot's peak reserved and peak allocated equal what PyTorch reported for the run
 * (runs.jsonl) to the byte: 8 of 8. */
#include <stdlib.h>
#include "test.h"
#include "replay.h"

/* a number field of one JSON line (test_json_field), whole */
static int json_u64(const char *line, const char *key, unsigned long long *v) {
  char text[32], *end;
  if (test_json_field(line, key, text, sizeof text) || !text[0]) return -1;
  *v = strtoull(text, &end, 10);
  return *end ? -1 : 0;
}

TEST(claims_graphs_heldout_jobs_replay_to_pytorchs_peaks_to_the_byte) {
  char *text = test_read_file("tests/data/recorded/graphs/heldout/runs.jsonl");
  CHECK_MSG(text != NULL, "tests/data/recorded/graphs/heldout/runs.jsonl missing");
  int n = 0, equal = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char job[64], conf[64], path[256];
    unsigned long long res, al;
    if (test_json_field(line, "job", job, sizeof job) || test_json_field(line, "conf", conf, sizeof conf) || json_u64(line, "peak_reserved", &res) ||
        json_u64(line, "peak_allocated", &al)) {
      free(text);
      CHECK_MSG(0, "runs.jsonl: a line without job, conf, peak_reserved or peak_allocated: %.200s", line);
    }
    snprintf(path, sizeof path, "tests/data/recorded/graphs/heldout/%s%s.pickle.gz", job, conf[0] ? "_exp" : "");
    struct run_spec s = {.trace = path, .allocator = "recorded", .trace_device = -1, .world = 1, .seed = 1,
                         .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .validate = 1, .quiet = 1};
    struct run_result r;
    run_result_init(&r);
    int rc = replay_run(&s, &r);
    n++;
    int same = rc == 0 && !strcmp(r.status, "ok") && r.peak_reserved == res && r.peak_allocated == al;
    equal += same;
    printf("  %-26s peak reserved %llu (PyTorch %llu), allocated %llu (%llu): %s\n", path + 35, (unsigned long long)r.peak_reserved,
           res, (unsigned long long)r.peak_allocated, al, same ? "equal" : "DIFFERENT");
    if (!same) free(text);
    CHECK_MSG(same, "%s: status %s, peak reserved %llu against PyTorch's %llu, peak allocated %llu against %llu", path, r.status,
              (unsigned long long)r.peak_reserved, res, (unsigned long long)r.peak_allocated, al);
  }
  free(text);
  CHECK_EQ(n, 8);
  CHECK_EQ(equal, 8);
}
