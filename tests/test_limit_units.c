/* test_limit_units.c - a limit as written on the command line (limit.h limit_parse):
 * G/Gi/GiB = 2^30 and GB = 10^9, any case; every command that takes a limit says it back
 * once, in GiB and bytes, with how it was read; a limit without a unit, in hexadecimal,
 * below one byte or above the simulated device is refused; --alloc-conf '' is PyTorch's
 * default. */
#include <stdlib.h>
#include "test.h"
#include "limit.h"

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/lu_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/lu_err.txt", test_tmpdir());
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; hay && (p = strstr(p, needle)); p++) n++;
  return n;
}

TEST(limit_parse_reads_G_as_GiB_and_GB_as_10_to_the_9_in_any_case) {
  struct limit_text lt;
  char err[600];
  static const struct { const char *t; uint64_t b; const char *how; } ok[] = {
    {"10G", 10ull << 30, "G = GiB = 2^30 bytes"}, {"10g", 10ull << 30, "g = GiB = 2^30 bytes"}, {"10Gi", 10ull << 30, "Gi = 2^30 bytes"},
    {"10GiB", 10ull << 30, "GiB = 2^30 bytes"}, {"10gib", 10ull << 30, "gib = 2^30 bytes"}, {"10GB", 10000000000ull, "GB = 10^9 bytes"},
    {"10gb", 10000000000ull, "gb = 10^9 bytes"}, {"1.5GiB", 1610612736ull, "GiB = 2^30 bytes"}, {"512MB", 512000000ull, "MB = 10^6 bytes"},
    {"1048576B", 1048576ull, "bytes"}};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    CHECK_MSG(!limit_parse("--limit", ok[i].t, 0, 80ull << 30, 1ull << 46, &lt, err, sizeof err), "%s: %s", ok[i].t, err);
    CHECK_EQ(lt.fraction, 0);
    CHECK_EQ(lt.bytes, ok[i].b);
    CHECK_STR(lt.how, ok[i].how);
  }
  CHECK(!limit_parse("--limit", "25%", 0, 80ull << 30, 1ull << 46, &lt, err, sizeof err));
  CHECK(lt.fraction && lt.bytes == 20ull << 30);
  CHECK(!limit_parse("--limit", "0.25", 0, 80ull << 30, 1ull << 46, &lt, err, sizeof err));
  CHECK(lt.fraction && lt.bytes == 20ull << 30);
}

TEST(limit_parse_refuses_a_bare_number_hex_and_a_limit_below_one_byte) {
  struct limit_text lt;
  char err[600];
  static const struct { const char *t; int frac; const char *msg; } bad[] = {
    {"10", 0, "--limit '10': a limit needs a unit, e.g. 10GiB (10 x 2^30 bytes; 10G is the same), 10GB (10^10 bytes), 1048576B (bytes)"},
    {"0x10", 0, "(hexadecimal is not read)"},
    {"0x1p40", 0, "(hexadecimal is not read)"},
    {"0.00000000001", 0, "is 0.859 bytes: below one byte, no limit a device can hold"},
    {"1e-12%", 0, "below one byte"},
    {"1e-300", 1, "below one byte"},
    {"0B", 0, "a limit of 0 bytes: nothing fits under it"},
    {"0.1B", 0, "below one byte"},
    {"64Ti", 0, ""},   /* within the 64 TiB bound: refused against the device below */
    {"65Ti", 0, "more than any device holds (at most 64.00 TiB)"},
    {"10GQ", 0, "unknown unit 'GQ'"},
    {"150%", 0, "expected a percentage of the device total in (0%, 100%]"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = limit_parse(bad[i].frac ? "--cap" : "--limit", bad[i].t, bad[i].frac, 80ull << 30, 1ull << 46, &lt, err, sizeof err);
    if (!bad[i].msg[0]) { CHECK_EQ(rc, 0); continue; }
    CHECK_MSG(rc == 2, "%s accepted", bad[i].t);
    CHECK_CONTAINS(err, bad[i].msg);
  }
}

TEST(limit_every_command_says_the_limit_back_once_in_gib_and_bytes_with_how_it_was_read) {
  paths();
  const char *snap = "tests/variants/oom_fragmented.pickle";
  const char *want = "limit 1.00 GiB (1073741824 bytes): given (--limit 1G: G = GiB = 2^30 bytes)";
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--limit", "1G", "--device", "sim", NULL), 0);
  char *e = test_read_file(errp);
  CHECK_EQ(count(e, want), 1);
  free(e);
  test_cli(outp, errp, "mincap", "--trace", snap, "--limit", "1G", "--device", "sim", NULL);
  e = test_read_file(errp);
  CHECK_EQ(count(e, want), 1);
  free(e);
  test_cli(outp, errp, "explain", "--trace", snap, "--limit", "1G", NULL);
  e = test_read_file(errp);
  CHECK_EQ(count(e, want), 1);
  free(e);
  test_cli(outp, errp, "advise", "--trace", snap, "--limit", "1G", "--variations", "1", NULL);
  e = test_read_file(errp);
  CHECK_EQ(count(e, want), 1);
  free(e);
  test_cli(outp, errp, "fit", "--workload", "train_loop:iters=2", "--vary", "batch", "--to", "2", "--limit", "1G", "--allocator", "raw", NULL);
  e = test_read_file(errp);
  CHECK_EQ(count(e, "fragbench fit: limit 1.00 GiB (1073741824 bytes): given (--limit 1G: G = GiB = 2^30 bytes)"), 1);
  free(e);
  test_cli(outp, errp, "stress", "--allocator", "raw", "--seconds", "0.05", "--limit", "1GB", NULL);
  e = test_read_file(errp);
  CHECK_EQ(count(e, "fragbench stress: limit 953.67 MiB (1000000000 bytes): given (--limit 1GB: GB = 10^9 bytes)"), 1);
  free(e);
  /* a percentage says what it was taken of */
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--limit", "50%", "--device", "sim", "--sim-total", "2GiB", NULL), 0);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "limit 1.00 GiB (1073741824 bytes): given (--limit 50%: of the device's total)");
  free(e);
}

TEST(limit_refused_on_the_command_line_with_the_hint) {
  paths();
  const char *w = "script:events=a1=1KiB/f1";
  static const struct { const char *flag, *val, *msg; } bad[] = {
    {"--limit", "10", "a limit needs a unit, e.g. 10GiB"}, {"--limit", "0x10", "hexadecimal is not read"},
    {"--limit", "0x1p40", "hexadecimal is not read"}, {"--cap", "1e-300", "below one byte"},
    {"--limit", "0.00000000001", "below one byte"}, {"--limit", "1e-12%", "below one byte"},
    {"--limit", "64Ti", "--limit 64Ti: 64.00 TiB is above the simulated device's total"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", bad[i].flag, bad[i].val, "--fail-on-oom", NULL), 2);
    char *e = test_read_file(errp);
    CHECK_CONTAINS(e, bad[i].msg);
    free(e);
  }
  /* advise on the simulated device: 64Ti is no headroom, it is above the device */
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", "tests/variants/oom_fragmented.pickle", "--limit", "64Ti", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "above the simulated device's total");
  CHECK(!strstr(e, "headroom"));
  free(e);
}

TEST(alloc_conf_empty_is_pytorchs_default) {
  paths();
  char csv[512];
  snprintf(csv, sizeof csv, "%s/lu_conf.csv", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", "script:events=a1=1KiB/f1", "--device", "sim", "--alloc-conf", "", "--out", csv, "--quiet", NULL), 0);
  char *t = test_read_file(csv);
  CHECK_CONTAINS(t, ",caching,");
  free(t);
}
