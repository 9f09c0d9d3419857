/* compare.h - two results CSVs side by side (`fragbench compare OLD NEW`, `make regress`):
 * rows matched by (workload, trace, allocator, params, device, cap), each difference
 * classified as worse / better / within / changed / new / missing, with its percentage.
 *
 * Two ways to judge a difference:
 *  - metrics (the default, for CI): the listed columns (peak_reserved unless given) are
 *    lower-is-better; a rise beyond max_increase is `worse` and fails, a fall is `better`
 *    and passes, a rise within the tolerance is `within`; a row that completed and no
 *    longer does is `worse` (column `completed`).
 *  - a tolerance file (results/tolerance.csv; `make regress`): every column of OLD is
 *    compared, exactly unless the file says `within` (abs + rel), `warn` (host timing:
 *    the median new/old per allocator beyond a factor is a warning only) or `ignore`;
 *    any difference beyond it is `changed` and fails, either way.
 * A row of OLD absent from NEW is `missing` and fails; a row only in NEW is `new` and
 * passes. The n-th repeat of one key gets "#n".
 *
 * A row that ran out of memory (status oom) stopped part-way: its figures are how far it
 * got, never compared or explained. Both sides died: `oom` (passes, the caps said); it
 * completed and dies now: `worse` ("completed before, dies now (cap X)"); it died and
 * completes now: `better`.
 *
 * Rows whose key differs only in the cap or the settings (params) - OLD and NEW run
 * under different limits, or with a knob changed - are matched within their (workload,
 * trace, allocator, device), in row order, when both sides have as many such rows; the
 * pair is judged as any other, with a warning naming the difference ("cap 19.79 GiB ->
 * 17.42 GiB"). Where the counts differ they stay missing/new, with a note saying what the
 * other side has. */
#ifndef FB_COMPARE_H
#define FB_COMPARE_H
#include <stdio.h>
#include "results_read.h"

#define CMP_MAX_METRICS 32

enum cmp_mode { CMP_EXACT, CMP_WITHIN, CMP_WARN, CMP_IGNORE };
/* CMP_K_OOM: the row ran out of memory on both sides: its figures are how far it got,
 * not what it needs, so they are not compared (passes) */
enum cmp_kind { CMP_K_WORSE, CMP_K_BETTER, CMP_K_WITHIN, CMP_K_CHANGED, CMP_K_NEW, CMP_K_MISSING, CMP_K_WARN, CMP_K_OOM };

struct cmp_rule { char column[64]; enum cmp_mode mode; double abs, rel, factor; };

struct cmp_opts {
  double max_increase;                         /* a fraction: 0.01 = 1% */
  const char *metrics[CMP_MAX_METRICS]; int nmetrics;   /* none = peak_reserved */
  struct cmp_rule *rules; int nrules;          /* from a tolerance file */
  int use_tolerance;                           /* 1: judge by the rules, not by metrics */
  const char *only[64]; int nonly;             /* allocators to compare (none = all) */
  int allow_missing;                           /* a missing row is reported, not failed */
  int min_timed_events;                        /* warn mode: shorter rows are not timed (10000) */
};

struct cmp_line {
  enum cmp_kind kind;
  int row;                      /* index into report.rows, -1 for a file-level line */
  char column[64];
  char *old, *new;              /* as written in the files ("" when empty) */
  double pct; int has_pct;      /* (new - old) / |old| * 100 */
  char *note;                   /* a sentence for warnings and file-level lines, or NULL */
};

struct cmp_row {
  char *label;                  /* "gpt_train.pickle caching cap 1.05x" */
  char *short_label;            /* the same with a long workload spec cut to 44 characters */
  char *allocator;
  char *workload, *trace, *params, *device, *cap;
  enum cmp_kind verdict;        /* worst of its lines: WORSE/CHANGED/MISSING fail; NEW; else WITHIN */
  int failed;
  int old_row, new_row;         /* the rows of OLD and NEW it stands for (-1: none) */
};

struct cmp_report {
  struct cmp_row *rows; int nrows, rcap;
  struct cmp_line *lines; int nlines, lcap;
  int compared, worse, better, within, changed, newrows, missing, warnings, columns_missing, oom;
  int fail;
  int allow_missing;             /* copied from the options */
};

/* the tolerance file (column,mode,abs,rel,factor; '#' comments): 0, or 2 with err */
int cmp_load_tolerance(const char *path, struct cmp_opts *o, char *err, size_t errlen);
/* a results file fit to compare (call it on OLD and on NEW): its key columns and every
 * column named in metrics exist, no row is shorter than the header, no judged cell is
 * nan or inf: 0, or 2 with err naming the file (and line) */
int cmp_check_columns(const struct results *old, const struct cmp_opts *o, char *err, size_t errlen);
void cmp_opts_init(struct cmp_opts *o);
void cmp_opts_free(struct cmp_opts *o);
void cmp_run(const struct results *old, const struct results *new, const struct cmp_opts *o, struct cmp_report *r);
void cmp_report_free(struct cmp_report *r);
/* the row ran out of memory (status oom): its figures are how far it got */
int cmp_row_died(const struct results *t, int r);
/* a row's cap in words: "cap 19.79 GiB", "cap 1.25x", "uncapped" */
void cmp_cap_words(const struct results *t, int r, char *out, size_t n);
const char *cmp_kind_name(enum cmp_kind k);

/* compare_out.c: the text table, JUnit XML (one testsuite, a testcase per row), JSON */
void cmp_print_text(FILE *f, const struct cmp_report *r, const struct cmp_opts *o, int max_lines);
void cmp_write_junit(FILE *f, const struct cmp_report *r, const char *old_path, const char *new_path);
/* notes on peak_reserved lines (OLD and NEW as given to cmp_run): did peak_requested grow
 * (the workload asks for more), or overhead (the allocator holds more beyond it)? A row
 * that ran out of memory on either side is not explained by its figures: the note says
 * which side died, and under which cap. */
void cmp_explain_growth(struct cmp_report *r, const struct results *old, const struct results *new);
void cmp_write_json(FILE *f, const struct cmp_report *r, const struct cmp_opts *o, const char *old_path, const char *new_path);

#endif
