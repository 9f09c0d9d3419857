/* cli.h - the command line shared by every subcommand: one options struct, one parser,
 * and the selection of rows (workloads/traces x allocators x caps) built from it. */
#ifndef FB_CLI_H
#define FB_CLI_H
#include <stdint.h>
#include <stdio.h>
#include "replay.h"
#include "csv.h"

#define CLI_MAX 64

enum cap_kind { CAP_NONE, CAP_FRACTION, CAP_BYTES, CAP_X };
struct cap { enum cap_kind kind; double value; uint64_t bytes; };

struct cli_opts {
  const char *cmd;
  const char *workloads[CLI_MAX]; int nworkloads;
  const char *traces[CLI_MAX]; int ntraces;
  int trace_device;                   /* -1 = every device with events */
  const char *allocators[CLI_MAX]; int nallocators;
  const char *device;                 /* auto, sim, cuda */
  const char *devices;                /* --devices LIST, or NULL */
  uint64_t sim_total, sim_usable;
  struct cap caps[CLI_MAX]; int ncaps;
  enum on_oom on_oom;
  uint64_t seed;
  int validate, strict, verify, touch, quiet;
  int no_touch;                 /* --no-touch: not even the default touch of async blocks on cuda */
  const char *out, *timeline;
  double precision;                   /* mincap */
  const char *confirm_on;             /* mincap: confirm each found cap on this device kind */
  int threads; double seconds; double fail_rate;   /* stress */
  char conf_spec[CLI_MAX][640]; int nconf;          /* --alloc-conf, as strategy specs (in allocators[]) */
  uint64_t budget;                                  /* advise --budget; 0 = none */
  int no_infer_cap;                                 /* run: no cap inferred from a snapshot's OOM */
  const char *at, *plot;                            /* explain --at, --plot */
  uint64_t max_reserved; int fail_on_oom;           /* run's gate: exit 1 when a row exceeds / OOMs */
  const char *breakdown;                            /* run --breakdown FILE.csv: reserved at the peak per stream */
  const char *vary, *limit;                         /* fit --vary PARAM, --limit BYTES|N%|FRACTION */
  uint64_t from, to, margin; int margin_given;      /* fit --from N --to M --margin BYTES */
};

/* Parse argv[2..] into o. Returns 0, or 2 with a message printed (bad usage). */
int cli_parse(int argc, char **argv, struct cli_opts *o);
/* Resolve --device auto into sim or cuda, saying which on stderr. 0, or 1 (no GPU for --device cuda). */
int cli_pick_device(struct cli_opts *o, struct device_config *cfg);
/* Every --workload/--allocator known, keys and values valid: 0, or 2 with a message. */
int cli_check_selection(const struct cli_opts *o);
/* A row source: a generator spec or (trace path, device trace). */
struct source { const char *workload; const char *trace; int trace_device; };
/* Expand workloads and traces (one source per device trace with events). 0 or 2. */
int cli_sources(const struct cli_opts *o, struct source *out, int max, int *n);
/* Fill the parts of a run_spec that come from the options. */
void cli_spec(const struct cli_opts *o, const struct device_config *cfg, const struct source *src, struct run_spec *s);

/* Output: CSV (stdout or --out) and the table on stderr. */
struct output {
  FILE *csv;
  int close_csv;
  int rows;
  int quiet;
  uint64_t max_reserved; int fail_on_oom;   /* the gate (run --max-reserved, --fail-on-oom) */
  int gate_failed;                          /* a row failed it: the command exits 1 */
};
/* run --breakdown FILE.csv (cli_breakdown.c): its header, and one line per stream of a row */
struct stream_acct;
void breakdown_header(FILE *f);
void breakdown_rows(FILE *f, int run_id, const struct run_result *r, const struct stream_acct *a);
/* arm the gate from the options (after output_open) */
void output_gate(struct output *out, const struct cli_opts *o);
int output_open(struct output *out, const char *path);
void output_row(struct output *out, const struct run_result *r);
void output_close(struct output *out);
void table_header(void);
void table_row(const struct run_result *r);

int cmd_run(struct cli_opts *o);
int cmd_list(struct cli_opts *o);
int cmd_export(struct cli_opts *o);
int cmd_mincap(struct cli_opts *o);
int cmd_stress(struct cli_opts *o);
int cmd_device(struct cli_opts *o);
int cmd_perf(struct cli_opts *o);
int cmd_advise(struct cli_opts *o);
void advise_usage(FILE *f);
int cmd_explain(struct cli_opts *o);
int cmd_fit(struct cli_opts *o);
void fit_usage(FILE *f);
void explain_usage(FILE *f);

#endif
