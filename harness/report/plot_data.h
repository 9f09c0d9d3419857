/* plot_data.h - the gnuplot data of one bench run folder, written by `fragbench report`
 * into DIR/plots/data/ (the plots/NAME.gp scripts only draw it). Each plot NAME gets NAME.dat (tab-
 * separated) and NAME.meta.gp (gnuplot settings: labels, colours, ranges, units), and one
 * line "SCRIPT NAME" in plots.txt, which plots/plots.sh draws with plots/SCRIPT.gp:
 *   dots overhead        peak reserved / peak requested, a row per workload, a dot per strategy
 *   dots mincap          smallest cap that completes / peak requested, the same way
 *   latency latency      host ns per call per strategy (median and range over workloads)
 *   tradeoff tradeoff    overhead against driver time per 1000 calls, a point per strategy x workload
 *   timeline timeline-W  requested / allocated / reserved over the run, a panel per strategy
 *   capsweep capsweep-W  completed or OOM at each cap, and peak reserved of the runs that completed
 * A strategy keeps one colour in every plot: its index in the folder (runs.csv order). */
#ifndef FB_PLOT_DATA_H
#define FB_PLOT_DATA_H
#include <stdio.h>
#include "run_folder.h"

/* 0, or 2 with err (a file that cannot be written or a malformed timeline) */
int plot_data_write(struct run_folder *f, const char *datadir, char *err, size_t errlen);

/* shared by the plot-data writers */
FILE *pd_open(const char *datadir, const char *name, const char *ext, char *err, size_t errlen);
void pd_gq(FILE *o, const char *s);   /* a gnuplot double-quoted string */
void pd_safe(const char *s, char *out, size_t len);   /* file-name-safe label */
/* "array names[n]", "array colors[n]" (and "n = ") for the strategies list[0..n-1] */
void pd_meta_strategies(FILE *m, const struct run_folder *f, const int *list, int n);
/* writers of the per-workload series (plot_series.c); each appends its lines to the list */
int pd_timelines(struct run_folder *f, const char *datadir, FILE *list, char *err, size_t errlen);
int pd_capsweeps(struct run_folder *f, const char *datadir, FILE *list, char *err, size_t errlen);

#endif
