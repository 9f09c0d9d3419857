/* explain_plot.h - the picture of `fragbench explain`: one bar per segment, its blocks
 * coloured by state (allocated, free, inactive, unmapped), the request drawn beside
 * them, the numbers in the title; PyTorch memory_viz's segment view at that moment.
 * Writes FILE's stem .dat (the blocks) and .gp (the script) and runs gnuplot; all three
 * appear whole or not at all (gnuplot_run.h): a failed gnuplot leaves them as they were. */
#ifndef FB_EXPLAIN_PLOT_H
#define FB_EXPLAIN_PLOT_H
#include "explain.h"

#define EXPLAIN_PLOT_MAX_SEGS 80   /* the first segments in address order; the title says how many more */

/* 0 drawn; 1 data and script written but gnuplot is not installed (err says so);
 * 2 with err when a file cannot be written or gnuplot fails */
int explain_plot(const struct explain_state *st, const char *trace, const char *path, char *err);
/* the data and script files beside the picture path (each n bytes) */
void explain_plot_paths(const char *path, char *dat, char *gp, size_t n);

#endif
