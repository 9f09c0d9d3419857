/* test_breakdown.c - `run --breakdown`: peak reserved split by stream, counted by the
 * device layer (harness/device/stream_acct.c), for every strategy without anything in
 * the strategy beyond naming its pools (allocator_ops.pool_of): each share at the peak adds
 * up to the row's peak_reserved, a segment is charged to the stream and pool whose
 * allocation made it, and the accounting map survives growth and deletion. */
#include <stdlib.h>
#include "test.h"
#include "results_read.h"
#include "stream_acct.h"

static char outp[512], errp[512], runs[512], bd[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/bd_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/bd_err.txt", test_tmpdir());
  snprintf(runs, sizeof runs, "%s/bd_runs.csv", test_tmpdir());
  snprintf(bd, sizeof bd, "%s/bd.csv", test_tmpdir());
}

TEST(breakdown_shares_at_the_peak_add_up_to_peak_reserved_for_every_strategy) {
  paths();
  const char *w = "script:events=a1=4MiB@1/a2=4MiB@2/a3=6MiB@1/f1/a4=3MiB@2/a5=8KiB@1/f2/i/f3/a6=12MiB@2/f4/f5/f6/a7=1MiB@1/f7/i/e,repeat=5";
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "raw", "--allocator", "caching", "--allocator", "expandable",
                    "--allocator", "bfc", "--allocator", "pool", "--allocator", "stitch", "--device", "sim", "--quiet",
                    "--out", runs, "--breakdown", bd, NULL), 0);
  struct results r, b;
  char err[512];
  CHECK_EQ(results_load(runs, &r, err, sizeof err), 0);
  CHECK_EQ(results_load_table(bd, (const char *const[]){"run_id", "stream", "reserved_at_peak", NULL}, &b, err, sizeof err), 0);
  CHECK_EQ(r.nrows, 6);
  for (int i = 0; i < r.nrows; i++) {
    uint64_t sum = 0;
    int lines = 0;
    for (int j = 0; j < b.nrows; j++)
      if (!strcmp(results_get(&b, j, "run_id"), results_get(&r, i, "run_id"))) { sum += results_u64(&b, j, "reserved_at_peak", NULL); lines++; }
    CHECK_MSG(lines >= 1, "%s: no breakdown lines", results_get(&r, i, "allocator"));
    CHECK_MSG(sum == results_u64(&r, i, "peak_reserved", NULL), "%s: streams sum to %llu, peak_reserved %s",
              results_get(&r, i, "allocator"), (unsigned long long)sum, results_get(&r, i, "peak_reserved"));
  }
  results_free(&r);
  results_free(&b);
}

TEST(breakdown_charges_a_segment_to_the_stream_and_pool_whose_allocation_made_it) {
  paths();
  /* caching: a 4 MiB request on stream 1 and a 6 MiB one on stream 2 each get their own
   * 20 MiB segment (kLargeBuffer; pools are per stream), a 512 B one on stream 1 a 2 MiB
   * small-pool segment */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=4MiB@1/a2=6MiB@2/a3=512@1/f1/f2/f3", "--allocator", "caching",
                    "--device", "sim", "--quiet", "--out", runs, "--breakdown", bd, NULL), 0);
  struct results b;
  char err[512];
  CHECK_EQ(results_load_table(bd, (const char *const[]){"run_id", "stream", "pool", "reserved_at_peak", NULL}, &b, err, sizeof err), 0);
  CHECK_EQ(b.nrows, 3);
  CHECK_STR(results_get(&b, 0, "stream"), "1");
  CHECK_STR(results_get(&b, 0, "pool"), "large");
  CHECK_EQ(results_u64(&b, 0, "reserved_at_peak", NULL), 20ull << 20);
  CHECK_STR(results_get(&b, 1, "stream"), "2");
  CHECK_STR(results_get(&b, 1, "pool"), "large");
  CHECK_EQ(results_u64(&b, 1, "reserved_at_peak", NULL), 20ull << 20);
  CHECK_STR(results_get(&b, 2, "stream"), "1");
  CHECK_STR(results_get(&b, 2, "pool"), "small");
  CHECK_EQ(results_u64(&b, 2, "reserved_at_peak", NULL), 2ull << 20);
  CHECK_EQ(results_u64(&b, 2, "peak_reserved", NULL), 42ull << 20);
  results_free(&b);
}

/* one plan for every launcher: with --devices each device's row has its own lines, under
 * its run_id (the device=all row has none: it holds no memory of its own) */
TEST(breakdown_works_with_several_devices) {
  paths();
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=4MiB/f1", "--devices", "sim:2", "--breakdown", bd,
                    "--quiet", NULL), 0);
  char *t = test_read_file(bd);
  CHECK(t != NULL);
  CHECK(strstr(t, "\n1,") != NULL);
  CHECK(strstr(t, "\n2,") != NULL);
  CHECK(strstr(t, "\n3,") == NULL);
  free(t);
}

TEST(stream_acct_gives_back_what_each_key_took_through_growth_and_deletion) {
  struct stream_acct a;
  stream_acct_init(&a);
  uint64_t reserved = 0, peak = 0;
  for (uint64_t k = 1; k <= 5000; k++) {
    a.cur = k % 3;
    reserved += k;
    if (reserved > peak) peak = reserved;
    stream_acct_take(&a, k * 2097152, k, reserved, peak);
  }
  CHECK_EQ(a.n, 3);
  CHECK_EQ(a.now[0] + a.now[1] + a.now[2], reserved);
  CHECK_EQ(a.at_peak[0] + a.at_peak[1] + a.at_peak[2], peak);
  for (uint64_t k = 1; k <= 5000; k += 2) stream_acct_give(&a, k * 2097152);   /* every other key first */
  for (uint64_t k = 2; k <= 5000; k += 2) stream_acct_give(&a, k * 2097152);
  CHECK_EQ(a.now[0], 0);
  CHECK_EQ(a.now[1], 0);
  CHECK_EQ(a.now[2], 0);
  CHECK_EQ(a.count, 0);
  stream_acct_give(&a, 12345);   /* unknown: ignored */
  stream_acct_free(&a);
}
