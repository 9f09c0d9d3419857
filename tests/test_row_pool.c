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

/* the CSV without the columns that time the run */
static char *untimed(const char *path) {
  char *t = test_read_file(path);
  if (t) test_csv_drop_timed(t);
  return t;
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
  char *x = untimed(a), *y = untimed(b);
  CHECK(x && y);
  int lines = 0;
  for (char *p = x; *p; p++) lines += *p == '\n';
  CHECK_EQ(lines, 1 + 2 * 3 * 3);
  CHECK_STR(x, y);
  free(x);
  free(y);
}
