/* report.h - `fragbench report DIR`: report.md and the gnuplot data of one bench run
 * folder, both from the same reading of its CSVs (run_folder.h). */
#ifndef FB_REPORT_H
#define FB_REPORT_H
#include <stdio.h>
#include "run_folder.h"

/* the images report.md may embed: file names under DIR/plots/ that exist and are not empty */
struct report_images { int n; char **name; };
void report_images_scan(struct report_images *im, const char *dir);
int report_has_image(const struct report_images *im, const char *name);
void report_images_free(struct report_images *im);

/* report.md: title (the folder's name), fmt = "png" or "svg" (which plots to embed) */
void report_write_md(struct run_folder *f, FILE *out, const char *title, const char *fmt, const struct report_images *im);

/* the per-snapshot notes under a workload's heading: what PyTorch itself reserved, the
 * limit inferred from an OOM, `advise`'s recommendation, `explain`'s picture */
void report_snapshot_notes(const struct run_folder *f, int w, FILE *out, const struct report_images *im);
/* the report's first line: what a PyTorch user should set (report_verdict.c) */
void report_verdict(const struct run_folder *f, char *buf, size_t len);
/* "## Summary": PyTorch's settings and advise's recommendation first, then other
 * frameworks' allocators, research designs and references in their own tables */
void report_summary(struct run_folder *f, FILE *out);
/* the rows of workload w's advise-<trace file>.csv (the recommendation first), or NULL
 * where it has none or it could not be read */
const struct results *report_advise(const struct run_folder *f, int w);
/* "## Where the figures came from": env.txt's figures_* lines, and the device of each file */
void report_sources(const struct run_folder *f, FILE *out);
/* "memory against driver time": the table (the plot's data comes from tradeoff.h) */
void report_tradeoff(struct run_folder *f, FILE *out, const char *fmt, const struct report_images *im);

/* "## Peak reserved across runs": DIR/history.md (`fragbench history`), when there */
void report_history(const struct run_folder *f, FILE *out);

#endif
