/* history.h - `fragbench history`: how a job's memory moved over many bench runs. Each
 * input is a bench folder (runs.csv, and mincap.csv and env.txt when present: what `make
 * bench` writes in results/bench-<stamp>/) or a results CSV (env.txt beside it read when
 * there). The runs are ordered by env.txt's commit_date when every run has one, else by
 * its date when every run has one, else as given (history_order). Per workload and
 * strategy a run has one point: peak reserved of its uncapped row (preferring a row with
 * no cap, then device=all, as the report does), whether that row completed, and the
 * smallest cap that completes (mincap_bytes) where mincap.csv or the CSV holds it.
 *
 * The largest step of a workload (history_step) is over every strategy's series of
 * completed points: between two consecutive runs where the strategy completed (runs in
 * between where it died or is absent are skipped over), the change in peak reserved of
 * largest size, up or down; ties go to the earliest run, then to the strategy that comes
 * first (in the order the files name them). A strategy whose row died after completing
 * in the run before it is named too: "died at C (status)". history_sentence words both. */
#ifndef FB_HISTORY_H
#define FB_HISTORY_H
#include <stddef.h>
#include <stdint.h>

struct history_run {
  char path[1024];               /* as given */
  char label[200];               /* the commit when known, else the folder or file name;
                                    "commit (name)" when another run has the same commit */
  char name[128];                /* the folder or file name */
  char commit[64];               /* env.txt's commit ("3c40a5d (modified)"), "" unknown */
  char commit_date[48], date[48];/* env.txt's, "" unknown */
};

struct history_point {
  int has;                       /* a row for it in this run */
  int completed;                 /* the row completed (completed=1) */
  uint64_t peak;                 /* peak_reserved */
  int has_mincap;
  uint64_t mincap;               /* mincap_bytes */
  char status[64];               /* the row's status when it died */
  int rank;                      /* uncapped 2 + device=all 1: the row kept */
};

struct history {
  int nruns, nw, ns;
  struct history_run *run;       /* [nruns], in order once history_order ran */
  char **workload, **strategy;   /* in the order the files first name them */
  struct history_point *pt;      /* [(w * ns + s) * nruns + r] after history_finish */
  /* while loading: */
  struct history_rec *rec; int nrec, caprec;
  const char *order_by;          /* "commit_date", "date" or "given" (history_order) */
};

/* Add one input (a folder or a CSV) as the next run. 0, or 2 with err naming the file and
 * line (no runs.csv in a folder, a malformed CSV, a peak_reserved that is not bytes). */
int history_add(struct history *h, const char *path, char *err, size_t errlen);
/* Order the runs (see above) and build the points. Call once after the last add. */
void history_finish(struct history *h);
void history_free(struct history *h);
const struct history_point *history_at(const struct history *h, int w, int s, int r);

struct history_step {
  int found;                     /* a change between two completed points (0: none, or < 2 points) */
  int points;                    /* the most completed points of any strategy */
  int s, from, to;               /* the strategy, the run before and the run where it happened */
  uint64_t before, after;
  int ndied;
  int died_s[16], died_at[16];   /* strategies that died after completing in the run before */
};
/* The largest step of workload w (the rule above). */
void history_step(const struct history *h, int w, struct history_step *st);
/* The one sentence about it: "gpt_train: the largest step is caching +512.00 MiB (+5.2%,
 * 9.77 GiB -> 10.27 GiB) at 3c40a5d (run 4 of 6; the run before: run 3, 2b1a0c9)." */
void history_sentence(const struct history *h, int w, char *buf, size_t n);
/* "ordered by the commit date in env.txt" ... : the one line about the order */
void history_order_sentence(const struct history *h, char *buf, size_t n);

#endif
