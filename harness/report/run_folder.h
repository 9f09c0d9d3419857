/* run_folder.h - one bench run folder read into memory for the report and the plot data:
 * runs.csv (or, in a folder without one, every other results CSV there, columns joined
 * by name), and mincap.csv, capsweep.csv and env.txt when present, all through
 * results_read. Workloads and strategies are whatever the files hold, in the order they
 * first appear (runs.csv first: a strategy's colour follows from its index). For each
 * workload x strategy a cell says which rows count:
 *   run     the runs.csv row, preferring an uncapped row, then the aggregate (device=all)
 *   mincap  the mincap.csv row with a mincap_x (the last one), else its status
 *   sweep   every capsweep.csv row with a cap, sorted by cap_x */
#ifndef FB_RUN_FOLDER_H
#define FB_RUN_FOLDER_H
#include <stddef.h>
#include <stdint.h>
#include "results_read.h"

struct sweep_point { double x; const char *reserved; int completed; };

struct rf_cell {
  int run;                 /* runs.csv row, -1 = none */
  int run_rank;
  int mincap;              /* mincap.csv row with mincap_x, -1 = none */
  int mincap_nonmono;      /* a row with mincap_x said non-monotonic */
  int mincap_other;        /* the last mincap.csv row without mincap_x, -1 = none */
  int nsweep;
  struct sweep_point *sweep;
  uint64_t oom_request;    /* the request at the run row's first_oom_event (report_cells.c) */
  int oom_request_known;
};

struct run_folder {
  char dir[1024];
  struct results runs, mincap, capsweep;   /* mincap/capsweep: ncols 0 when absent */
  int have_mincap, have_capsweep;          /* the files were there */
  int nenv;
  char **env_key, **env_val;               /* env.txt "key: value" lines, in order */
  int nw, ns, ns_cells;                    /* cells exist for strategies < ns_cells */
  char **workload;                         /* labels */
  char **strategy;
  struct rf_cell *cells;                   /* [w * ns_cells + s] */
  char device_name[256];                   /* env.txt's, else the first row's */
  int64_t *wl_events;                      /* [w]: events in the workload, -1 unknown (rc_oom_lookup) */
  int oom_looked_up;
  struct rf_advise *advise;                /* [w]: its advise CSV (run_folder_advise.c) */
};

/* a workload's advise-<trace file>.csv (run_folder_advise.c), read with the folder */
enum { RF_ADVISE_NONE, RF_ADVISE_READ, RF_ADVISE_UNREADABLE };
struct rf_advise {
  int state;
  char name[512];            /* the name in advise-NAME.csv */
  struct results t;          /* READ: its rows, the recommendation first */
  char err[600];             /* UNREADABLE: why (file, line, what was expected) */
};
/* the names a workload's own files may carry (the trace's file name, then its label): 1 or 2 */
int rf_own_names(const struct run_folder *f, int w, const char *names[2]);
void rf_advise_load(struct run_folder *f);
/* workload w's advise CSV, read or unreadable; NULL where it has none */
const struct rf_advise *rf_advise_of(const struct run_folder *f, int w);
void rf_advise_free(struct run_folder *f);

/* 0, or 2 with err naming the file and line (no results CSV, or one malformed). */
int run_folder_load(struct run_folder *f, const char *dir, char *err, size_t errlen);
void run_folder_free(struct run_folder *f);

/* A row's workload label: a trace's file name without its folder and .gz, else the spec. */
void rf_workload_label(const struct results *t, int row, char *out, size_t len);
/* A row's strategy label: allocator, or allocator:params. */
void rf_strategy_label(const struct results *t, int row, char *out, size_t len);
int rf_workload_index(const struct run_folder *f, const char *label);
/* index of a strategy; add = 1 appends it when new (no cell then) */
int rf_strategy_index(struct run_folder *f, const char *label, int add);
/* the cell of (w, s), or NULL */
const struct rf_cell *rf_cell_at(const struct run_folder *f, int w, int s);
/* env.txt value of key, or NULL */
const char *rf_env(const struct run_folder *f, const char *key);
/* a reference row, never "best": raw (no allocator) and oracle (offline plan) */
int rf_is_reference(const char *strategy);

#endif
