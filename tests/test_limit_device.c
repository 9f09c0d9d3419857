/* test_limit_device.c - a limit given as a share of the device (N%, a fraction) is resolved
 * in one place (limit_on_device, limit.h) against the device the rows run on, and every
 * command says back the figure its rows ran under. */
#include "test.h"
#include <stdlib.h>
#include "limit.h"

TEST(limit_device_fraction_of_the_rows_device) {
  struct device_config a = {.kind = "sim"}, b = {.kind = "sim", .sim_total = 40ull << 30};
  CHECK_EQ(limit_device_total(&a), SIM_TOTAL_DEFAULT);
  CHECK_EQ(limit_device_total(&b), 40ull << 30);
  CHECK_EQ(limit_on_device(1, 0.5, 0, limit_device_total(&b)), 20ull << 30);
  CHECK_EQ(limit_on_device(0, 0.5, 123, limit_device_total(&b)), 123);   /* bytes stay bytes */
  CHECK_EQ(limit_on_device(1, 0.25, 0, 1000), 250);
}

static int has(const char *path, const char *what) {
  char *t = test_read_file(path);
  int r = t && strstr(t, what);
  free(t);
  return r;
}

/* --limit 50% on a 40 GiB device: the rows run under 20 GiB and every command says 20 GiB */
TEST(limit_device_said_as_the_rows_ran) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/ld.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/ld.err", test_tmpdir());
  const char *snap = test_data("gpt_train.pickle.gz");
  const char *said = "limit 20.00 GiB (21474836480 bytes)";
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--limit", "50%", "--device", "sim", "--sim-total", "40GiB",
                    "--allocator", "caching", NULL), 0);
  CHECK(has(errp, said));
  CHECK(has(outp, ",21474836480,"));   /* the row's cap_bytes */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "train_loop", "--limit", "50%", "--devices", "sim:2", "--sim-total", "40GiB",
                    "--allocator", "caching", NULL), 0);
  CHECK(has(errp, said));
  CHECK(has(outp, ",21474836480,"));   /* each device's row */
  test_cli(outp, errp, "mincap", "--trace", snap, "--limit", "50%", "--device", "sim", "--sim-total", "40GiB", "--allocator", "caching", NULL);
  CHECK(has(errp, said));
  test_cli(outp, errp, "fit", "--workload", "train_loop", "--vary", "batch", "--limit", "50%", "--sim-total", "40GiB", "--allocator",
           "caching", NULL);
  CHECK(has(errp, said));
  CHECK(has(outp, ",21474836480,"));   /* limit_bytes */
  test_cli(outp, errp, "explain", "--trace", snap, "--limit", "50%", "--sim-total", "40GiB", NULL);
  CHECK(has(errp, said));
}
