/* test_row_pool.c - the engine's pool (row_pool.h): results handed over in task order
 * whatever order the tasks finish in and whatever the thread count, a stop that starts
 * nothing more; and `run`'s rows on one simulated device the same with 1 or 3 workers. */
#include <stdlib.h>
#include <unistd.h>
#include <time.h>
#include "test.h"
#include "row_pool.h"

struct order { int n, stop_at, got[64], ngot, ran[64]; };

static void task(int i, void *ctx) {
  struct order *o = ctx;
  struct timespec ts = {0, (long)((o->n - i) % 4) * 2000000L};   /* later tasks finish first */
  nanosleep(&ts, NULL);
  __atomic_store_n(&o->ran[i], 1, __ATOMIC_RELAXED);
}

static int done(int i, void *ctx) {
  struct order *o = ctx;
  o->got[o->ngot++] = i;
  return o->stop_at >= 0 && i == o->stop_at;
}

TEST(row_pool_hands_results_over_in_task_order_on_any_thread_count) {
  for (int threads = 1; threads <= 5; threads += 2) {
    struct order o = {.n = 40, .stop_at = -1};
    CHECK_EQ(row_pool_run(o.n, threads, task, done, NULL, &o), 40);
    CHECK_EQ(o.ngot, 40);
    for (int i = 0; i < 40; i++) { CHECK_EQ(o.got[i], i); CHECK_EQ(o.ran[i], 1); }
  }
}

TEST(row_pool_stop_starts_nothing_more) {
  for (int threads = 1; threads <= 3; threads += 2) {
    struct order o = {.n = 40, .stop_at = 5};
    CHECK_EQ(row_pool_run(o.n, threads, task, done, NULL, &o), 6);
    CHECK_EQ(o.ngot, 6);
    int ran = 0;
    for (int i = 0; i < 40; i++) ran += o.ran[i];
    CHECK_MSG(ran <= 6 + 8 * threads, "%d tasks ran after a stop at task 5 on %d threads: more than 8 a thread ahead", ran, threads);
  }
}

TEST(run_rows_on_one_sim_device_are_the_same_on_1_and_3_workers) {
  char a[512], b[512];
  snprintf(a, sizeof a, "%s/pool1.csv", test_tmpdir());
  snprintf(b, sizeof b, "%s/pool3.csv", test_tmpdir());
  const char *w = "varlen:iters=300";
  setenv("FB_THREADS", "1", 1);
  int rc1 = test_cli(NULL, NULL, "run", "--workload", w, "--trace", test_data("leaky_losses.pickle.gz"), "--allocator", "caching",
                     "--allocator", "expandable", "--allocator", "bfc", "--cap-x", "1.0,1.1,2", "--out", a, NULL);
  setenv("FB_THREADS", "3", 1);
  int rc3 = test_cli(NULL, NULL, "run", "--workload", w, "--trace", test_data("leaky_losses.pickle.gz"), "--allocator", "caching",
                     "--allocator", "expandable", "--allocator", "bfc", "--cap-x", "1.0,1.1,2", "--out", b, NULL);
  unsetenv("FB_THREADS");
  CHECK_EQ(rc1, rc3);
  char *x = test_read_untimed(a), *y = test_read_untimed(b);
  CHECK(x && y);
  int lines = 0;
  for (char *p = x; *p; p++) lines += *p == '\n';
  CHECK_EQ(lines, 1 + 2 * 3 * 3);
  CHECK_STR(x, y);
  free(x);
  free(y);
}

/* what rows say on stderr side by side is what they say one after another: each row's
 * warnings in row order (a free of an unknown id, skipped), a "not modelled" note once
 * (private pools replayed by pool-blind strategies) */
TEST(run_rows_warnings_are_the_same_on_1_and_3_workers) {
  const char *bad = test_write_tmp("unknown_free.csv", "# fragbench-trace v1\nop,id,size,stream,device\n"
                                   "alloc,1,1048576,0,0\nfree,7,,,0\nfree,1,,,0\nfree,9,,,0\n");
  char e1[512], e3[512], out[512];
  snprintf(e1, sizeof e1, "%s/warn1.err", test_tmpdir());
  snprintf(e3, sizeof e3, "%s/warn3.err", test_tmpdir());
  snprintf(out, sizeof out, "%s/warn.csv", test_tmpdir());
  const char *graphs = "tests/data/recorded/pools/graphed.pickle.gz";
  setenv("FB_THREADS", "1", 1);
  int rc1 = test_cli(NULL, e1, "run", "--trace", bad, "--trace", graphs, "--allocator", "raw", "--allocator", "bfc", "--allocator", "pool",
                     "--device", "sim", "--out", out, NULL);
  setenv("FB_THREADS", "3", 1);
  int rc3 = test_cli(NULL, e3, "run", "--trace", bad, "--trace", graphs, "--allocator", "raw", "--allocator", "bfc", "--allocator", "pool",
                     "--device", "sim", "--out", out, NULL);
  unsetenv("FB_THREADS");
  CHECK_EQ(rc1, rc3);
  char *a = test_read_file(e1), *b = test_read_file(e3);
  CHECK(a && b);
  CHECK_CONTAINS(a, "free of an unknown id");
  CHECK_CONTAINS(a, "not modelled");
  const char *note = "not modelled: private memory pools (CUDA graphs or MemPool): bfc";
  char *first = strstr(a, note);
  CHECK(first);
  CHECK_MSG(!strstr(first + 1, note), "the bfc note twice");
  /* the table's ns/op column differs run to run: compare the lines that are not table rows */
  char *la[256], *lb[256];
  int na = 0, nb = 0;
  for (char *s = strtok(a, "\n"); s && na < 256; s = strtok(NULL, "\n")) if (!strncmp(s, "fragbench", 9)) la[na++] = s;
  for (char *s = strtok(b, "\n"); s && nb < 256; s = strtok(NULL, "\n")) if (!strncmp(s, "fragbench", 9)) lb[nb++] = s;
  CHECK_EQ(na, nb);
  for (int i = 0; i < na && i < nb; i++) CHECK_STR(la[i], lb[i]);
  free(a);
  free(b);
}
