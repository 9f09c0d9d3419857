/* html_report.h - report.html beside report.md: report.md's text and tables as HTML
 * (html_md.h), each plot it embeds drawn inline as SVG from the plot data (html_plots.h,
 * html_charts.js: hover a mark for its figure), explain's picture replaced by its page
 * (explain --html, inline as an iframe's srcdoc) where the bench wrote one, other
 * pictures inlined as data: URLs, and a switch per strategy that hides or shows it in
 * every chart and table. One self-contained file: nothing is fetched, it opens from disk. */
#ifndef FB_HTML_REPORT_H
#define FB_HTML_REPORT_H
#include <stdio.h>
#include "run_folder.h"

/* dir: the run folder (its plots/ and plots/data/); md: report.md's text */
void html_report_write(FILE *o, const struct run_folder *f, const char *dir, const char *title, const char *md);
/* which plot an image of report.md stands for: "plots/NAME.png|svg" -> NAME (0), else -1 */
int html_report_plot_name(const char *src, char *name, size_t n);

#endif
