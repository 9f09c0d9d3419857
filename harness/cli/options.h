/* options.h - the flag table (every flag declared once, in flags.def), each subcommand's
 * list of the flags it takes and its positional arguments (declared beside it, in
 * cli_<name>.c), and the one parser that reads argv against them (options.c). Adding a
 * flag: one entry in flags.def, and its name in the lists of the commands that take it. */
#ifndef FB_OPTIONS_H
#define FB_OPTIONS_H
#include <stdio.h>

struct cli_opts;

/* the value a flag takes: none (a switch), one text, one number or byte size (a comma is
 * refused), or a comma list whose items are all non-empty (OPT_LIST, OPT_LIMIT) */
enum opt_type { OPT_SWITCH, OPT_TEXT, OPT_BYTES, OPT_LIMIT, OPT_NUMBER, OPT_COUNT, OPT_LIST };

/* one flag, as its entry in flags.def declares it (the parser's view of it) */
struct flag_def {
  const char *flag;        /* "--cap-bytes" */
  enum opt_type type;
  const char *value;       /* the value's name in --help ("BYTES"); NULL for a switch */
  const char *help;        /* one line (more lines: "\n" inside, indented by the printer) */
  int props;               /* FLAG_REPEAT: may be given more than once; FLAG_EMPTY_OK: '' is a value */
};
#define FLAG_REPEAT 1
#define FLAG_EMPTY_OK 2
/* the flag table, one entry per flags.def line, in its order (index: enum flag_id, cli.h) */
extern const struct flag_def opts_flags[];
extern const int opts_nflags;
/* the entry of a flag ("--seed"), or NULL when no flag has that name */
const struct flag_def *opts_flag(const char *flag);

/* a positional argument of a subcommand (compare's OLD.csv NEW.csv, report's DIR,
 * readspeed's FILE...), in order: exactly one, or - many, last only - zero or more. Each
 * given one must be non-empty; they land in cli_opts.args[] in order. */
struct arg_def {
  const char *name;        /* "OLD.csv", as the usage line and --help give it */
  int many;                /* zero or more (the last one only) */
  const char *help;
};

struct cmd_def {
  const char *name;        /* "run" */
  const char *synopsis;    /* after "usage: fragbench NAME " */
  const char *about;       /* a paragraph after the usage line ("" = none) */
  const char *const *flags;   /* the names of the flags it takes (flags.def), in --help order; ends with NULL */
  int (*fn)(struct cli_opts *);
  const char *epilog;      /* after the flags (exit status...); NULL = none */
  const struct arg_def *args; /* its positional arguments, ending with {NULL}; NULL = none */
};

/* Parse argv[2..] for command c into o (defaults first, then every flag and positional
 * argument, then the values that depend on other flags: N% and fractions). A word that
 * does not start with "--" is the next positional argument (after "--", every word is);
 * too many or too few of them is exit 2 naming them. 0, 2 with a message on stderr, or
 * -1: --help was asked for and printed (exit 0). */
int opts_parse(const struct cmd_def *c, int argc, char **argv, struct cli_opts *o);
/* `fragbench NAME --help`, printed from its lists and the flag table */
void opts_help(const struct cmd_def *c, FILE *f);
/* whether command c takes the flag named (its list names it) */
int opts_takes(const struct cmd_def *c, const char *flag);

/* Whether the flag table and every command's lists agree (opts_check.c): the number of
 * problems, each named in err ("run --sed: no such flag in flags.def; ..."). */
int opts_check(const struct cmd_def *const *cmds, const struct flag_def *flags, int nflags, char *err, size_t cap);

/* The groups of flags that several subcommands take, named once. */
#define FLAGS_SELECTION "--workload", "--trace", "--trace-device"
#define FLAGS_STRATEGY "--allocator", "--alloc-conf"
#define FLAGS_DEVICE "--device", "--sim-total", "--sim-usable"
#define FLAGS_LIMIT "--limit", "--cap-bytes", "--oom-message", "--no-infer-cap", "--trust-message"
#define FLAGS_CHECKS "--seed", "--validate", "--strict"

#endif
