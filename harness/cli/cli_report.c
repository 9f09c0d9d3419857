/* cli_report.c - `fragbench report DIR`: report.md, report.html and the gnuplot data of
 * one bench run folder (harness/report/). Its flag list (report_opts) and positional
 * argument DIR (report_args) are read by options.c, as every subcommand's. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "options.h"
#include "plot_data.h"
#include "outfile.h"
#include "report.h"
#include "html_plots.h"
#include "html_report.h"

/* the flags it takes (flags.def) */
static const char *const report_opts[] = {
  "--format", "--quiet",
  NULL,
};
static const struct arg_def report_args[] = {
  {"DIR", 0, "the run folder (`make bench` writes results/bench-<stamp>/)"},
  {NULL, 0, NULL},
};

const struct cmd_def cmd_report_def = {
  "report", "DIR [--format png|svg]   report.md and the plot data of a bench run folder",
  "Reads a folder of results CSVs (a `make bench` run: runs.csv, and when present\n"
  "mincap.csv, capsweep.csv, timeline-*.csv, env.txt, advise-*.csv; in a folder without\n"
  "runs.csv, every other results CSV there stands for it) and writes\n"
  "  DIR/report.html        the same as one self-contained page: every plot drawn inline\n"
  "                         (hover a mark for its figure), a switch per strategy to hide it\n"
  "  DIR/report.md          the environment, where the figures came from, a summary, memory\n"
  "                         against driver time, per workload a table (best in bold) and notes\n"
  "                         (what PyTorch itself reserved, an inferred limit, advise's\n"
  "                         recommendation), with the pictures found in DIR/plots/ embedded\n"
  "  DIR/plots/data/        the gnuplot data of every plot, and plots.txt: the plots to draw\n"
  "                         (plots/plots.sh draws them with plots/*.gp; `make plots`)\n",
  report_opts, cmd_report,
  "Exit status: 0 written; 2 bad usage, no results CSV or a malformed one (the message\n"
  "names the file and line); 1 a file that cannot be written.\n",
  .args = report_args,
};

static int mkdir_p(const char *path) {
  if (mkdir(path, 0777) && errno != EEXIST) return -1;
  return 0;
}

/* the data of an earlier report: gone, so that a plot whose input went away is not drawn */
static void clear_data(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if ((n > 4 && !strcmp(e->d_name + n - 4, ".dat")) || (n > 8 && !strcmp(e->d_name + n - 8, ".meta.gp"))) {
      char p[1500];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  }
  closedir(d);
}

/* report.html beside report.md, from its text (html_report.h): 0, or 1 with a message */
static int write_html(const struct run_folder *f, const char *dir, const char *title, const char *md) {
  char path[1100];
  snprintf(path, sizeof path, "%s/report.html", dir);
  char *text = html_slurp(md, NULL);
  if (!text) { fprintf(stderr, "fragbench report: %s: cannot read it back for report.html\n", md); return 1; }
  struct outfile of;
  FILE *out = outfile_open(&of, path, "report.html");
  if (!out) { free(text); return 1; }
  html_report_write(out, f, dir, title, text);
  free(text);
  if (ferror(out)) { outfile_abort(&of); fprintf(stderr, "fragbench report: %s: cannot write\n", path); return 1; }
  return outfile_finish(&of, 1) ? 1 : 0;
}

int cmd_report(struct cli_opts *o) {
  const char *dir = o->args[0], *fmt = o->format;
  int quiet = o->quiet;
  char d[1024];
  snprintf(d, sizeof d, "%s", dir);
  while (strlen(d) > 1 && d[strlen(d) - 1] == '/') d[strlen(d) - 1] = 0;
  struct run_folder f;
  char err[1024];
  if (run_folder_load(&f, d, err, sizeof err)) { fprintf(stderr, "fragbench report: %s\n", err); return 2; }
  char plots[1100], data[1200], md[1100];
  snprintf(plots, sizeof plots, "%s/plots", d);
  snprintf(data, sizeof data, "%s/data", plots);
  if (mkdir_p(plots) || mkdir_p(data)) {
    fprintf(stderr, "fragbench report: %s: cannot create: %s\n", data, strerror(errno));
    run_folder_free(&f);
    return 1;
  }
  clear_data(data);
  int rc = plot_data_write(&f, data, err, sizeof err);
  if (rc) {
    fprintf(stderr, "fragbench report: %s\n", err);
    run_folder_free(&f);
    return strstr(err, "cannot write") ? 1 : 2;
  }
  struct report_images im;
  report_images_scan(&im, d);
  snprintf(md, sizeof md, "%s/report.md", d);
  /* written beside and renamed into place (outfile.h): an interrupted report leaves the
   * old report.md as it was */
  struct outfile of;
  FILE *out = outfile_open(&of, md, "report.md");
  if (!out) {
    report_images_free(&im);
    run_folder_free(&f);
    return 1;
  }
  const char *title = strrchr(d, '/') ? strrchr(d, '/') + 1 : d;
  report_write_md(&f, out, title, fmt, &im);
  if (outfile_finish(&of, 1) || write_html(&f, d, title, md)) {
    rc = 1;
  } else if (!quiet) {
    char fmtdot[8];
    snprintf(fmtdot, sizeof fmtdot, ".%s", fmt);
    int pics = 0;
    for (int i = 0; i < im.n; i++) pics += strlen(im.name[i]) > 4 && !strcmp(im.name[i] + strlen(im.name[i]) - strlen(fmtdot), fmtdot);
    fprintf(stderr, "report: %s and report.html (%d picture%s found in %s), plot data in %s\n", md, pics, pics == 1 ? "" : "s", plots, data);
    char verdict[2048];
    report_verdict(&f, verdict, sizeof verdict);   /* report.md's first line, where the person who ran it reads it */
    fprintf(stderr, "report: %s\n", verdict);
  }
  report_images_free(&im);
  run_folder_free(&f);
  return rc;
}
