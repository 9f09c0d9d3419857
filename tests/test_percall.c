/* test_percall.c - `fragbench percall`: the fastest of --passes replays in one process is
 * the one written, its figure the smallest of the passes printed; a pass that does not
 * complete is named and the command exits 1. */
#include <math.h>
#include <stdlib.h>
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
  double best = 0, pass[4];
  char name[64], alloc[32], dev[16];
  CHECK_EQ(sscanf(line, "%63s %31s %15s %lf %lf %lf %lf %lf", name, alloc, dev, &best, &pass[0], &pass[1], &pass[2], &pass[3]), 8);
  double lo = pass[0];
  for (int i = 1; i < 4; i++) if (pass[i] < lo) lo = pass[i];
  CHECK(fabs(best - lo) < 1e-9);
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
