/* test_bench.c - `make bench` on a user's own inputs (TRACES=, WORKLOADS=, ALLOCATORS=)
 * writes the same files as the full suite, and its stderr reads as one table: one header
 * row, the no-GPU notice once, long trace names in full, a progress line per step. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "test.h"

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* bench.sh on BIN with the environment assignments VARS, into test_tmpdir()/NAME (its
 * folder in dir): the log's text (NULL when unreadable); *ok whether it exited 0 */
static char *bench_run(const char *name, const char *vars, const char *bin, char *dir, size_t dirlen, int *ok) {
  char log[700], cmd[3000];
  snprintf(dir, dirlen, "%s/%s", test_tmpdir(), name);
  snprintf(log, sizeof log, "%s/%s.log", test_tmpdir(), name);
  snprintf(cmd, sizeof cmd, "%s BENCH_DIR='%s' JOBS=2 sh scripts/bench.sh '%s' > '%s' 2>&1", vars, dir, bin, log);
  int st = system(cmd);
  *ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  return test_read_file(log);
}

TEST(bench_on_own_inputs_writes_every_file_and_one_table) {
  if (access("scripts/bench.sh", R_OK)) SKIP("scripts/bench.sh not found (run from the repository root)");
  char dir[600], vars[1000];
  const char *bin = test_fragbench_bin();
  if (!bin) SKIP("no fragbench binary beside the tests");
  snprintf(vars, sizeof vars, "DEVICE=sim WORKLOADS='leaky_losses' TRACES='%s' ALLOCATORS='caching stitch'",
           test_data("gpt_train_short_frames.pickle"));
  int ok;
  char *out = bench_run("bench", vars, bin, dir, sizeof dir, &ok);
  CHECK_MSG(ok, "bench.sh failed:\n%s", out ? out : "");
  const char *files[] = {"runs.csv", "capsweep.csv", "mincap.csv", "env.txt", "timeline-leaky_losses.csv",
                         "timeline-gpt_train_short_frames.pickle.csv", "advise-gpt_train_short_frames.pickle.csv", "report.md"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    CHECK_MSG(!access(p, R_OK), "bench wrote no %s:\n%s", files[i], out);
  }
  char p[700];
  snprintf(p, sizeof p, "%s/runs.csv", dir);
  char *runs = test_read_file(p);
  CHECK_EQ(count(runs, "\n") - count(runs, "# fragbench") - 1, 4);   /* 2 inputs x 2 strategies */
  free(runs);
  CHECK_EQ(count(out, "\nworkload "), 1);                        /* one header row */
  CHECK(count(out, "no GPU") + count(out, "simulated device") <= 1);   /* the notice once */
  CHECK(count(out, "gpt_train_short_frames.pickle ") >= 2);       /* the full name, each strategy */
  CHECK_CONTAINS(out, "bench: [");                               /* progress */
  snprintf(p, sizeof p, "%s/env.txt", dir);
  char *env = test_read_file(p);
  CHECK_CONTAINS(env, "figures_mincap: sim");
  free(env);
  free(out);
}

/* On a GPU host bench.sh passes the GPU's size to the sim searches ($SIMDEV: --sim-total
 * and --sim-usable) and to explain ($EXPLAINDEV: --sim-total); every command it passes
 * them to must take them, or `make bench` exits 1 on a healthy GPU host (explain refused
 * --sim-usable: 4 steps failed on an H100 on 2026-11-27). Read from bench.sh itself. */
TEST(bench_passes_each_command_only_flags_it_takes) {
  char *sh = test_read_file("scripts/bench.sh");
  if (!sh) SKIP("scripts/bench.sh not found (run from the repository root)");
  static const struct { const char *var, *flags[2]; } vars[] = {
    {"$SIMDEV", {"--sim-total", "--sim-usable"}}, {"$EXPLAINDEV", {"--sim-total", NULL}}};
  int checked = 0;
  for (char *line = sh; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *bin = strstr(line, "\"$BIN\" ");
    const char *end = strchr(line, '\n');
    if (!bin || (end && bin > end)) continue;
    char cmd[32] = "";
    sscanf(bin + 7, "%31[a-z_]", cmd);
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
      const char *at = strstr(line, vars[v].var);
      if (!at || (end && at > end)) continue;
      char outp[512], errp[512];
      snprintf(outp, sizeof outp, "%s/help_%s.txt", test_tmpdir(), cmd);
      snprintf(errp, sizeof errp, "%s/help_%s.err", test_tmpdir(), cmd);
      CHECK_EQ(test_cli(outp, errp, cmd, "--help", NULL), 0);
      char *help = test_read_file(outp);
      for (int f = 0; f < 2 && vars[v].flags[f]; f++)
        CHECK_MSG(help && strstr(help, vars[v].flags[f]), "bench.sh passes %s (%s) to `fragbench %s`, which does not take it",
                  vars[v].var, vars[v].flags[f], cmd);
      free(help);
      checked++;
    }
  }
  CHECK(checked >= 3);                                  /* run's/mincap's searches and explain */
  free(sh);
}

/* make bench's GPU phase (scripts/gpu_lanes.sh): job lists side by side within a memory
 * budget and a number of lanes, each list's jobs one after another, a list larger than
 * the budget alone. The jobs note their start and end in one log; the most running at
 * once is counted from it. */
static int lanes_most_at_once(const char *budget, const char *lanes, const char *needs[], int n, int *jobs, long *most_held) {
  char inputs[512], log[512], cmd[4096];
  snprintf(log, sizeof log, "%s/lanes.log", test_tmpdir());
  snprintf(inputs, sizeof inputs, "%s/lanes.inputs", test_tmpdir());
  remove(log);
  FILE *f = fopen(inputs, "w");
  if (!f) return -1;
  for (int i = 0; i < n; i++) {
    char list[512];
    snprintf(list, sizeof list, "%s/lanes.list%d", test_tmpdir(), i);
    FILE *l = fopen(list, "w");
    if (!l) { fclose(f); return -1; }
    fprintf(l, "L%d.a\nL%d.b\n", i, i);   /* two jobs a list, one after another */
    fclose(l);
    fprintf(f, "%s %s\n", list, needs[i]);
  }
  fclose(f);
  snprintf(cmd, sizeof cmd, "sh scripts/gpu_lanes.sh %s %s '%s' sh -c 'echo start $0 >> \"%s\"; sleep 0.3; echo end $0 >> \"%s\"'",
           budget, lanes, inputs, log, log);
  if (system(cmd) != 0) return -1;
  char *text = test_read_file(log);
  if (!text) return -1;
  int now = 0, most = 0, k;
  long held = 0;   /* the needs of the lists running, by the jobs' own log */
  *jobs = 0;
  *most_held = 0;
  for (char *p = text; *p;) {
    if (!strncmp(p, "start ", 6)) {
      now++; (*jobs)++; if (now > most) most = now;
      if (sscanf(p + 6, "L%d", &k) == 1 && k >= 0 && k < n) held += atol(needs[k]);
      if (held > *most_held) *most_held = held;
    } else if (!strncmp(p, "end ", 4)) {
      now--;
      if (sscanf(p + 4, "L%d", &k) == 1 && k >= 0 && k < n) held -= atol(needs[k]);
    }
    char *nl = strchr(p, '\n');
    if (!nl) break;
    p = nl + 1;
  }
  free(text);
  return most;
}

LONG_TEST(bench_gpu_lanes_keep_within_the_memory_budget_and_the_lanes) {
  const char *needs[] = {"60", "30", "30", "30", "10"};
  int jobs = 0;
  long held = 0;
  int most = lanes_most_at_once("70", "8", needs, 5, &jobs, &held);   /* 60 with the 10 beside it, then the 30s two or three at a time */
  CHECK_MSG(most >= 2 && most <= 3, "%d lists at once", most);
  CHECK_MSG(held == 70, "at most %ld held at once: within 70, and full at the start (60 + 10)", held);
  CHECK_EQ(jobs, 10);
  char log[512];
  snprintf(log, sizeof log, "%s/lanes.log", test_tmpdir());
  char *t = test_read_file(log);
  CHECK(t && strstr(t, "start L4.a") && strstr(t, "end L0.b"));
  CHECK_MSG(strstr(t, "start L4.a") < strstr(t, "end L0.b"), "the 10 waited for the 60 to end instead of filling the room beside it");
  free(t);
  CHECK_EQ(lanes_most_at_once("1000", "3", needs, 5, &jobs, &held), 3);   /* memory no bound: the lanes are */
  CHECK_EQ(jobs, 10);
  const char *big[] = {"500", "500"};
  CHECK_EQ(lanes_most_at_once("100", "8", big, 2, &jobs, &held), 1);   /* each larger than the budget: alone, still run */
  CHECK_EQ(jobs, 4);
}

/* make bench's GPU path on a stand-in GPU (tests/stand_in_gpu.sh: a cuda device of an
 * H100's size that is sim underneath): every step completes and every mincap found is
 * confirmed - with a trace larger than a workload in one batch, the order fragbench takes
 * sources in (workloads first) differs from the batch's largest-first one; the rows come
 * back in source order */
LONG_TEST(bench_gpu_path_on_a_stand_in_gpu_confirms_every_cap) {
  if (access("scripts/bench.sh", R_OK) || access("tests/stand_in_gpu.sh", R_OK)) SKIP("run from the repository root");
  char dir[600], vars[1600];
  const char *bin = test_fragbench_bin();
  if (!bin) SKIP("no fragbench binary beside the tests");
  snprintf(vars, sizeof vars, "STAND_IN_FOR='%s' WORKLOADS='leaky_losses' TRACES='%s %s' ALLOCATORS='caching raw async' GPU_LANES=1 BATCH=2",
           bin, test_data("leaky_losses.pickle.gz"), test_data("gpt_train_short_frames.pickle"));
  int ok;
  char *out = bench_run("bench_gpu", vars, "tests/stand_in_gpu.sh", dir, sizeof dir, &ok);
  CHECK_MSG(ok, "bench.sh failed:\n%s", out ? out : "");
  CHECK_CONTAINS(out, "(2 batches of inputs)");
  CHECK_CONTAINS(out, "mincaps confirmed on the GPU: 6 of 6");   /* 3 inputs x caching and raw */
  char p[700];
  snprintf(p, sizeof p, "%s/mincap.csv", dir);
  char *m = test_read_file(p);
  CHECK(m);
  const char *order[] = {",leaky_losses,", ",leaky_losses.pickle,", ",gpt_train_short_frames.pickle,"};   /* source order */
  char *at = m;
  for (int i = 0; i < 3 && at; i++) {
    char *hit = strstr(at, order[i]);
    CHECK_MSG(hit, "mincap.csv: %s missing or out of order", order[i] + 1);
    at = hit;
  }
  CHECK_EQ(count(m, "\n") - count(m, "# fragbench") - 1, 9);   /* 3 inputs x 3 strategies, async's searched "on the GPU" */
  free(m);
  snprintf(p, sizeof p, "%s/env.txt", dir);
  char *env = test_read_file(p);
  CHECK_CONTAINS(env, "6 of 6 confirmed");
  CHECK_CONTAINS(env, "of them at the cap by their uncapped cuda row");   /* raw's, at least (cap-blind, mincap = its peak) */
  CHECK_CONTAINS(env, "of them one step below by their peak requested");   /* raw's again: its mincap is its peak requested */
  CHECK_CONTAINS(env, "of its probes answered by its uncapped rows and cap sweep there, not replayed");   /* async's searches */
  CHECK_CONTAINS(env, "of its rows, at caps at or above what its uncapped cuda row reserved, are that row");   /* its sweep */
  free(env);
  free(out);
}

/* ASYNC_BESIDE=N on a GPU host: async's uncapped rows first, then its GPU searches beside
 * the other strategies' uncapped rows - two runs whose rows, timelines and table are put
 * back in one run's order (scripts/merge_split_run.awk): on the stand-in GPU every CSV
 * and timeline is the one the bench without it writes, timing columns aside, and the
 * table on stderr is one table */
LONG_TEST(bench_async_beside_writes_the_rows_of_one_run) {
  if (access("scripts/bench.sh", R_OK) || access("tests/stand_in_gpu.sh", R_OK)) SKIP("run from the repository root");
  const char *bin = test_fragbench_bin();
  if (!bin) SKIP("no fragbench binary beside the tests");
  char dir[2][600], vars[1600];
  char *out[2];
  for (int k = 0; k < 2; k++) {
    snprintf(vars, sizeof vars,
             "STAND_IN_FOR='%s' WORKLOADS='leaky_losses' TRACES='%s' ALLOCATORS='caching async raw async:release_threshold=0' "
             "GPU_LANES=2 ASYNC_BESIDE=%d", bin, test_data("gpt_train_short_frames.pickle"), 2 * k);
    int ok;
    out[k] = bench_run(k ? "bench_beside" : "bench_alone", vars, "tests/stand_in_gpu.sh", dir[k], sizeof dir[k], &ok);
    CHECK_MSG(ok, "bench.sh failed:\n%s", out[k] ? out[k] : "");
  }
  CHECK_CONTAINS(out[1], "beside the other strategies' uncapped rows");
  CHECK(!strstr(out[0], "beside the other strategies' uncapped rows"));
  CHECK_EQ(count(out[1], "\nworkload "), 1);   /* one table */
  const char *files[] = {"runs.csv", "capsweep.csv", "mincap.csv", "timeline-leaky_losses.csv", "timeline-gpt_train_short_frames.pickle.csv"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char p[2][1300];
    for (int k = 0; k < 2; k++) snprintf(p[k], sizeof p[k], "%s/%s", dir[k], files[i]);
    char *a = test_read_untimed(p[0]), *b = test_read_untimed(p[1]);
    CHECK_MSG(a && b && !strcmp(a, b), "%s differs with ASYNC_BESIDE", files[i]);
    free(a);
    free(b);
  }
  char p[700];
  snprintf(p, sizeof p, "%s/runs.csv", dir[1]);
  char *runs = test_read_file(p);
  CHECK_EQ(count(runs, "\n") - count(runs, "# fragbench") - 1, 8);   /* 2 inputs x 4 strategies */
  free(runs);
  free(out[0]);
  free(out[1]);
}

/* a bench that stops before its first step (an unreadable TRACES entry, ASYNC_BESIDE not a
 * number) says why, exits 2 and leaves no folder it made behind */
TEST(bench_stopped_before_its_first_step_leaves_no_folder) {
  if (access("scripts/bench.sh", R_OK)) SKIP("scripts/bench.sh not found (run from the repository root)");
  const char *bin = test_fragbench_bin();
  if (!bin) SKIP("no fragbench binary beside the tests");
  const char *vars[] = {"DEVICE=sim TRACES='/nonexistent/snap.pickle'", "DEVICE=sim ASYNC_BESIDE=two"};
  const char *says[] = {"cannot read '/nonexistent/snap.pickle'", "ASYNC_BESIDE='two': expected a number"};
  for (int i = 0; i < 2; i++) {
    char dir[600], name[32];
    snprintf(name, sizeof name, "bench_stopped_%d", i);
    int ok;
    char *out = bench_run(name, vars[i], bin, dir, sizeof dir, &ok);
    CHECK(!ok);
    CHECK_CONTAINS(out, says[i]);
    CHECK_MSG(access(dir, F_OK) != 0, "%s left behind", dir);
    free(out);
  }
}
