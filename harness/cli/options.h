/* options.h - one option table per subcommand (declared beside it, in cli_<name>.c), and
 * the one parser that reads argv against it (options.c). See options.c's top comment for
 * how to add a flag or a subcommand. */
#ifndef FB_OPTIONS_H
#define FB_OPTIONS_H
#include <stdio.h>

struct cli_opts;

/* the value a flag takes: none (a switch), one text, or a comma list whose items are
 * all non-empty. OPT_ARG and OPT_ARGS are not flags but the subcommand's positional
 * arguments (compare's OLD.csv NEW.csv, report's DIR, readspeed's FILE...), in order:
 * OPT_ARG exactly one, OPT_ARGS zero or more (last only); their `flag` is the name the
 * usage line and --help give them ("OLD.csv"), each given one must be non-empty, and
 * they land in cli_opts.args[] in order. */
enum opt_type { OPT_SWITCH, OPT_TEXT, OPT_BYTES, OPT_LIMIT, OPT_NUMBER, OPT_COUNT, OPT_LIST, OPT_ARG, OPT_ARGS };

struct opt_def {
  const char *flag;        /* "--cap-bytes"; for OPT_ARG/OPT_ARGS the argument's name ("OLD.csv") */
  enum opt_type type;
  const char *value;       /* the value's name in --help ("BYTES"); NULL for a switch */
  const char *help;        /* one line (more lines: "\n" inside, indented by the printer) */
};

struct cmd_def {
  const char *name;        /* "run" */
  const char *synopsis;    /* after "usage: fragbench NAME " */
  const char *about;       /* a paragraph after the usage line ("" = none) */
  const struct opt_def *opts;   /* ends with {NULL} */
  int (*fn)(struct cli_opts *);
  const char *epilog;      /* after the flags (exit status...); NULL = none */
};

/* Parse argv[2..] for command c into o (defaults first, then every flag and positional
 * argument, then the values that depend on other flags: N% and fractions). A word that
 * does not start with "--" is the next positional argument (after "--", every word is);
 * too many or too few of them is exit 2 naming them. 0, 2 with a message on stderr, or
 * -1: --help was asked for and printed (exit 0). */
int opts_parse(const struct cmd_def *c, int argc, char **argv, struct cli_opts *o);
/* `fragbench NAME --help`, printed from the table */
void opts_help(const struct cmd_def *c, FILE *f);
/* the type the shared meaning of a flag takes (-1: no flag of that name): every table
 * must agree with it (tests/test_cli_options.c checks all of them) */
#define OPT_IS_ARG(d) ((d)->type == OPT_ARG || (d)->type == OPT_ARGS)
int opts_flag_type(const char *flag);

/* The groups of flags that several subcommands take, spelled once (same help everywhere). */
#define OPTS_SELECTION \
  {"--workload", OPT_TEXT, "NAME[:k=v,...]", "a synthetic generator (see `fragbench list`); repeatable"}, \
  {"--trace", OPT_TEXT, "FILE", "a PyTorch snapshot (.pickle, .pickle.gz), RMM log or native CSV; repeatable"}, \
  {"--trace-device", OPT_COUNT, "N", "which device of a multi-device snapshot (default: each with events)"}
#define OPTS_STRATEGY \
  {"--allocator", OPT_TEXT, "NAME[:k=v,...]", "a strategy; `recorded` = the snapshot's own, with its settings\n" \
   "(default: raw); caching and expandable named here get PyTorch's defaults; repeatable"}, \
  {"--alloc-conf", OPT_TEXT, "CONF", "PyTorch's PYTORCH_CUDA_ALLOC_CONF string, e.g.\n" \
   "'expandable_segments:True,max_split_size_mb:128'; `env` reads the environment's"}
#define OPTS_DEVICE \
  {"--device", OPT_TEXT, "auto|sim|cuda", "auto (default): cuda when a GPU is visible, else sim"}, \
  {"--sim-total", OPT_BYTES, "BYTES", "sim device total (default 85017493504, an H100 80GB; at most 4 TiB)"}, \
  {"--sim-usable", OPT_BYTES, "BYTES", "what cudaMalloc can get on sim (default 84230209536)"}
#define OPTS_LIMIT \
  {"--limit", OPT_LIMIT, "BYTES|N%|FRACTION", "the memory limit, with its unit (any case): 10G = 10Gi = 10GiB (2^30),\n" \
   "10GB (10^9), 1048576B (bytes); N% of the device total, or a fraction as\n" \
   "set_per_process_memory_fraction takes it (0.25). A number without a unit is refused"}, \
  {"--cap-bytes", OPT_LIMIT, "BYTES|N%|FRACTION", "the same as --limit"}, \
  {"--oom-message", OPT_TEXT, "FILE|-", "PyTorch's out-of-memory error text: its limit is the limit"}, \
  {"--no-infer-cap", OPT_SWITCH, NULL, "no limit inferred from a snapshot that ended in an OOM"}, \
  {"--trust-message", OPT_SWITCH, NULL, "take --oom-message's limit even where its failed request or limit is not the\n" \
   "snapshot's own (by default such a message is refused: it belongs to another run)"}
#define OPTS_CHECKS \
  {"--seed", OPT_COUNT, "N", "generator seed (default 1)"}, \
  {"--validate", OPT_SWITCH, NULL, "check every block: no overlap, inside held memory, aligned, counts agree"}, \
  {"--strict", OPT_SWITCH, NULL, "skippable bad events (unknown free, double free, zero size) are fatal"}
#define OPTS_QUIET {"--quiet", OPT_SWITCH, NULL, "no table or warnings on stderr"}
#define OPTS_END {NULL, 0, NULL, NULL}

#endif
