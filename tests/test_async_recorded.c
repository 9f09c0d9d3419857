/* test_async_recorded.c - the async model against what PyTorch's backend:cudaMallocAsync
 * reserved on the real jobs recorded on an H100 (tests/data/recorded/async*: a native
 * snapshot per job, async_ref.csv with PyTorch's async runs). For every job: PyTorch's
 * median lies inside the sim row's range (peak_reserved +/- model_err), and where the sim
 * ranks async against caching (outside that range) it ranks them as PyTorch did, unless
 * PyTorch's own runs spread over the difference. All 27 jobs are checked (each set's count
 * is pinned); of the 80 single PyTorch runs, the 2 outside their job's range are listed
 * below by name and figure. A change to the model that takes any recorded job (or another
 * run) outside its range fails here (docs/async-pool.md, "Recorded jobs"). These are BUILD data
 * now (docs/evidence.md): the model's residual and its two bounds were chosen looking at
 * async/ and async2/, and async3/ and async4/ were read in the commits that finalized it. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "model_bound.h"
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

/* single PyTorch runs outside the sim range (the medians are inside): known, measured, and
 * said in docs/async-pool.md; a run outside that is not listed here fails, and so does a
 * listed one that comes back inside (the docs then say something no longer true) */
static const struct { const char *set, *job; uint64_t bytes; } outside_runs[] = {
    {"async", "gpt_side", 12851347456ull},         /* run 4 of 4 (second session): 1.8% above the sim range's top, 12,622,845,129 */
    {"async2", "gpt_deep_accum4", 5033164800ull},  /* run 2 of 2: 0.3% above the top, 5,019,743,027 */
};
#define NOUTSIDE (sizeof outside_runs / sizeof outside_runs[0])

static int replay_one(const char *trace, const char *allocator, struct run_result *r) {
  struct run_spec s = {.trace = trace, .allocator = allocator, .trace_device = -1, .world = 1, .seed = 1,
                       .device = {.kind = "sim"}, .quiet = 1};
  run_result_init(r);
  int cls = replay_run(&s, r);
  model_bound_row(&s, r);   /* the row as run writes it: both bounds */
  return cls;
}

TEST(async_recorded_jobs_lie_inside_the_sim_range_and_are_never_ranked_the_wrong_way) {
  static const char *const sets[SETS] = {"async", "async2", "async3", "async4"};
  static const int expect[SETS] = {11, 6, 7, 3};   /* the snapshots of each set: every one has PyTorch async runs */
  int checked = 0, ranked = 0, runs = 0, runs_inside = 0, found_outside = 0;
  for (int k = 0; k < SETS; k++) {
    char path[512];
    snprintf(path, sizeof path, "tests/data/recorded/%s/async_ref.csv", sets[k]);
    struct job_ref jobs[JOBS];
    int n = read_refs(path, jobs, JOBS);
    CHECK_MSG(n > 0, "%s: no jobs read", path);
    int in_set = 0;
    for (int j = 0; j < n; j++) {
      struct job_ref *jr = &jobs[j];
      CHECK_MSG(jr->n > 0, "%s: %s has no backend:cudaMallocAsync run", path, jr->name);
      qsort(jr->async, (size_t)jr->n, sizeof jr->async[0], cmp_u64);
      double med = jr->n % 2 ? (double)jr->async[jr->n / 2] : ((double)jr->async[jr->n / 2 - 1] + (double)jr->async[jr->n / 2]) / 2;
      char trace[512];
      snprintf(trace, sizeof trace, "tests/data/recorded/%.16s/%.63s.pickle.gz", sets[k], jr->name);
      struct run_result a, c;
      CHECK_MSG(replay_one(trace, "async", &a) == 0 && !strcmp(a.status, "ok"), "%s async: %s", trace, a.status);
      CHECK_MSG(replay_one(trace, "caching", &c) == 0 && !strcmp(c.status, "ok"), "%s caching: %s", trace, c.status);
      double pt = (double)a.peak_reserved, e = a.model_err;
      int inside = 0;
      for (int k2 = 0; k2 < jr->n; k2++) {
        double x = (double)jr->async[k2];
        int in = pt * (1 - e) <= x && x <= pt * (1 + e), known = 0;
        for (size_t o = 0; o < NOUTSIDE; o++)
          if (!strcmp(outside_runs[o].set, sets[k]) && !strcmp(outside_runs[o].job, jr->name) && outside_runs[o].bytes == jr->async[k2]) {
            known = 1;
            found_outside++;
          }
        CHECK_MSG(in != known, "%s: PyTorch's run of %llu bytes is %s the sim range %.0f +/- %.1f%%%s", trace,
                  (unsigned long long)jr->async[k2], in ? "inside" : "outside", pt, 100 * e,
                  in ? ", though listed as outside (docs/async-pool.md says it is outside)" : " and not a known exception");
        inside += in;
      }
      runs += jr->n;
      runs_inside += inside;
      printf("  %-7s %-28s sim %.2f GB +/- %4.1f%% (%.2f..%.2f); PyTorch median %.2f (%d of %d runs inside)\n", sets[k], jr->name,
             pt / 1e9, 100 * e, pt * (1 - e) / 1e9, pt * (1 + e) / 1e9, med / 1e9, inside, jr->n);
      CHECK_MSG(pt * (1 - e) <= med && med <= pt * (1 + e), "%s: PyTorch's async median %.0f outside the sim range %.0f +/- %.1f%%",
                trace, med, pt, 100 * e);
      checked++;
      in_set++;
      /* ranked against caching only outside async's range; then as PyTorch ranked them where
       * its async and native figures differ by more than its own runs spread */
      double sc = (double)c.peak_reserved, spread = (double)(jr->async[jr->n - 1] - jr->async[0]);
      if (fabs(pt - sc) > e * pt && jr->native && fabs(med - (double)jr->native) > spread) {
        ranked++;
        CHECK_MSG((pt < sc) == (med < (double)jr->native), "%s: sim ranks async %s caching, PyTorch the other way (%.0f vs %llu)",
                  trace, pt < sc ? "below" : "above", med, (unsigned long long)jr->native);
      }
    }
    CHECK_MSG(in_set == expect[k], "%s: %d jobs checked, %d recorded", path, in_set, expect[k]);
  }
  printf("  %d of 27 jobs: PyTorch's median inside the sim range; %d of %d PyTorch runs inside; %d ranked against caching\n",
         checked, runs_inside, runs, ranked);
  CHECK_EQ(checked, 27);  /* all 27 recorded jobs, none left out */
  CHECK_EQ(found_outside, NOUTSIDE);
  CHECK(ranked >= 1);     /* the ranking part checked something */
}
