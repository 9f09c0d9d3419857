/* gnuplot_run.c - see gnuplot_run.h: gnuplot run without a shell on temporaries beside
 * the targets, which are renamed into place only on success. */
#include "gnuplot_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *gnuplot_name(struct outfile *o) {
  const char *n = outfile_name(o);
  return n ? n : "";   /* unnamable (said on stderr): gnuplot fails on "", and nothing is kept */
}

int gnuplot_scripts_dir(const char *script, char *dir, size_t n) {
  const char *env = getenv("FB_PLOTS_DIR");
  char path[4200];
  if (env && *env) {
    snprintf(dir, n, "%s", env);
    snprintf(path, sizeof path, "%s/%s", dir, script);
    return access(path, R_OK) ? -1 : 0;
  }
  char exe[4096];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k > 0) {
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;   /* the binary's folder: build/ */
    const char *up[] = {"/../plots", "/plots"};
    for (int i = 0; i < 2; i++) {
      snprintf(dir, n, "%s%s", exe, up[i]);
      snprintf(path, sizeof path, "%s/%s", dir, script);
      if (!access(path, R_OK)) return 0;
    }
  }
  snprintf(dir, n, "plots");
  snprintf(path, sizeof path, "%s/%s", dir, script);
  return access(path, R_OK) ? -1 : 0;
}

/* name="value" with gnuplot's double-quote escapes; -1 when it does not fit */
static int assign(char *buf, size_t len, size_t *k, const char *name, const char *value) {
  int w = snprintf(buf + *k, len - *k, "%s%s=\"", *k ? "; " : "", name);
  if (w < 0 || (size_t)w >= len - *k) return -1;
  *k += (size_t)w;
  for (const char *p = value; *p; p++) {
    if (*k + 3 >= len) return -1;
    if (*p == '"' || *p == '\\') buf[(*k)++] = '\\';
    buf[(*k)++] = *p;
  }
  if (*k + 2 >= len) return -1;
  buf[(*k)++] = '"';
  buf[*k] = 0;
  return 0;
}

int gnuplot_run(const char *script, const char *const *names, const char *const *values, int n, char *err, size_t errlen) {
  char vars[24576];   /* five file names of up to PATH_MAX each, quoted */
  size_t k = 0;
  vars[0] = 0;
  for (int i = 0; i < n; i++)
    if (assign(vars, sizeof vars, &k, names[i], values[i])) {
      snprintf(err, errlen, "the plot's file names are too long for gnuplot's command line");
      return 2;
    }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) { snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno)); return 2; }
  if (pid == 0) {
    char *argv[] = {(char *)"gnuplot", (char *)"-e", vars, (char *)script, NULL};
    execvp("gnuplot", argv);
    _exit(127);   /* not on PATH */
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) { snprintf(err, errlen, "gnuplot: %s", strerror(errno)); return 2; }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    snprintf(err, errlen, "gnuplot is not installed (not on PATH)");
    return 1;
  }
  if (WIFSIGNALED(st)) snprintf(err, errlen, "gnuplot was killed (signal %d)", WTERMSIG(st));
  else snprintf(err, errlen, "gnuplot failed (exit %d)", WEXITSTATUS(st));
  return 2;
}

int gnuplot_finish(struct outfile *const *files, int n, int keep) {
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (!files[i]) continue;
    if (!keep || rc) outfile_finish(files[i], 0);   /* one failed: the rest (the picture last) stay as they were */
    else if (outfile_finish(files[i], 1)) rc = -1;
  }
  return rc;
}

int gnuplot_draw(const char *script, const char *gpdir, const char *fmt, const char *picture, struct outfile *od,
                 struct outfile *om, struct outfile *op, char *err, size_t errlen) {
  if (!outfile_open(op, picture, "the picture")) {
    outfile_abort(od);
    outfile_abort(om);
    return 2;
  }
  const char *names[] = {"fmt", "out", "dat", "meta", "gpdir"};
  const char *values[] = {fmt, gnuplot_name(op), gnuplot_name(od), gnuplot_name(om), gpdir};
  int rc = gnuplot_run(script, names, values, 5, err, errlen);
  struct outfile *data[] = {od, om}, *all[] = {od, om, op};
  if (rc == 1) {                                    /* no gnuplot: the data is kept, to draw it later */
    outfile_abort(op);
    return gnuplot_finish(data, 2, 1) ? 2 : 1;
  }
  if (rc) {
    gnuplot_finish(all, 3, 0);
    return 3;
  }
  return gnuplot_finish(all, 3, 1) ? 2 : 0;
}
