/* test_readme.c - README.md and the .md files of docs/ stay true about the repository and the binary:
 * every repository path they name (harness/..., allocators/..., workloads/..., tests/...,
 * scripts/..., plots/..., results/..., docs/...) exists; every `fragbench COMMAND` in
 * their code is a command and every --flag after it one that command takes; every
 * `make TARGET` is a Makefile target; README stays under 300 lines and lists every
 * command; docs/reference.md is what scripts/gen_reference.sh makes from the binary's
 * --help; and the sources' pointers into README and docs/ lead somewhere.
 * Placeholders (NAME, DIR, <stamp>, *, {a,b}) are not paths; a run folder's own entries
 * (its plots/data/) are not repository paths. */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "test.h"
#include "cli.h"
#include "options.h"

static const char *const roots[] = {"harness/", "allocators/", "workloads/", "tests/", "scripts/", "plots/", "results/", "docs/", NULL};
/* named as entries of a run folder (results/bench-<stamp>/), not of the repository, and
 * docs/performance.md's measures (harness/ev: the harness's instructions per event) */
static const char *const run_folder[] = {"plots/data/", "harness/ev", NULL};

static int path_char(int c) { return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/' || c == '*' || c == '<' || c == '>' || c == '{' || c == '}'; }

/* README.md and every .md file of docs/; n files */
static int doc_files(char paths[][128], int max) {
  int n = 0;
  snprintf(paths[n++], 128, "README.md");
  DIR *d = opendir("docs");
  if (!d) return n;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    size_t l = strlen(e->d_name);
    if (l > 3 && !strcmp(e->d_name + l - 3, ".md") && l < 100) snprintf(paths[n++], 128, "docs/%.100s", e->d_name);
  }
  closedir(d);
  return n;
}

/* the repository paths of text that do not exist, appended to missing; how many checked.
 * A path in docs/ may also be relative to docs/ (a markdown link: "fit.md"), which the
 * link check below covers; here only paths from the repository root. */
static int missing_paths(const char *t, char *missing, size_t cap, size_t *nm, const char *file) {
  int checked = 0;
  for (const char *p = t; *p; p++) {
    if (p > t && (path_char((unsigned char)p[-1]) || p[-1] == '$')) continue;   /* inside a longer word */
    int root = -1;
    for (int r = 0; roots[r]; r++) if (!strncmp(p, roots[r], strlen(roots[r]))) { root = r; break; }
    if (root < 0) continue;
    char path[512];
    size_t n = 0;
    while (path_char((unsigned char)p[n]) && n + 1 < sizeof path) { path[n] = p[n]; n++; }
    path[n] = 0;
    while (n && (path[n - 1] == '.' || path[n - 1] == ',')) path[--n] = 0;   /* sentence punctuation */
    if (strpbrk(path, "*<>{}") || strstr(path, "NAME") || strstr(path, "DIR") || strstr(path, "SET")) continue;
    int skip = 0;
    for (int k = 0; run_folder[k]; k++) skip |= !strcmp(path, run_folder[k]);
    if (skip) continue;
    struct stat st;
    checked++;
    if (stat(path, &st) && *nm < cap - 200) *nm += (size_t)snprintf(missing + *nm, cap - *nm, " %s: %s;", file, path);
  }
  return checked;
}

TEST(readme_names_only_paths_that_exist) {
  char *t = test_read_file("README.md");
  CHECK(t != NULL);
  char missing[4096] = "";
  size_t nm = 0;
  int checked = missing_paths(t, missing, sizeof missing, &nm, "README.md");
  free(t);
  CHECK_MSG(!missing[0], "README.md names paths that do not exist:%s", missing);
  CHECK(checked > 15);
}

TEST(docs_name_only_paths_that_exist) {
  char files[64][128];
  int n = doc_files(files, 64), checked = 0;
  char missing[8192] = "";
  size_t nm = 0;
  CHECK(n > 10);
  for (int i = 1; i < n; i++) {
    char *t = test_read_file(files[i]);
    CHECK_MSG(t != NULL, "%s unreadable", files[i]);
    checked += missing_paths(t, missing, sizeof missing, &nm, files[i]);
    free(t);
  }
  CHECK_MSG(!missing[0], "docs name paths that do not exist:%s", missing);
  CHECK(checked > 100);
}

/* every relative markdown link ](x.md) or ](docs/x.md#...) of README and docs leads to a file */
TEST(readme_and_docs_links_lead_to_files) {
  char files[64][128], missing[4096] = "";
  size_t nm = 0;
  int n = doc_files(files, 64), links = 0;
  for (int i = 0; i < n; i++) {
    char *t = test_read_file(files[i]);
    CHECK(t);
    for (char *p = strstr(t, "]("); p; p = strstr(p + 2, "](")) {
      const char *s = p + 2;
      if (!strncmp(s, "http", 4) || *s == '#') continue;
      size_t l = strcspn(s, ")#");
      char path[300];
      if (l >= 200) continue;
      snprintf(path, sizeof path, "%s%.*s", i ? "docs/" : "", (int)l, s);
      struct stat st;
      links++;
      if (stat(path, &st) && nm < sizeof missing - 300) nm += (size_t)snprintf(missing + nm, sizeof missing - nm, " %s: %s;", files[i], path);
    }
    free(t);
  }
  CHECK_MSG(!missing[0], "links to files that do not exist:%s", missing);
  CHECK(links > 20);
}

TEST(readme_is_under_300_lines) {
  char *t = test_read_file("README.md");
  CHECK(t);
  int lines = 0;
  for (char *p = t; *p; p++) lines += *p == '\n';
  free(t);
  CHECK_MSG(lines < 300, "README.md has %d lines: a user reads it top-down; move reference and evidence to docs/", lines);
}

/* README's command list names every command the binary has */
TEST(readme_lists_every_command) {
  char *t = test_read_file("README.md");
  CHECK(t);
  for (int i = 0; cli_commands[i]; i++) {
    char want[64];
    snprintf(want, sizeof want, "  fragbench %s ", cli_commands[i]->name);
    CHECK_MSG(strstr(t, want) != NULL, "README.md's command list lacks `fragbench %s`", cli_commands[i]->name);
  }
  free(t);
}

/* The code of a markdown text: fenced blocks, 4-space indented blocks and `inline` spans,
 * each logical line (a shell line continued by a trailing backslash joined) ending in '\n'. */
static char *code_of(const char *t) {
  size_t n = strlen(t), k = 0;
  char *c = malloc(2 * n + 2);
  if (!c) return NULL;
  int fence = 0;
  for (const char *line = t; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (!strncmp(line, "```", 3)) fence = !fence;
    else if (fence || !strncmp(line, "    ", 4)) {
      memcpy(c + k, line, len);
      k += len;
      if (len && line[len - 1] == '\\') c[k - 1] = ' ';   /* joined with the next line */
      else c[k++] = '\n';
    } else {
      for (size_t i = 0; i < len; i++) {
        if (line[i] != '`') continue;
        size_t j = i + 1;
        while (j < len && line[j] != '`') j++;
        if (j >= len) break;
        memcpy(c + k, line + i + 1, j - i - 1);
        k += j - i - 1;
        c[k++] = '\n';
        i = j;
      }
    }
    line = end ? end + 1 : line + len;
  }
  c[k] = 0;
  return c;
}

static const struct cmd_def *command_named(const char *w, size_t l) {
  for (int i = 0; cli_commands[i]; i++)
    if (strlen(cli_commands[i]->name) == l && !strncmp(cli_commands[i]->name, w, l)) return cli_commands[i];
  return NULL;
}

static int takes_flag(const struct cmd_def *c, const char *f, size_t l) {
  if (l == 6 && !strncmp(f, "--help", 6)) return 1;
  for (const char *const *n = c->flags; *n; n++)
    if (strlen(*n) == l && !strncmp(*n, f, l)) return 1;
  return 0;
}

/* one code line: each `fragbench WORD` (WORD a lower-case word) is a command, and each
 * --flag after it, up to the end of that shell command (| ; && # ) or another fragbench),
 * is one it takes. Words in capitals (COMMAND, CMD) are placeholders. */
static void check_commands(const char *file, const char *code, char *bad, size_t cap, size_t *nb, int *seen) {
  for (const char *p = strstr(code, "fragbench "); p; p = strstr(p + 1, "fragbench ")) {
    if (p > code && !(p[-1] == ' ' || p[-1] == '/' || p[-1] == '\n' || p[-1] == '(' || p[-1] == '$')) continue;
    if (p - code >= 2 && p[-2] == '#') continue;   /* a comment line: the old CSV's "# fragbench results v1" */
    const char *w = p + 10;
    while (*w == ' ') w++;
    size_t l = 0;
    while (islower((unsigned char)w[l])) l++;
    if (!l || (w[l] && !isspace((unsigned char)w[l]))) continue;   /* --help, COMMAND, "fragbench's" */
    const struct cmd_def *c = command_named(w, l);
    if (!c) {
      if (*nb < cap - 200) *nb += (size_t)snprintf(bad + *nb, cap - *nb, " %s: `fragbench %.*s` is no command;", file, (int)l, w);
      continue;
    }
    (*seen)++;
    for (const char *q = w + l; *q && *q != '\n' && *q != '|' && *q != ';' && *q != '#' && *q != ')' && strncmp(q, "&&", 2) &&
                                strncmp(q, "fragbench ", 10);
         q++) {
      if (q[0] != '-' || q[1] != '-' || (q > w && !isspace((unsigned char)q[-1]) && q[-1] != '[' && q[-1] != '(')) continue;
      size_t fl = 2;
      while (isalnum((unsigned char)q[fl]) || q[fl] == '-') fl++;
      if (fl > 2 && !takes_flag(c, q, fl) && *nb < cap - 200)
        *nb += (size_t)snprintf(bad + *nb, cap - *nb, " %s: `fragbench %s` takes no %.*s;", file, c->name, (int)fl, q);
      q += fl - 1;
    }
  }
}

/* `make X`: X (after VAR=value and -flags; -C takes a folder) is a target of the Makefile;
 * `make test T=NAME`: NAME is part of some test's name (tests: every "TEST(name" of the
 * test sources, NULL = not checked) */
static void check_make(const char *file, const char *code, const char *makefile, const char *tests, char *bad, size_t cap,
                       size_t *nb, int *seen) {
  for (const char *p = strstr(code, "make "); p; p = strstr(p + 1, "make ")) {
    if (p > code && !(p[-1] == ' ' || p[-1] == '\n' || p[-1] == '(' || p[-1] == '$')) continue;
    const char *w = p + 5;
    char tname[80] = "";
    for (;;) {
      while (*w == ' ') w++;
      size_t l = strcspn(w, " \n");
      if (!strncmp(w, "-C", 2) && l == 2) { w += 2; while (*w == ' ') w++; w += strcspn(w, " \n"); continue; }
      if (!strncmp(w, "T=", 2) && l > 2 && l < sizeof tname + 2) snprintf(tname, sizeof tname, "%.*s", (int)(l - 2), w + 2);
      if (*w == '-' || memchr(w, '=', l)) { w += l; continue; }
      break;
    }
    const char *eol = strchr(w, '\n'), *tv = strstr(w, " T=");
    if (tv && (!eol || tv < eol)) {
      size_t l = strcspn(tv + 3, " \n");
      if (l < sizeof tname) snprintf(tname, sizeof tname, "%.*s", (int)l, tv + 3);
    }
    if (tests && tname[0] && strspn(tname, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(tname)) {
      int found = 0;
      for (const char *t = strstr(tests, "TEST("); t && !found; t = strstr(t + 1, "TEST(")) {
        size_t n = strcspn(t + 5, ")");
        char name[200];
        snprintf(name, sizeof name, "%.*s", (int)(n < 199 ? n : 199), t + 5);
        found = strstr(name, tname) != NULL;
      }
      if (!found && *nb < cap - 200) *nb += (size_t)snprintf(bad + *nb, cap - *nb, " %s: `make test T=%s` runs no test;", file, tname);
    }
    size_t l = 0;
    while (islower((unsigned char)w[l]) || w[l] == '-') l++;
    if (!l || (w[l] && !isspace((unsigned char)w[l]))) continue;   /* a path (build/fragbench), a placeholder */
    char want[80];
    snprintf(want, sizeof want, "\n%.*s:", (int)l, w);
    (*seen)++;
    if (!strstr(makefile, want) && *nb < cap - 200)
      *nb += (size_t)snprintf(bad + *nb, cap - *nb, " %s: `make %.*s` is no target;", file, (int)l, w);
  }
}

/* every tests/test_*.c, one string */
static char *test_sources(void) {
  DIR *d = opendir("tests");
  if (!d) return NULL;
  size_t n = 0, cap = 1 << 16;
  char *all = malloc(cap);
  struct dirent *e;
  while (all && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (strncmp(e->d_name, "test_", 5) || l < 3 || strcmp(e->d_name + l - 2, ".c")) continue;
    char path[300];
    snprintf(path, sizeof path, "tests/%s", e->d_name);
    char *t = test_read_file(path);
    if (!t) continue;
    size_t tl = strlen(t);
    while (n + tl + 2 > cap) {
      char *g = realloc(all, cap *= 2);
      if (!g) { free(all); all = NULL; break; }
      all = g;
    }
    if (all) { memcpy(all + n, t, tl); n += tl; all[n++] = '\n'; }
    free(t);
  }
  closedir(d);
  if (all) all[n] = 0;
  return all;
}

TEST(readme_and_docs_name_commands_flags_and_targets_that_exist) {
  char files[64][128], bad[8192] = "";
  size_t nb = 0;
  int n = doc_files(files, 64), commands = 0, targets = 0;
  char *mk = test_read_file("Makefile"), *tests = test_sources();
  CHECK(mk && tests);
  for (int i = 0; i < n; i++) {
    if (!strcmp(files[i], "docs/reference.md")) continue;   /* the binary's own --help (checked below) */
    char *t = test_read_file(files[i]), *code = t ? code_of(t) : NULL;
    CHECK(code);
    check_commands(files[i], code, bad, sizeof bad, &nb, &commands);
    check_make(files[i], code, mk, tests, bad, sizeof bad, &nb, &targets);
    free(code);
    free(t);
  }
  free(mk);
  free(tests);
  CHECK_MSG(!bad[0], "README or docs name what does not exist:%s", bad);
  CHECK(commands > 50);
  CHECK(targets > 10);
}

/* the checker itself: a flag a command does not take, an unknown command, a missing target */
TEST(readme_command_check_catches_what_does_not_exist) {
  char bad[1024] = "";
  size_t nb = 0;
  int seen = 0;
  char *code = code_of("```\nbuild/fragbench fit --workload W --vary batch --limit 1G \\\n  --budget 2G\n```\n"
                       "`fragbench frobnicate` and `make bench` and `make nosuch`\n"
                       "`make test T=best_fit` and `make test T=pools_gone`\n");
  CHECK(code);
  check_commands("x.md", code, bad, sizeof bad, &nb, &seen);
  check_make("x.md", code, "\nbench: x\ntest: y\n", "TEST(caching_best_fit) TEST(bfc_x)", bad, sizeof bad, &nb, &seen);
  free(code);
  CHECK_CONTAINS(bad, "`fragbench fit` takes no --budget");
  CHECK(!strstr(bad, "--vary"));
  CHECK_CONTAINS(bad, "`fragbench frobnicate` is no command");
  CHECK_CONTAINS(bad, "`make nosuch` is no target");
  CHECK(!strstr(bad, "make bench"));
  CHECK_CONTAINS(bad, "`make test T=pools_gone` runs no test");
  CHECK(!strstr(bad, "best_fit"));
}

/* docs/reference.md is generated: rerunning the generator on this binary changes nothing */
TEST(docs_reference_is_what_the_binary_prints) {
  char out[600], cmd[1400];
  snprintf(out, sizeof out, "%s/reference.md", test_tmpdir());
  snprintf(cmd, sizeof cmd, "sh scripts/gen_reference.sh build/fragbench '%s' 2>&1", out);
  CHECK_MSG(system(cmd) == 0, "scripts/gen_reference.sh failed (make builds build/fragbench)");
  char *want = test_read_file(out), *have = test_read_file("docs/reference.md");
  CHECK(want && have);
  int same = !strcmp(want, have);
  for (int i = 0; cli_commands[i]; i++) {
    char h[64];
    snprintf(h, sizeof h, "\n## fragbench %s\n", cli_commands[i]->name);
    CHECK_MSG(strstr(want, h) != NULL, "the generator left out `fragbench %s`", cli_commands[i]->name);
  }
  free(want);
  free(have);
  CHECK_MSG(same, "docs/reference.md is out of date with build/fragbench's --help: run `sh scripts/gen_reference.sh`");
}

/* the sources' pointers into the documentation: `README..."Section"` names a README heading,
 * `docs/X.md` a file */
TEST(sources_point_into_readme_and_docs_where_something_is) {
  static const char *const dirs[] = {"harness/cli", "harness/engine", "harness/report", "harness/device", "harness/common",
                                     "allocators", "workloads", "scripts", "plots", "tests/validate", NULL};
  char *readme = test_read_file("README.md"), bad[4096] = "";
  size_t nb = 0;
  CHECK(readme);
  for (int d = 0; dirs[d]; d++) {
    DIR *dir = opendir(dirs[d]);
    if (!dir) continue;
    struct dirent *e;
    while ((e = readdir(dir))) {
      if (e->d_name[0] == '.') continue;
      char path[600];
      snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
      struct stat st;
      if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > 2000000) continue;
      char *t = test_read_file(path);
      if (!t) continue;
      for (char *p = strstr(t, "README"); p; p = strstr(p + 1, "README")) {
        char *q = p + 6;
        if (!strncmp(q, ".md", 3)) q += 3;
        while (*q == ',' || *q == ' ' || *q == '\'' ) q++;
        if (*q == '\\') q++;
        if (*q != '"') continue;
        q++;
        size_t l = strcspn(q, "\"\\\n");
        char head[200];
        snprintf(head, sizeof head, "## %.*s", (int)(l < 150 ? l : 150), q);
        if (!strstr(readme, head) && nb < sizeof bad - 300)
          nb += (size_t)snprintf(bad + nb, sizeof bad - nb, " %s: README \"%.*s\";", path, (int)(l < 150 ? l : 150), q);
      }
      for (char *p = strstr(t, "docs/"); p; p = strstr(p + 1, "docs/")) {
        size_t l = 5;
        while (isalnum((unsigned char)p[l]) || p[l] == '_' || p[l] == '-' || p[l] == '.') l++;
        while (l > 5 && p[l - 1] == '.') l--;
        if (l <= 5 || l > 100 || strncmp(p + l - 3, ".md", 3)) continue;
        char f[128];
        snprintf(f, sizeof f, "%.*s", (int)l, p);
        if (stat(f, &st) && nb < sizeof bad - 300) nb += (size_t)snprintf(bad + nb, sizeof bad - nb, " %s: %s;", path, f);
      }
      free(t);
    }
    closedir(dir);
  }
  free(readme);
  CHECK_MSG(!bad[0], "sources point at documentation that is not there:%s", bad);
}
