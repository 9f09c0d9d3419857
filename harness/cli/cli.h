/* cli.h - the command line: the options struct the parser fills (options.c reads argv
 * against the flags each subcommand's list names, cli_<name>.c), the device pick, and the
 * outputs. A flag's field is not declared here: its one entry in flags.def declares it
 * (with its name, value, default, check and help). Adding a flag: one entry in flags.def,
 * and its name in the lists of the commands that take it. The rows themselves are planned
 * in the engine (plan.h). */
#ifndef FB_CLI_H
#define FB_CLI_H
#include <stdint.h>
#include <stdio.h>
#include "replay.h"
#include "csv.h"
#include "outfile.h"
#include "limit.h"

#define CLI_MAX 64

enum cap_kind { CAP_NONE, CAP_FRACTION, CAP_BYTES, CAP_X };
/* a cap as given: --cap F and --limit 0.25 / N% are fractions of the device total
 * (resolved where the device is known: plan.c), --limit BYTES bytes, --cap-x M a multiple
 * of the input's own peak requested */
struct cap { enum cap_kind kind; double value; uint64_t bytes; char text[48]; const char *flag; };
/* no device holds more: byte values above this are refused (the bound is said) */
#define CLI_BYTES_MAX (1ull << 46)   /* 64 TiB */
#define CLI_SECONDS_MAX 86400.0      /* stress --seconds: a day */

/* every flag's id, FLAG_<ID> (flags.def): the index of its entry in the flag table */
#define FB_FLAG_ID(id, ...) FLAG_##id,
enum flag_id {
#define SWITCH FB_FLAG_ID
#define TEXT FB_FLAG_ID
#define WORD FB_FLAG_ID
#define ENUM FB_FLAG_ID
#define PUSH FB_FLAG_ID
#define CAP FB_FLAG_ID
#define UINT FB_FLAG_ID
#define REAL FB_FLAG_ID
#define CHECKED FB_FLAG_ID
#define HOOK FB_FLAG_ID
#include "flags.def"
#include "flags_undef.h"
  FLAGS_N
};
#undef FB_FLAG_ID

/* The command line, parsed. Each flag's field is declared by its entry in flags.def (the
 * field is named by the entry's ID; its meaning is the entry's help line); the fields
 * below it are the ones several flags fill, or the parser. */
struct cli_opts {
#define SWITCH(id, ...) int id;
#define TEXT(id, ...) const char *id;
#define WORD(id, ...) const char *id;
#define ENUM(id, ctype, ...) ctype id;
#define PUSH(id, ...) const char *id[CLI_MAX]; int n##id;
#define CAP(id, ...)
#define UINT(id, ctype, ...) ctype id;
#define REAL(id, ...) double id;
#define CHECKED(id, ctype, ...) ctype id;
#define HOOK(id, ...)
#include "flags.def"
#include "flags_undef.h"
  const char *cmd;
  unsigned char given[FLAGS_N];                     /* how often each flag was given (OPT_GIVEN) */
  struct cap caps[CLI_MAX]; int ncaps;              /* --cap, --cap-x, --limit, --cap-bytes, --budget */
  char conf_spec[CLI_MAX][640]; int nconf;          /* --alloc-conf, as strategy specs (in allocators[]) */
  char oom_message_source[128];                     /* what --oom-message said, once read (the limit sentence) */
  uint64_t max_reserved;                            /* --max-reserved in bytes (resolved after every flag) */
  const char *args[CLI_MAX]; int nargs;             /* positional arguments, as the command's args[] name them */
};
/* whether flag ID (flags.def: OPT_GIVEN(o, margin) for --margin) was on the command line */
#define OPT_GIVEN(o, id) ((o)->given[FLAG_##id] != 0)

/* The bytes a cap stands for on a device of `total` bytes (CAP_X: 0, it needs the input). */
/* the first limit given (--limit, --cap-bytes, --budget, --cap; not --cap-x) in bytes on the
 * device cfg (limit_on_device against its total); 0 = none given */
uint64_t cli_limit_on(const struct cli_opts *o, const struct device_config *cfg);
/* --alloc-conf VALUE: one more strategy spec in o->allocators. 0, or 2 with a message. */
int cli_add_alloc_conf(struct cli_opts *o, const char *val);
/* capture.py's side file beside a snapshot (cli_side_file.c): its alloc_conf and that as a
 * strategy spec. 1 found, 0 none (or no alloc_conf), -1 a bad side file (err). */
int cli_side_file_spec(const char *trace, char *conf, size_t cn, char *spec, size_t sn, char *err);
/* With one --trace and a side file holding an alloc_conf: that setting added as the
 * --allocator, said on stderr. 0, or 2 with a message. */
int cli_side_file_conf(struct cli_opts *o, const char *cmd);
/* the plan's options from the command line's (plan.h) */
struct plan_opts;
void cli_plan_opts(const struct cli_opts *o, const struct device_config *devices, int ndevices, int multi, struct plan_opts *po);
/* the one sentence about where the limit came from, on stderr (unless --quiet) */
void cli_say_limit(const struct cli_opts *o, const struct limit *lim);
/* "unknown WHAT 'NAME'; known: a b c" into buf (the one lookup message; lookup.h) */
#include "lookup.h"
/* Resolve --device auto into sim or cuda, saying which on stderr. 0, or 1 (no GPU for --device cuda). */
int cli_pick_device(struct cli_opts *o, struct device_config *cfg);
/* Every input and output of the command, from its options, checked against each other in
 * one place (cli_files.c): 0, or 2 with a message. */
int cli_check_files(const struct cli_opts *o);
/* fit --plot FILE's data and meta file beside it (each n bytes) */
void fit_plot_paths(const char *plot, char *dat, char *meta, size_t n);
/* Every --workload/--allocator known, keys and values valid: 0, or 2 with a message. */
int cli_check_selection(const struct cli_opts *o);
/* A row source: a generator spec or (trace path, device trace). */
struct source { const char *workload; const char *trace; int trace_device; };
/* Expand workloads and traces (one source per device trace with events). 0 or 2. */
int cli_sources(const struct cli_opts *o, struct source *out, int max, int *n);
/* What a command that replays input x strategy rows one by one needs: the strategies
 * named (raw when none), the device picked, the sources. 0, 1 (no device) or 2 (a bad
 * selection, said on stderr). */
struct cli_rows {
  const char *const *allocs; int nalloc;
  struct device_config cfg;
  struct source src[CLI_MAX * 4]; int nsrc;
};
int cli_rows(struct cli_opts *o, struct cli_rows *rows);
/* Fill the parts of a run_spec that come from the options. */
void cli_spec(const struct cli_opts *o, const struct device_config *cfg, const struct source *src, struct run_spec *s);

/* Output: CSV (stdout or --out) and the table on stderr. */
struct output {
  struct outfile file;                      /* --out: written beside, renamed into place */
  FILE *csv;
  int close_csv;
  int rows;
  int quiet;
  uint64_t max_reserved; int fail_on_oom;   /* the gate (run --max-reserved, --fail-on-oom) */
  int gate_failed;                          /* a row failed it: the command exits 1 */
  int terminal;                             /* no CSV: stdout is a terminal and no --out (run) */
};
/* run --breakdown FILE.csv (cli_breakdown.c): its header, and one line per stream of a row */
struct stream_acct;
void breakdown_header(FILE *f);
void breakdown_rows(FILE *f, int run_id, const struct run_result *r, const struct stream_acct *a);
/* arm the gate from the options (after output_open) */
void output_gate(struct output *out, const struct cli_opts *o);
int output_open(struct output *out, const char *path);
/* run's: the same, but with no path and stdout a terminal (and not quiet) no CSV at all:
 * the table on stderr is what a person reads; output_finish says how to get the CSV */
int output_open_run(struct output *out, const char *path, int quiet);
void output_row(struct output *out, const struct run_result *r);
/* keep: rename --out into place (0, or -1 with a message); else leave any existing file
 * as it was */
int output_finish(struct output *out, int keep);
void output_abort(struct output *out);
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
int cmd_explain(struct cli_opts *o);
int cmd_fit(struct cli_opts *o);
int cmd_compare(struct cli_opts *o);
int cmd_report(struct cli_opts *o);
int cmd_readspeed(struct cli_opts *o);
int cmd_percall(struct cli_opts *o);
int cmd_history(struct cli_opts *o);
/* every subcommand's table (cli_<name>.c), in `fragbench --help` order */
struct cmd_def;
extern const struct cmd_def *const cli_commands[];

#endif
