/* test_capture.c - scripts/capture.py (the OOM capture for PyTorch jobs) tested where PyTorch
 * is absent: runs tests/capture/test_capture.py (python3's unittest, jobs run against
 * tests/capture/fake_torch) and fails with its output when any of its tests fails.
 * Skipped when python3 is not installed (CI installs it: .ci/run). */
#include <stdlib.h>
#include "test.h"

TEST(capture_py_unittests) {
  if (system("command -v python3 >/dev/null 2>&1") != 0) SKIP("python3 is not installed");
  char log[600], cmd[1400];
  snprintf(log, sizeof log, "%s/capture_py.log", test_tmpdir());
  snprintf(cmd, sizeof cmd, "python3 tests/capture/test_capture.py > '%s' 2>&1", log);
  int rc = system(cmd);
  char *out = test_read_file(log);
  CHECK_MSG(rc == 0, "tests/capture/test_capture.py failed:\n%s", out ? out : "(no output)");
  CHECK_CONTAINS(out, "\nOK");
  free(out);
}
