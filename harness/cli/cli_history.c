/* cli_history.c - `fragbench history DIR|CSV...`: peak reserved (and mincap) per workload
 * and strategy over many bench runs, ordered by commit (harness/report/history.h): one
 * markdown table per workload on stdout (or --out), one picture per workload with --plot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "options.h"
#include "outfile.h"
#include "history.h"
#include "history_out.h"

/* the flags it takes (flags.def) */
static const char *const history_opts[] = {
  "--out", "--plot", "--quiet",
  NULL,
};
static const struct arg_def history_args[] = {
  {"DIR|CSV", 1, "bench folders (results/bench-<stamp>/: runs.csv, mincap.csv, env.txt) or results CSVs"},
  {NULL, 0, NULL},
};

const struct cmd_def cmd_history_def = {
  "history", "DIR|CSV... [--out FILE.md] [--plot DIR]   peak reserved per workload and strategy over many runs",
  "How memory moved over bench runs (`make bench` folders, or results CSVs): the runs\n"
  "ordered by the commit date in their env.txt (commit_date), else its date, else as given;\n"
  "per workload a markdown table of each strategy's peak reserved (uncapped row; \"died:\"\n"
  "when it did not complete) with its mincap where mincap.csv has one, the largest step in\n"
  "bold and one sentence naming the strategy, the change and the commit where it happened\n"
  "(between consecutive runs where that strategy completed; ties: the earliest run, then\n"
  "the first strategy), and strategies that died after completing in the run before.\n",
  history_opts, cmd_history,
  "Exit status: 0 written; 2 bad usage, no input, a folder without runs.csv or a malformed\n"
  "CSV (the message names the file and line); 1 a file that cannot be written.\n",
  .args = history_args,
};

/* the pictures' folder as the markdown must name it: relative to the markdown's folder
 * when inside it, else as given */
static void link_prefix(const char *out, const char *plot, char *buf, size_t n) {
  const char *slash = out ? strrchr(out, '/') : NULL;
  size_t d = slash ? (size_t)(slash - out) : 0;
  if (slash && !strncmp(plot, out, d) && plot[d] == '/') plot += d + 1;
  size_t k = strlen(plot);
  snprintf(buf, n, "%s%s", plot, k && plot[k - 1] == '/' ? "" : "/");
}

int cmd_history(struct cli_opts *o) {
  if (o->nargs < 1) {
    fprintf(stderr, "fragbench history: give one or more bench folders or results CSVs\n(see fragbench history --help)\n");
    return 2;
  }
  /* its inputs against --out and --plot: checked once, in cli_check_files (options.c) */
  struct history h;
  memset(&h, 0, sizeof h);
  char err[FB_ERRLEN];
  for (int i = 0; i < o->nargs; i++)
    if (history_add(&h, o->args[i], err, sizeof err)) {
      fprintf(stderr, "fragbench history: %s\n", err);
      history_free(&h);
      return 2;
    }
  history_finish(&h);
  if (!h.nw) {
    fprintf(stderr, "fragbench history: no rows in %s%s\n", o->args[0], o->nargs > 1 ? " and the others" : "");
    history_free(&h);
    return 2;
  }
  int rc = 0, drawn = 0;
  if (o->plot) {
    if (mkdir(o->plot, 0777) && errno != EEXIST) {
      fprintf(stderr, "fragbench history: --plot %s: %s\n", o->plot, strerror(errno));
      history_free(&h);
      return 1;
    }
    if (history_plots(&h, o->plot, "png", &drawn)) rc = 1;
  }
  char prefix[1100];
  if (o->plot) link_prefix(o->out, o->plot, prefix, sizeof prefix);
  FILE *f = stdout;
  struct outfile of = {0};
  if (o->out && strcmp(o->out, "-") && !(f = outfile_open(&of, o->out, "--out"))) { history_free(&h); return 1; }
  history_markdown(&h, f, o->plot && drawn ? prefix : NULL);
  if (f != stdout) {
    if (outfile_finish(&of, 1)) rc = 1;
  } else if (fflush(stdout) || ferror(stdout)) {
    fprintf(stderr, "fragbench history: cannot write stdout\n");
    rc = 1;
  }
  if (!o->quiet) {
    char line[256];
    history_order_sentence(&h, line, sizeof line);
    fprintf(stderr, "fragbench history: %s; %d workloads, %d strategies%s%s%s\n", line, h.nw, h.ns,
            o->plot ? "; pictures in " : "", o->plot ? o->plot : "", o->out && f != stdout ? "" : "");
  }
  history_free(&h);
  return rc;
}
