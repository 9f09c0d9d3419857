/* test_regress.c - the regression check under test: tests/test_regress_detects.sh
 * changes one constant of the caching strategy (kLargeBuffer, 20 -> 16 MiB) in a copy of
 * the tree and expects `tests/regress.sh` (make regress) to fail on a memory figure, after
 * checking that the unchanged copy passes. Skipped until a baseline is committed. */
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "test.h"
#include "allocator.h"

LONG_TEST(regress_fails_when_a_caching_constant_changes) {
  if (access("results/baseline-sim.csv", R_OK)) SKIP("no results/baseline-sim.csv yet (make baseline)");
  if (!allocator_find("caching")) SKIP("the caching strategy is not registered");
  if (access("tests/test_regress_detects.sh", R_OK)) SKIP("tests/test_regress_detects.sh not found (run from the repository root)");
  char log[512], cmd[700];
  snprintf(log, sizeof log, "%s/regress_detects.log", test_tmpdir());
  snprintf(cmd, sizeof cmd, "sh tests/test_regress_detects.sh > '%s' 2>&1", log);
  int st = system(cmd);
  int rc = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  char out[4096] = "";
  char *text = test_read_file(log);
  if (text) {
    snprintf(out, sizeof out, "%s", text);
    free(text);
  }
  if (rc == 77) SKIP("test_regress_detects.sh found nothing to test");
  CHECK_MSG(rc == 0, "tests/test_regress_detects.sh exited %d:\n%s", rc, out);
  CHECK_CONTAINS(out, "ok: regress caught");
  CHECK_CONTAINS(out, "peak_reserved");
}
