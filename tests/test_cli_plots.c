/* test_cli_plots.c - a picture fragbench draws with gnuplot outside a run folder (explain
 * --plot, fit --plot) appears whole or not at all: a gnuplot that fails half-way, one that
 * is missing, an explain that fails, an interrupted gnuplot all leave an existing picture
 * (and its data and script) byte for byte as they were, with no temporary left beside it.
 * A stand-in gnuplot (a shell script first on PATH) writes part of the picture to the file
 * it was told to write (out="..." of -e, or the script's `set output`), then fails or has
 * fragbench interrupted. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "test.h"

static char outp[512], errp[512], dir[512];
static const char *snap = "tests/variants/oom_fragmented.pickle";
static const char *old_picture = "an existing picture, not to be touched\n";

static void paths(const char *sub) {
  snprintf(outp, sizeof outp, "%s/plot_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/plot_err.txt", test_tmpdir());
  snprintf(dir, sizeof dir, "%s/%s", test_tmpdir(), sub);
  mkdir(dir, 0777);
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) { fputs(text, f); fclose(f); }
}

/* a gnuplot that writes "partial" into its output, then runs `then` (exit 1; or SIGINT
 * to fragbench); in DIR/bin */
static void fake_gnuplot(const char *then) {
  char bin[600], path[700];
  snprintf(bin, sizeof bin, "%s/bin", dir);
  mkdir(bin, 0777);
  snprintf(path, sizeof path, "%s/gnuplot", bin);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs("#!/bin/sh\nPATH=/usr/bin:/bin\n"
        "out=$(printf '%s\\n' \"$@\" | sed -n \"s/.*out=[\\\"']\\([^\\\"']*\\)[\\\"'].*/\\1/p\" | head -n 1)\n"
        "for a; do [ -z \"$out\" ] && [ -f \"$a\" ] && out=$(sed -n 's/^set output \"\\(.*\\)\"$/\\1/p' \"$a\"); done\n"
        "printf partial > \"$out\"\n", f);
  fprintf(f, "%s\n", then);
  fclose(f);
  chmod(path, 0755);
}

/* run fragbench with PATH = DIR/bin (or an empty folder): the stand-in or no gnuplot */
static int with_path(const char *bin, const char *a0, const char *a1, const char *a2, const char *a3, const char *a4,
                     const char *a5, const char *a6, const char *a7, const char *a8, const char *a9) {
  const char *old = getenv("PATH");
  char *keep = old ? strdup(old) : NULL;
  setenv("PATH", bin, 1);
  int rc = test_cli(outp, errp, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, NULL);
  if (keep) { setenv("PATH", keep, 1); free(keep); }
  return rc;
}

/* a temporary left in dir (its name in why): 1 */
static int litter(char *why, size_t len) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int found = 0;
  while (d && !found && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp-")) { snprintf(why, len, "a temporary left: %.100s", e->d_name); found = 1; }
  if (d) closedir(d);
  return found;
}

/* every named file in dir holds old_picture, and no temporary is left */
static int untouched(const char *const *names, int n, char *why, size_t len) {
  for (int i = 0; i < n; i++) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    char *t = test_read_file(p);
    int same = t && !strcmp(t, old_picture);
    free(t);
    if (!same) { snprintf(why, len, "%s changed", names[i]); return 0; }
  }
  return !litter(why, len);
}

static void seed(const char *const *names, int n) {
  for (int i = 0; i < n; i++) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    put(p, old_picture);
  }
}

TEST(plots_explain_failed_gnuplot_leaves_an_existing_picture_as_it_was) {
  paths("plot_fail");
  const char *names[] = {"x.png", "x.dat", "x.gp"};
  seed(names, 3);
  fake_gnuplot("exit 1");
  char pic[700], bin[700], why[200];
  snprintf(pic, sizeof pic, "%s/x.png", dir);
  snprintf(bin, sizeof bin, "%s/bin", dir);
  int rc = with_path(bin, "explain", "--trace", snap, "--plot", pic, NULL, NULL, NULL, NULL, NULL);
  CHECK_MSG(untouched(names, 3, why, sizeof why), "%s", why);
  CHECK_EQ(rc, 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "gnuplot failed (exit 1)");
  CHECK_CONTAINS(e, "any existing one is as it was");
  free(e);
}

TEST(plots_explain_interrupted_gnuplot_leaves_an_existing_picture_as_it_was) {
  struct sigaction sa;
  if (!sigaction(SIGINT, NULL, &sa) && sa.sa_handler == SIG_IGN) SKIP("SIGINT is ignored here (a background job)");
  paths("plot_int");
  const char *names[] = {"x.svg", "x.dat", "x.gp"};
  seed(names, 3);
  fake_gnuplot("kill -INT $PPID; sleep 1; exit 0");
  char pic[700], bin[700], why[200];
  snprintf(pic, sizeof pic, "%s/x.svg", dir);
  snprintf(bin, sizeof bin, "%s/bin", dir);
  int rc = with_path(bin, "explain", "--trace", snap, "--plot", pic, NULL, NULL, NULL, NULL, NULL);
  CHECK_MSG(untouched(names, 3, why, sizeof why), "%s", why);
  CHECK_EQ(rc, 128 + 2);   /* killed by the SIGINT, after removing its temporaries */
}

TEST(plots_explain_without_gnuplot_or_with_a_bad_trace_leaves_the_picture_as_it_was) {
  paths("plot_none");
  const char *names[] = {"x.png"};
  seed(names, 1);
  char pic[700], empty[700], why[200];
  snprintf(pic, sizeof pic, "%s/x.png", dir);
  snprintf(empty, sizeof empty, "%s/empty", dir);
  mkdir(empty, 0777);
  CHECK_EQ(with_path(empty, "explain", "--trace", snap, "--plot", pic, NULL, NULL, NULL, NULL, NULL), 0);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "gnuplot is not installed: no picture");
  free(e);
  CHECK_MSG(untouched(names, 1, why, sizeof why), "%s", why);
  char dat[700];   /* the data and script are kept, to draw it later */
  snprintf(dat, sizeof dat, "%s/x.gp", dir);
  char *gp = test_read_file(dat);
  CHECK(gp != NULL);
  CHECK_CONTAINS(gp, "set output out");
  free(gp);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", "tests/data/no_such.pickle", "--plot", pic, NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, "--at", "999999", "--plot", pic, NULL), 2);
  CHECK_MSG(untouched(names, 1, why, sizeof why), "%s", why);
}

TEST(plots_explain_picture_replaced_whole_when_gnuplot_succeeds) {
  if (system("command -v gnuplot >/dev/null 2>&1")) SKIP("gnuplot not installed");
  paths("plot_ok");
  const char *names[] = {"x.png"};
  seed(names, 1);
  char pic[700], why[200];
  snprintf(pic, sizeof pic, "%s/x.png", dir);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, "--plot", pic, NULL), 0);
  char *t = test_read_file(pic);
  CHECK(t != NULL && !strncmp(t, "\x89PNG", 4));
  free(t);
  CHECK_MSG(!litter(why, sizeof why), "%s", why);
}

TEST(plots_fit_failed_gnuplot_leaves_an_existing_picture_and_data_as_they_were) {
  paths("plot_fit");
  const char *names[] = {"f.png", "f.png.dat", "f.png.meta.gp"};
  seed(names, 3);
  fake_gnuplot("exit 1");
  char pic[700], bin[700], why[200];
  snprintf(pic, sizeof pic, "%s/f.png", dir);
  snprintf(bin, sizeof bin, "%s/bin", dir);
  int rc = with_path(bin, "fit", "--workload", "train_loop", "--vary", "batch", "--limit", "2Gi", "--quiet", "--plot", pic);
  CHECK_MSG(untouched(names, 3, why, sizeof why), "%s", why);
  CHECK_EQ(rc, 1);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "gnuplot failed (exit 1)");
  free(e);
}
