/* cli_files.c - every file a command reads and every file it writes, from its options,
 * checked against each other in ONE place, before anything is read or written
 * (options.c calls cli_check_files once the flags are parsed, before a pipe is staged):
 *   - each name is one the system takes (PATH_MAX, NAME_MAX; outfile.h), never cut;
 *   - no output is an input (traces, the OOM message, compare's CSVs and tolerance file):
 *     same file by device and inode, through links, or the same place not there yet;
 *   - no two outputs are the same file (`--out f.csv --timeline ./f.csv`), their
 *     companions included (--plot's .dat and script beside it);
 *   - "-" is standard output for every output flag, and only one thing goes there;
 *   - an input that can be read once (stdin, a pipe, a fifo) is given once;
 *   - every output can be written (its directory there and writable, a read-only file
 *     refused) - said now, not after the work.
 * The companions' names come from the functions that write them (fit_plot_paths,
 * explain_plot_paths), so this list cannot drift from what is written. */
#include "cli.h"
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "explain_plot.h"
#include "gnuplot_run.h"

#define NFILES (CLI_MAX + 8)
struct named { const char *flag, *path; };

static int refuse(const struct cli_opts *o, const char *what) {
  fprintf(stderr, "fragbench %s: %s\n", o->cmd, what);
  return 2;
}

/* standard input under another name: /dev/stdin, /proc/self/fd/0 when it is a pipe */
static int is_stdin(const char *p) {
  if (!strcmp(p, "-")) return 1;
  struct stat a, b;
  return !fstat(0, &b) && !S_ISREG(b.st_mode) && !stat(p, &a) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* read once: stdin, a pipe, a fifo, a device */
static int read_once(const char *p) {
  struct stat st;
  return is_stdin(p) || (!stat(p, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

/* what goes to standard output without a flag: the command's own text or CSV */
static const char *stdout_default(const struct cli_opts *o) {
  if (!strcmp(o->cmd, "run") || !strcmp(o->cmd, "mincap") || !strcmp(o->cmd, "fit")) return o->out ? NULL : "the CSV";
  if (!strcmp(o->cmd, "explain")) return "the explanation";
  if (!strcmp(o->cmd, "perf")) return "the performance report";
  return NULL;
}

int cli_check_files(const struct cli_opts *o) {
  struct named in[NFILES], out[NFILES];
  int nin = 0, nout = 0;
  for (int i = 0; i < o->ntraces; i++) in[nin++] = (struct named){"--trace", o->traces[i]};
  if (o->oom_message) in[nin++] = (struct named){"--oom-message", o->oom_message};
  if (o->tolerance) in[nin++] = (struct named){"--tolerance", o->tolerance};
  if (o->found) in[nin++] = (struct named){"--found", o->found};
  if (o->uncapped) in[nin++] = (struct named){"--uncapped", o->uncapped};
  if (o->known) in[nin++] = (struct named){"--known", o->known};
  static char script[OUTFILE_PATH_MAX + 16];   /* fit --plot reads plots/fit.gp */
  if (o->plot && !strcmp(o->cmd, "fit")) {
    char dir[OUTFILE_PATH_MAX];
    if (!gnuplot_scripts_dir("fit.gp", dir, sizeof dir)) {
      snprintf(script, sizeof script, "%s/fit.gp", dir);
      in[nin++] = (struct named){"fit's gnuplot script", script};
    }
  }
  if (!strcmp(o->cmd, "compare") || !strcmp(o->cmd, "readspeed") || !strcmp(o->cmd, "history"))
    for (int i = 0; i < o->nargs && nin < NFILES; i++)
      in[nin++] = (struct named){!strcmp(o->cmd, "compare") ? (i ? "NEW.csv" : "OLD.csv") : !strcmp(o->cmd, "history") ? "DIR|CSV" : "FILE",
                                 o->args[i]};
  static char comp[2][OUTFILE_PATH_MAX + 16];   /* --plot's data and script/meta file */
  if (o->out) out[nout++] = (struct named){"--out", o->out};
  if (o->timeline) out[nout++] = (struct named){"--timeline", o->timeline};
  if (o->breakdown) out[nout++] = (struct named){"--breakdown", o->breakdown};
  if (o->junit) out[nout++] = (struct named){"--junit", o->junit};
  if (o->json) out[nout++] = (struct named){"--json", o->json};
  if (o->html) out[nout++] = (struct named){"--html", o->html};
  if (o->blocks_csv) out[nout++] = (struct named){"--blocks-csv", o->blocks_csv};
  if (o->plot && !strcmp(o->cmd, "history")) {   /* history's --plot is the folder its pictures go in */
    struct stat st;
    if (!strcmp(o->plot, "-") || (!stat(o->plot, &st) && !S_ISDIR(st.st_mode)))
      return refuse(o, "--plot DIR: history draws one picture per workload into a folder");
  } else if (o->plot) {
    if (!strcmp(o->plot, "-")) return refuse(o, "--plot -: a picture needs a file name (its data and script go beside it)");
    if (strlen(o->plot) >= OUTFILE_PATH_MAX) {
      char err[300];
      outfile_name_ok(o->plot, err, sizeof err);
      fprintf(stderr, "fragbench %s: --plot %s\n", o->cmd, err);
      return 2;
    }
    out[nout++] = (struct named){"--plot", o->plot};
    if (!strcmp(o->cmd, "fit")) fit_plot_paths(o->plot, comp[0], comp[1], sizeof comp[0]);
    else explain_plot_paths(o->plot, comp[0], comp[1], sizeof comp[0]);
    out[nout++] = (struct named){"--plot's data", comp[0]};
    out[nout++] = (struct named){!strcmp(o->cmd, "fit") ? "--plot's meta file" : "--plot's script", comp[1]};
  }
  char msg[1200], err[600];
  for (int i = 0; i < nin + nout; i++) {   /* names the system takes */
    const struct named *f = i < nin ? &in[i] : &out[i - nin];
    if (outfile_name_ok(f->path, err, sizeof err)) {
      snprintf(msg, sizeof msg, "%s %s", f->flag, err);
      return refuse(o, msg);
    }
  }
  for (int i = 0; i < nin; i++)   /* an input read once, given twice */
    for (int k = 0; k < i; k++) {
      if (!read_once(in[i].path) || !read_once(in[k].path)) continue;
      int both_stdin = is_stdin(in[i].path) && is_stdin(in[k].path);
      struct stat a, b;
      if (both_stdin || (!stat(in[i].path, &a) && !stat(in[k].path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
        snprintf(msg, sizeof msg, "%s %s and %s %s %s: it can be read only once (give one of them a file)", in[k].flag,
                 in[k].path, in[i].flag, in[i].path, both_stdin ? "both read standard input" : "are the same pipe");
        return refuse(o, msg);
      }
    }
  const char *on_stdout = stdout_default(o);
  for (int i = 0; i < nout; i++) {
    if (!outfile_is_stdout(out[i].path)) continue;
    if (on_stdout) {
      snprintf(msg, sizeof msg, "%s %s: standard output already carries %s: give %s another file name", out[i].flag,
               out[i].path, on_stdout, out[i].flag);
      return refuse(o, msg);
    }
    on_stdout = out[i].flag;
  }
  for (int i = 0; i < nout; i++) {
    if (outfile_is_stdout(out[i].path)) continue;   /* written in place, once (above) */
    for (int k = 0; k < nin; k++)
      if (strcmp(in[k].path, "-") && outfile_same(out[i].path, in[k].path)) {
        snprintf(msg, sizeof msg, "%s %s is the same file as the input %s %s: refusing to write over an input", out[i].flag,
                 out[i].path, in[k].flag, in[k].path);
        return refuse(o, msg);
      }
    for (int k = 0; k < i; k++) {
      struct stat st;
      if (outfile_is_stdout(out[k].path) || !outfile_same(out[i].path, out[k].path)) continue;
      if (!stat(out[i].path, &st) && S_ISCHR(st.st_mode) && !access(out[i].path, W_OK) && st.st_rdev == makedev(1, 3))
        continue;   /* /dev/null twice: both discarded */
      snprintf(msg, sizeof msg, "%s and %s name the same file (%s)", out[k].flag, out[i].flag, out[i].path);
      return refuse(o, msg);
    }
  }
  for (int i = 0; i < nout; i++)   /* writable now, not after the work */
    if (outfile_writable(out[i].path, err, sizeof err)) {
      snprintf(msg, sizeof msg, "%s %s", out[i].flag, err);
      return refuse(o, msg);
    }
  return 0;
}
