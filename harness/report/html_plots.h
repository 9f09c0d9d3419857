/* html_plots.h - the plot data `fragbench report` writes (plot_data.h: DIR/plots/data/
 * plots.txt, NAME.dat, NAME.meta.gp) as JSON for report.html's charts, read back from
 * those files so the page draws exactly what gnuplot draws: per plot {script, name,
 * meta: the meta file's settings (arrays as lists), blocks: the data file's blocks
 * (split at blank-line pairs, as gnuplot's `index`), each {title: its first comment,
 * rows: [[fields]]}, a field a number, null for "-", or a string}. */
#ifndef FB_HTML_PLOTS_H
#define FB_HTML_PLOTS_H
#include <stdio.h>

/* the JSON array of the plots listed in datadir/plots.txt; the number written (0: none
 * or no plots.txt, then "[]") */
int html_plots_json(FILE *o, const char *datadir);
/* one NAME.dat's text as the JSON list of its blocks */
void html_dat_json(FILE *o, const char *text);
/* one NAME.meta.gp's text as a JSON object */
void html_meta_json(FILE *o, const char *text);
/* a whole file into a new string (NULL if it cannot be read) */
char *html_slurp(const char *path, size_t *len);

#endif
