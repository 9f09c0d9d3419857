/* gnuplot_run.h - a picture fragbench draws with gnuplot outside a run folder (explain
 * --plot, fit --plot) appears whole or not at all. Its files (the picture and the data
 * and script beside it) are each opened with outfile_open (outfile.h): a temporary beside
 * the target (unnamed until gnuplot needs its name; a named one is removed on
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE); gnuplot is pointed at the temporaries
 * through -e variables (out, dat, ...; the script names the targets only as defaults),
 * and gnuplot_finish renames them into place only when gnuplot exited 0 and the command
 * succeeded. A failed, missing or interrupted gnuplot leaves every existing file as it was. */
#ifndef FB_GNUPLOT_RUN_H
#define FB_GNUPLOT_RUN_H
#include <stddef.h>
#include "outfile.h"

/* the name gnuplot must write an opened outfile under: its temporary (named now if it was
 * an unnamed one, outfile_name), or the target itself when written in place (/dev/null) */
const char *gnuplot_name(struct outfile *o);

/* Run `gnuplot -e "names[0]=\"values[0]\"; ..." script` (no shell: any file name is
 * passed as it is; gnuplot's own messages go to stderr). 0 it exited 0; 1 no gnuplot on
 * PATH; 2 it failed (err says how, without naming the script: the caller knows it). */
int gnuplot_run(const char *script, const char *const *names, const char *const *values, int n, char *err, size_t errlen);

/* The folder of fragbench's own gnuplot scripts (plots/fit.gp ...) holding `script`, into
 * dir (n bytes): $FB_PLOTS_DIR when set, else plots/ beside the binary's folder (build/..),
 * else ./plots - so that a command works from any working directory. 0, or -1 (dir is then
 * the last place tried, for the message). */
int gnuplot_scripts_dir(const char *script, char *dir, size_t n);

/* Close every one of files (n, NULL skipped): renamed into place when keep (the picture
 * last, so that it appears only after its data), else removed. 0, or -1 (a rename failed;
 * a message on stderr). */
int gnuplot_finish(struct outfile *const *files, int n, int keep);

/* A picture drawn from a data file and a meta file already written (od, om: opened with
 * outfile_open): the picture `picture` opened (op), `script` run with fmt, out, dat, meta
 * and gpdir set, then all three put in place or none. 0 drawn; 1 no gnuplot (the data and
 * meta kept, to draw later); 2 a file could not be opened or put in place (said); 3
 * gnuplot failed (err says how; nothing changed). */
int gnuplot_draw(const char *script, const char *gpdir, const char *fmt, const char *picture, struct outfile *od,
                 struct outfile *om, struct outfile *op, char *err, size_t errlen);

#endif
