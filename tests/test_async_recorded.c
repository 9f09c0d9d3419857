/* test_async_recorded.c - the async model against what PyTorch's backend:cudaMallocAsync
 * reserved on the real jobs recorded on an H100 (tests/data/recorded/async*: a native
 * snapshot per job, async_ref.csv with PyTorch's async runs). For every job: PyTorch's
 * median lies inside the sim row's range (peak_reserved +/- model_err), and where the sim
 * ranks async against caching (outside that range) it ranks them as PyTorch did, unless
 * PyTorch's own runs spread over the difference. A change to the model that takes any
 * recorded job outside its range fails here (docs/async-pool.md, "Held out"). */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "replay.h"

#define SETS 4
#define JOBS 16
#define RUNS 8

struct job_ref {
  char name[64];
  uint64_t async[RUNS];
  int n;
  uint64_t native;   /* the native allocator's own peak reserved (0 = not recorded) */
};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* async_ref.csv: job,set,backend,run,peak_reserved,... -> per job, the async runs and the native figure */
static int read_refs(const char *path, struct job_ref *jobs, int max) {
  char *text = test_read_file(path);
  if (!text) return -1;
  int n = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char job[64], set[32], backend[16];
    unsigned long long run, peak;
    if (sscanf(line, "%63[^,],%31[^,],%15[^,],%llu,%llu", job, set, backend, &run, &peak) != 5) continue;   /* the header */
    int j = 0;
    while (j < n && strcmp(jobs[j].name, job)) j++;
    if (j == n) {
      if (n == max) break;
      memset(&jobs[n], 0, sizeof jobs[n]);
      snprintf(jobs[n].name, sizeof jobs[n].name, "%s", job);
      n++;
    }
    if (!strcmp(backend, "native")) jobs[j].native = peak;
    else if (!strcmp(backend, "async") && jobs[j].n < RUNS) jobs[j].async[jobs[j].n++] = peak;
  }
  free(text);
  return n;
}

static int replay_one(const char *trace, const char *allocator, struct run_result *r) {
  struct run_spec s = {.trace = trace, .allocator = allocator, .trace_device = -1, .world = 1, .seed = 1,
                       .device = {.kind = "sim"}, .quiet = 1};
  run_result_init(r);
  return replay_run(&s, r);
}

TEST(async_recorded_jobs_lie_inside_the_sim_range_and_are_never_ranked_the_wrong_way) {
  static const char *const sets[SETS] = {"async", "async2", "async3", "async4"};
  int checked = 0, ranked = 0;
  for (int k = 0; k < SETS; k++) {
    char path[512];
    snprintf(path, sizeof path, "tests/data/recorded/%s/async_ref.csv", sets[k]);
    struct job_ref jobs[JOBS];
    int n = read_refs(path, jobs, JOBS);
    CHECK_MSG(n > 0, "%s: no jobs read", path);
    for (int j = 0; j < n; j++) {
      struct job_ref *jr = &jobs[j];
      if (!jr->n) continue;
      qsort(jr->async, (size_t)jr->n, sizeof jr->async[0], cmp_u64);
      double med = jr->n % 2 ? (double)jr->async[jr->n / 2] : ((double)jr->async[jr->n / 2 - 1] + (double)jr->async[jr->n / 2]) / 2;
      char trace[512];
      snprintf(trace, sizeof trace, "tests/data/recorded/%s/%s.pickle.gz", sets[k], jr->name);
      struct run_result a, c;
      CHECK_MSG(replay_one(trace, "async", &a) == 0 && !strcmp(a.status, "ok"), "%s async: %s", trace, a.status);
      CHECK_MSG(replay_one(trace, "caching", &c) == 0 && !strcmp(c.status, "ok"), "%s caching: %s", trace, c.status);
      double pt = (double)a.peak_reserved, e = a.model_err;
      CHECK_MSG(pt * (1 - e) <= med && med <= pt * (1 + e), "%s: PyTorch's async median %.0f outside the sim range %.0f +/- %.1f%%",
                trace, med, pt, 100 * e);
      checked++;
      /* ranked against caching only outside async's range; then as PyTorch ranked them where
       * its async and native figures differ by more than its own runs spread */
      double sc = (double)c.peak_reserved, spread = (double)(jr->async[jr->n - 1] - jr->async[0]);
      if (fabs(pt - sc) > e * pt && jr->native && fabs(med - (double)jr->native) > spread) {
        ranked++;
        CHECK_MSG((pt < sc) == (med < (double)jr->native), "%s: sim ranks async %s caching, PyTorch the other way (%.0f vs %llu)",
                  trace, pt < sc ? "below" : "above", med, (unsigned long long)jr->native);
      }
    }
  }
  CHECK(checked >= 25);   /* the 27 recorded jobs (one of async3 has no async run if a call was cut) */
  CHECK(ranked >= 1);     /* the ranking part checked something */
}
