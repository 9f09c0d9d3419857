/* report_cells.h - what report.md says about one workload x strategy cell, shared by its
 * sections: the chosen runs.csv row's fields, whether it completed, which family the
 * strategy belongs to (what a PyTorch user can set today, another framework's allocator,
 * a research design, a reference), the model error its figure carries (the optional
 * runs.csv column model_err: a relative +/- of peak_reserved; absent or 0 = exact), and
 * where a run that ran out of memory died (event, share of the run, the request). */
#ifndef FB_REPORT_CELLS_H
#define FB_REPORT_CELLS_H
#include <stddef.h>
#include <stdint.h>
#include "run_folder.h"

enum rc_group { RC_PYTORCH, RC_OTHER, RC_RESEARCH, RC_REFERENCE, RC_NGROUPS };

/* the chosen runs.csv row's field, "" when none */
const char *rc_value(const struct run_folder *f, int w, int s, const char *col);
int rc_has_run(const struct run_folder *f, int w, int s);
int rc_ok(const struct run_folder *f, int w, int s);      /* status ok */
int rc_oom(const struct run_folder *f, int w, int s);     /* status oom */
const char *rc_mincap_x(const struct run_folder *f, int w, int s);   /* NULL when none */

/* caching/expandable/async: PyTorch; bfc/cupy/pool (and unknown names): other
 * frameworks; stitch: research; raw/oracle: references */
enum rc_group rc_group_of(const char *strategy);
const char *rc_group_title(enum rc_group g);
/* a few words on what the strategy is: "PyTorch's default", "XLA/JAX BFC", ... ("" unknown) */
const char *rc_what(const char *strategy);
/* the PYTORCH_CUDA_ALLOC_CONF that selects a PyTorch strategy ("" = unset), NULL otherwise */
const char *rc_alloc_conf(const struct run_folder *f, int w, int s);

/* model_err of the cell (0 when the column is absent or empty) */
double rc_model_err(const struct run_folder *f, int w, int s);
/* the cell's peak reserved as a range: [r(1-e), r(1+e)], its low end never below the
 * row's peak requested (a pool cannot reserve less than is asked of it); lo = hi = r when
 * exact */
void rc_range(const struct run_folder *f, int w, int s, double *lo, double *hi);
/* a and b (with their relative errors) cannot be told apart */
int rc_within_err(double a, double ea, double b, double eb);

/* where an OOM row died: "OOM at event 9775 (67% of the run), a 3.73 GiB request";
 * the request is looked up in the workload itself (read once per workload, cached in f's
 * cells by rc_oom_lookup) and left out when it cannot be read */
const char *rc_oom_text(const struct run_folder *f, int w, int s, char *buf, size_t len);
/* reads each workload that has an OOM row once: the request at every first_oom_event
 * and the total number of events (quiet: a workload that cannot be opened is skipped) */
void rc_oom_lookup(struct run_folder *f);

#endif
