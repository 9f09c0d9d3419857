/* test_multi.c - several devices: one row per device plus device=all whose imbalance is
 * max/min of the per-device peak_reserved; device lists; the aggregate's arithmetic. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "multi.h"
#include "workload.h"
#include "results_read.h"

TEST(multi_aggregate_arithmetic) {
  struct run_result r[3];
  for (int i = 0; i < 3; i++) {
    run_result_init(&r[i]);
    r[i].completed = 1;
    r[i].peak_requested = 100u * (i + 1);
    r[i].peak_reserved = 200u * (i + 1);
    r[i].wall_ns = 10u + (uint64_t)i;
    r[i].allocs = r[i].frees = 5;
    r[i].ns_per_op = 100.0 * (i + 1);
  }
  struct run_result a;
  aggregate_rows(r, 3, &a);
  CHECK_STR(a.device, "all");
  CHECK_EQ(a.peak_reserved, 600);
  CHECK_EQ(a.peak_requested, 300);
  CHECK(fabs(a.imbalance - 3.0) < 1e-12);
  CHECK_EQ(a.wall_ns, 12);
  CHECK(fabs(a.ns_per_op - 200.0) < 1e-9);
  CHECK(fabs(a.overhead - 2.0) < 1e-12);
  CHECK_CONTAINS(a.params, "sum_peak_reserved=1200");
  CHECK_STR(a.status, "ok");
}

TEST(multi_device_list_parsing) {
  struct device_config base = {.kind = "sim"};
  struct device_list dl;
  CHECK_EQ(device_list_parse("sim:4", &base, &dl), 0);
  CHECK_EQ(dl.n, 4);
  CHECK_EQ(dl.cfg[3].index, 3);
  CHECK_EQ(device_list_parse("0,1", &base, &dl), 0);
  CHECK_EQ(dl.n, 2);
  CHECK_EQ(device_list_parse("sim:0", &base, &dl), 2);
  CHECK_EQ(device_list_parse("zero", &base, &dl), 2);
}

static int count_lines(const char *t, const char *needle) {
  int n = 0;
  for (const char *p = t; (p = strstr(p, needle)); p++) n++;
  return n;
}

TEST(multi_sim4_rows_and_imbalance) {
  char csv[512], errp[512];
  snprintf(csv, sizeof csv, "%s/multi.csv", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/multi.err", test_tmpdir());
  const char *wl = workload_find("ddp_buckets") ? "ddp_buckets" : "script:events=a1=1MiB/f1";
  CHECK_EQ(test_cli(NULL, errp, "run", "--workload", wl, "--devices", "sim:4", "--allocator", "raw", "--out", csv, "--quiet", NULL), 0);
  char *t = test_read_file(csv);
  CHECK(t != NULL);
  CHECK_EQ(count_lines(t, ",sim:"), 4);
  CHECK_EQ(count_lines(t, ",all,"), 1);
  /* recompute imbalance from the device rows */
  unsigned long long res[4], mx = 0, mn = ~0ull;
  int k = 0;
  char *line = strchr(t, '\n') + 1;   /* after the header */
  double imb = -1;
  while (line && *line) {
    char *f = line;
    for (int i = 0; i < 21; i++) f = strchr(f, ',') + 1;   /* peak_reserved is field 22 */
    char *dev = line;
    for (int i = 0; i < 6; i++) dev = strchr(dev, ',') + 1;   /* device is field 7 */
    if (!strncmp(dev, "all,", 4)) {
      char *g = line;
      for (int i = 0; i < 41; i++) g = strchr(g, ',') + 1;
      imb = atof(g);
    } else if (k < 4) {
      res[k] = strtoull(f, NULL, 10);
      if (res[k] > mx) mx = res[k];
      if (res[k] < mn) mn = res[k];
      k++;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  CHECK_EQ(k, 4);
  CHECK(fabs(imb - (double)mx / (double)mn) < 1e-3);
  free(t);
}

/* One plan, three launchers: the same selection (two traces x two strategies x a cap of
 * each kind) on one device and on --devices sim:2 (trace i on device i) gives the same
 * memory columns row for row; tests/mpi_test.sh checks the MPI launcher the same way. */
TEST(multi_same_rows_on_one_device_and_on_two) {
  char one[512], two[512], errp[512];
  snprintf(one, sizeof one, "%s/same1.csv", test_tmpdir());
  snprintf(two, sizeof two, "%s/same2.csv", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/same.err", test_tmpdir());
  const char *a = test_data("leaky_losses.pickle.gz"), *b = test_data("leaky_losses.rmm.csv");
  CHECK_EQ(test_cli(NULL, errp, "run", "--trace", a, "--trace", b, "--allocator", "caching", "--allocator", "expandable",
                    "--cap-x", "1.5", "--cap", "0.5", "--device", "sim", "--quiet", "--out", one, NULL), 0);
  CHECK_EQ(test_cli(NULL, errp, "run", "--trace", a, "--trace", b, "--allocator", "caching", "--allocator", "expandable",
                    "--cap-x", "1.5", "--cap", "0.5", "--devices", "sim:2", "--quiet", "--out", two, NULL), 0);
  struct results r1, r2;
  char err[512];
  CHECK(!results_load(one, &r1, err, sizeof err));
  CHECK(!results_load(two, &r2, err, sizeof err));
  /* one device: per trace, per strategy, per cap; two devices: per strategy, per cap, the
   * two traces side by side and the device=all row */
  const char *cols[] = {"trace", "allocator", "cap_bytes", "cap_x", "status", "peak_requested", "peak_allocated", "peak_reserved"};
  int compared = 0;
  for (int t = 0; t < 2; t++)
    for (int s = 0; s < 2; s++)
      for (int c = 0; c < 2; c++) {
        int i1 = t * 4 + s * 2 + c, i2 = (s * 2 + c) * 3 + t;
        for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
          CHECK_MSG(!strcmp(results_get(&r1, i1, cols[k]), results_get(&r2, i2, cols[k])), "row %d vs %d: %s '%s' != '%s'", i1, i2,
                    cols[k], results_get(&r1, i1, cols[k]), results_get(&r2, i2, cols[k]));
        compared++;
      }
  CHECK_EQ(compared, 8);
  CHECK_STR(results_get(&r2, 2, "device"), "all");
  results_free(&r1);
  results_free(&r2);
}

/* --timeline works with several devices: each device's row has its samples, labelled */
TEST(multi_timeline_has_every_device) {
  char tl[512], errp[512];
  snprintf(tl, sizeof tl, "%s/multi_tl.csv", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/multi_tl.err", test_tmpdir());
  CHECK_EQ(test_cli(NULL, errp, "run", "--workload", "script:events=a1=4MiB/f1", "--devices", "sim:2", "--timeline", tl, "--quiet",
                    "--out", "/dev/null", NULL), 0);
  char *t = test_read_file(tl);
  CHECK(t != NULL);
  CHECK_CONTAINS(t, "@sim:0/raw,");
  CHECK_CONTAINS(t, "@sim:1/raw,");
  free(t);
}
