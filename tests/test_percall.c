/* test_percall.c - `fragbench percall`: the fastest of --passes fresh replays in one
 * process is the one written, its figure the smallest of the fresh passes printed; the
 * warm figure is the smallest of the warm passes (the first on a new strategy, the rest on
 * it as the pass before left it); a pass that does not complete is named, exit 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "replay.h"
#include "test.h"

TEST(percall_keeps_the_fastest_pass) {
  char out[512], err[512], csv[512];
  snprintf(out, sizeof out, "%s/percall.out", test_tmpdir());
  snprintf(err, sizeof err, "%s/percall.err", test_tmpdir());
  snprintf(csv, sizeof csv, "%s/percall.csv", test_tmpdir());
  CHECK_EQ(test_cli(out, err, "percall", "--trace", test_data("leaky_losses.pickle.gz"), "--allocator", "caching", "--passes", "4",
                    "--device", "sim", "--out", csv, NULL), 0);
  char *t = test_read_file(out), *c = test_read_file(csv);
  CHECK(t && c);
  char *line = strstr(t, "leaky_losses.pickle");
  CHECK(line);
  double best = 0, warm = 0, pass[4], wpass[4];
  char name[64], alloc[32], dev[16], bar[4];
  CHECK_EQ(sscanf(line, "%63s %31s %15s %lf %lf %lf %lf %lf %lf %3s %lf %lf %lf %lf", name, alloc, dev, &best, &warm, &pass[0], &pass[1],
                  &pass[2], &pass[3], bar, &wpass[0], &wpass[1], &wpass[2], &wpass[3]), 14);
  CHECK_STR(bar, "|");
  double lo = pass[0], wlo = wpass[0];
  for (int i = 1; i < 4; i++) if (pass[i] < lo) lo = pass[i];
  for (int i = 1; i < 4; i++) if (wpass[i] < wlo) wlo = wpass[i];
  CHECK(fabs(best - lo) < 1e-9);
  CHECK(fabs(warm - wlo) < 1e-9);
  char cell[64];
  CHECK_EQ(test_csv_cell(c, "ns_per_op", cell, sizeof cell), 0);
  CHECK(fabs(atof(cell) - best) < 0.05 + 1e-3 * best);   /* the row written is the fastest pass's */
  CHECK_EQ(test_csv_cell(c, "allocator", cell, sizeof cell), 0);
  CHECK_STR(cell, "caching");
  free(t);
  free(c);
  /* a pass that cannot complete (a limit below the peak): named, exit 1 */
  CHECK_EQ(test_cli(out, err, "percall", "--trace", test_data("leaky_losses.pickle.gz"), "--allocator", "caching", "--passes", "2",
                    "--device", "sim", "--sim-total", "100MiB", NULL), 1);
  char *e = test_read_file(err);
  CHECK_CONTAINS(e, "pass 1:");
  free(e);
}

/* warm passes time the same replay again on the strategy as it was left: the row's figures
 * are the first pass's (equal to a replay without them), every warm pass has a figure,
 * and validation holds through them (the cache kept, what was left live freed between) */
TEST(percall_warm_passes_keep_the_rows_figures) {
  const char *allocs[] = {"caching", "expandable", "bfc", "raw"};
  for (int i = 0; i < 4; i++) {
    struct run_spec s = {.trace = "tests/data/gpt_train_short_frames.pickle", .trace_device = -1, .world = 1, .quiet = 1,
                         .validate = 1, .allocator = allocs[i]};
    s.device.kind = "sim";
    struct run_result plain, warm;
    run_result_init(&plain);
    CHECK_MSG(replay_run(&s, &plain) == 0, "%s", plain.status);
    double ns[3];
    s.warm_passes = 3;
    s.warm_ns = ns;
    run_result_init(&warm);
    CHECK_MSG(replay_run(&s, &warm) == 0, "%s: %s", allocs[i], warm.status);
    CHECK_MSG(warm.completed && !strcmp(warm.status, "ok"), "%s: %s", allocs[i], warm.status);
    CHECK_EQ(warm.peak_reserved, plain.peak_reserved);
    CHECK_EQ(warm.events, plain.events);
    CHECK_EQ(warm.device_allocs, plain.device_allocs);
    for (int p = 0; p < 3; p++) CHECK_MSG(ns[p] > 0 && !isnan(ns[p]), "%s: warm pass %d: %f", allocs[i], p, ns[p]);
  }
}
