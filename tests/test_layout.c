/* test_layout.c - the tree keeps its shape: scripts/include_graph.sh finds no include
 * that points from a lower concept folder to a higher one (cli -> engine -> allocators ->
 * workloads -> device -> common). */
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "test.h"

TEST(layout_includes_only_point_down) {
  if (access("scripts/include_graph.sh", R_OK)) SKIP("scripts/include_graph.sh not found (run from the repository root)");
  char log[512], cmd[700];
  snprintf(log, sizeof log, "%s/include_graph.log", test_tmpdir());
  snprintf(cmd, sizeof cmd, "sh scripts/include_graph.sh > '%s' 2>&1", log);
  int st = system(cmd);
  int rc = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  char *text = test_read_file(log);
  CHECK_MSG(rc == 0, "scripts/include_graph.sh exited %d:\n%s", rc, text ? text : "");
  CHECK_CONTAINS(text, "ok: every arrow points down");
  CHECK_CONTAINS(text, "harness/engine -> allocators");
  free(text);
}
