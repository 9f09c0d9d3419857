/* history_out.h - `fragbench history`'s markdown and pictures (history_out.c). */
#ifndef FB_HISTORY_OUT_H
#define FB_HISTORY_OUT_H
#include <stdio.h>
#include "history.h"

/* the file-name part of workload w's picture: its label with [^A-Za-z0-9._-] as '_',
 * "-2", "-3" ... when an earlier workload gives the same */
void history_slug(const struct history *h, int w, char *out, size_t n);
/* one table per workload, the sentence under it; plot_prefix (e.g. "plots/"), when not
 * NULL, links each workload's picture PREFIX + "history-<slug>.png" */
void history_markdown(const struct history *h, FILE *f, const char *plot_prefix);
/* DIR/history-<slug>.FMT per workload (with .dat and .meta.gp beside); *drawn counts the
 * pictures. 0, or 2 (a message said which). No gnuplot: the data only, said once, 0. */
int history_plots(const struct history *h, const char *dir, const char *fmt, int *drawn);

#endif
