/* test_readme.c - README.md stays true about the repository: every repository path it
 * names (harness/..., allocators/..., workloads/..., tests/..., scripts/..., plots/...,
 * results/..., docs/...) exists. Placeholders (NAME, DIR, <stamp>, *, {a,b}) are not
 * paths; a run folder's own entries (its plots/data/) are not repository paths. */
#include <ctype.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "test.h"

static const char *const roots[] = {"harness/", "allocators/", "workloads/", "tests/", "scripts/", "plots/", "results/", "docs/", NULL};
/* named in README as entries of a run folder (results/bench-<stamp>/), not of the repository */
static const char *const run_folder[] = {"plots/data/", NULL};

static int path_char(int c) { return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/' || c == '*' || c == '<' || c == '>' || c == '{' || c == '}'; }

TEST(readme_names_only_paths_that_exist) {
  char *t = test_read_file("README.md");
  CHECK(t != NULL);
  int checked = 0;
  char missing[2048] = "";
  size_t nm = 0;
  for (char *p = t; *p; p++) {
    if (p > t && (path_char((unsigned char)p[-1]) || p[-1] == '$')) continue;   /* inside a longer word */
    int root = -1;
    for (int r = 0; roots[r]; r++) if (!strncmp(p, roots[r], strlen(roots[r]))) { root = r; break; }
    if (root < 0) continue;
    char path[512];
    size_t n = 0;
    while (path_char((unsigned char)p[n]) && n + 1 < sizeof path) { path[n] = p[n]; n++; }
    path[n] = 0;
    while (n && (path[n - 1] == '.' || path[n - 1] == ',')) path[--n] = 0;   /* sentence punctuation */
    if (strpbrk(path, "*<>{}") || strstr(path, "NAME") || strstr(path, "DIR")) continue;
    int skip = 0;
    for (int k = 0; run_folder[k]; k++) skip |= !strcmp(path, run_folder[k]);
    if (skip) continue;
    struct stat st;
    checked++;
    if (stat(path, &st) && nm < sizeof missing - 100) nm += (size_t)snprintf(missing + nm, sizeof missing - nm, " %s", path);
  }
  free(t);
  CHECK_MSG(!missing[0], "README.md names paths that do not exist:%s", missing);
  CHECK(checked > 30);
}
