/* options.c - the one parser of every subcommand's command line, and the flag table it
 * reads: flags.def, expanded here into opts_flags[] (name, value type, help), the defaults
 * and store() (each flag's check and field), so a flag is declared in one place.
 *
 * How it reads argv: each "--flag" (or "--flag=value") must be named in the subcommand's
 * list (cmd_def.flags); a flag it does not list is exit 2 naming the flag and the
 * subcommand (or "unknown option" when no subcommand takes it). Its value is checked for
 * emptiness (an empty value or list item is exit 2), then stored by the flag's ONE entry
 * (the same on every subcommand). Values that depend on other flags (N% of the device
 * total, fractions, --max-reserved) are kept as text and resolved by finish() after the
 * last flag, so the order of flags never matters.
 *
 * Positional arguments (compare's OLD.csv NEW.csv, report's DIR, readspeed's FILE...) are
 * the subcommand's args[] (cmd_def.args): a word that does not start with "-" (and every
 * word after "--") fills the next one, into cli_opts.args[]; a surplus, missing or empty
 * one is exit 2 naming it, and --help lists them under "arguments:".
 *
 * Adding a flag to a subcommand: its name in that subcommand's list (cli_<name>.c). A new
 * flag: one entry in flags.def (name, value, field, default, check, help), and its name in
 * the lists of the commands that take it. A new subcommand: a `const struct cmd_def
 * cmd_<name>_def` in its cli_<name>.c (name, synopsis, about, flag list, function) and one
 * line in cli_commands[] (cli.c); its --help is printed from its list and the table. */
#include "options.h"
#include "limit.h"
#include "cli.h"
#include "instage.h"
#include "fit.h"   /* FIT_MARGIN_TEXT, in --margin's help */
#include <stdlib.h>
#include <string.h>

static int bad(const char *cmd, const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "fragbench %s: ", cmd);
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n(see fragbench %s --help)\n", cmd);
  return 2;
}

/* "a,b,,c": each item non-empty (an empty CI variable must not silently drop a value) */
static int check_items(const char *cmd, const struct flag_def *d, const char *val) {
  const char *flag = d->flag;
  if (!val[0] && (d->props & FLAG_EMPTY_OK)) return 0;   /* --alloc-conf '' = PyTorch's default, as an empty PYTORCH_CUDA_ALLOC_CONF */
  if (!val[0]) return bad(cmd, "%s: empty value%s", flag, "");
  if (d->type != OPT_LIST && d->type != OPT_LIMIT) return 0;
  size_t n = strlen(val);
  if (val[0] == ',' || val[n - 1] == ',' || strstr(val, ",,")) return bad(cmd, "%s '%s': an empty item in the list", flag, val);
  return 0;
}

/* one cap per item of a comma list, kept as text until finish() */
static int add_caps(const char *cmd, struct cli_opts *o, enum cap_kind kind, const char *flag, const char *list) {
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (o->ncaps >= CLI_MAX) return bad(cmd, "%s: at most %s caps", flag, "64");
    struct cap *c = &o->caps[o->ncaps++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->flag = flag;
    if (n >= sizeof c->text) return bad(cmd, "%s '%s': item too long", flag, list);
    memcpy(c->text, p, n);
    c->text[n] = 0;
    p += n + (e ? 1 : 0);
  }
  return 0;
}

static int push(const char *cmd, const char **arr, int *n, const char *flag, const char *val) {
  if (*n >= CLI_MAX) return bad(cmd, "%s: at most %s of them", flag, "64");
  arr[(*n)++] = val;
  return 0;
}

/* the CHECKED and HOOK entries' functions (flags.def) */
static int sim_bytes(const char *cmd, const char *flag, const char *val, uint64_t *to) {
  uint64_t v;
  if (parse_bytes(val, 0, &v) || !v) return bad(cmd, "%s '%s': expected a byte size such as 80Gi", flag, val);
  if (v > SIM_TOTAL_MAX) return bad(cmd, "%s '%s': more than the simulated device can model (at most 4 TiB)", flag, val);
  *to = v;
  return 0;
}
static int seconds(const char *cmd, const char *flag, const char *val, double *to) {
  if (parse_double(val, to) || *to <= 0) return bad(cmd, "%s '%s': expected a positive number", flag, val);
  if (*to > CLI_SECONDS_MAX) return bad(cmd, "%s '%s': at most 86400 (a day)", flag, val);
  return 0;
}
static int margin_bytes(const char *cmd, const char *flag, const char *val, uint64_t *to) {
  if (parse_bytes(val, 0, to) || *to > CLI_BYTES_MAX) return bad(cmd, "%s '%s': expected a byte size such as 64Mi or 0", flag, val);
  return 0;
}
static int percent(const char *cmd, const char *flag, const char *val, double *to) {   /* 1% or 1: percent of OLD */
  char *e;
  double p = strtod(val, &e);
  if (e == val || p < 0 || p != p || p > 1e9 || (*e == '%' && e[1]) || (*e && *e != '%'))
    return bad(cmd, "%s '%s': expected a percentage such as 1%% or 0.5", flag, val);
  *to = p / 100.0;
  return 0;
}
static int alloc_conf(const char *cmd, struct cli_opts *o, const char *flag, const char *val) {
  (void)cmd, (void)flag;
  return cli_add_alloc_conf(o, val);
}

/* the flag table: flags.def's entries, in order */
const struct flag_def opts_flags[] = {
#define SWITCH(id, flag, help) {flag, OPT_SWITCH, NULL, help, 0},
#define TEXT(id, flag, type, value, help) {flag, type, value, help, 0},
#define WORD(id, flag, value, dflt, words, expect, help) {flag, OPT_TEXT, value, help, 0},
#define ENUM(id, ctype, flag, value, words, expect, help) {flag, OPT_TEXT, value, help, 0},
#define PUSH(id, flag, type, value, help) {flag, type, value, help, FLAG_REPEAT},
#define CAP(id, kind, flag, type, value, help) {flag, type, value, help, FLAG_REPEAT},
#define UINT(id, ctype, flag, value, dflt, ok, expect, help) {flag, OPT_COUNT, value, help, 0},
#define REAL(id, flag, value, dflt, ok, expect, help) {flag, OPT_NUMBER, value, help, 0},
#define CHECKED(id, ctype, flag, type, value, dflt, fn, help) {flag, type, value, help, 0},
#define HOOK(id, flag, type, value, fn, props, help) {flag, type, value, help, props},
#include "flags.def"
#include "flags_undef.h"
};
const int opts_nflags = (int)(sizeof opts_flags / sizeof opts_flags[0]);
_Static_assert(sizeof opts_flags / sizeof opts_flags[0] == FLAGS_N, "one flag_def per flags.def entry");

/* each flag's default (flags.def), after the memset */
static void defaults(struct cli_opts *o) {
#define SWITCH(id, ...)
#define TEXT(id, ...)
#define WORD(id, flag, value, dflt, ...) o->id = dflt;
#define ENUM(id, ...)
#define PUSH(id, ...)
#define CAP(id, ...)
#define UINT(id, ctype, flag, value, dflt, ...) o->id = dflt;
#define REAL(id, flag, value, dflt, ...) o->id = dflt;
#define CHECKED(id, ctype, flag, type, value, dflt, ...) o->id = dflt;
#define HOOK(id, ...)
#include "flags.def"
#include "flags_undef.h"
}

/* The meaning of every flag, the same on every subcommand that takes it: its entry's check
 * and field (flags.def). */
static int store(const char *cmd, struct cli_opts *o, enum flag_id id, const char *val) {
  const char *flag = opts_flags[id].flag;   /* static: kept in caps[].flag */
  int w;
  (void)w;
  switch (id) {
#define SWITCH(id, ...) case FLAG_##id: o->id = 1; return 0;
#define TEXT(id, ...) case FLAG_##id: o->id = val; return 0;
#define WORD(id, flag_, value, dflt, words, expect, help) \
  case FLAG_##id: \
    if (params_word_index(words, val) < 0) return bad(cmd, "%s '%s': " expect, flag, val); \
    o->id = val; \
    return 0;
#define ENUM(id, ctype, flag_, value, words, expect, help) \
  case FLAG_##id: \
    if ((w = params_word_index(words, val)) < 0) return bad(cmd, "%s '%s': " expect, flag, val); \
    o->id = (ctype)w; \
    return 0;
#define PUSH(id, ...) case FLAG_##id: return push(cmd, o->id, &o->n##id, flag, val);
#define CAP(id, kind, ...) case FLAG_##id: return add_caps(cmd, o, kind, flag, val);
#define UINT(id, ctype, flag_, value, dflt, ok, expect, help) \
  case FLAG_##id: { \
    uint64_t v; \
    if (parse_u64(val, &v) || !(ok)) return bad(cmd, "%s '%s': " expect, flag, val); \
    o->id = (ctype)v; \
    return 0; \
  }
#define REAL(id, flag_, value, dflt, ok, expect, help) \
  case FLAG_##id: { \
    double v; \
    if (parse_double(val, &v) || !(ok)) return bad(cmd, "%s '%s': " expect, flag, val); \
    o->id = v; \
    return 0; \
  }
#define CHECKED(id, ctype, flag_, type, value, dflt, fn, help) case FLAG_##id: return fn(cmd, flag, val, &o->id);
#define HOOK(id, flag_, type, value, fn, ...) case FLAG_##id: return fn(cmd, o, flag, val);
#include "flags.def"
#include "flags_undef.h"
  case FLAGS_N: break;
  }
  return bad(cmd, "%s: no meaning defined for it (flags.def)%s", flag, "");
}

const struct flag_def *opts_flag(const char *flag) {
  for (int i = 0; i < opts_nflags; i++)
    if (!strcmp(opts_flags[i].flag, flag)) return &opts_flags[i];
  return NULL;
}

int opts_takes(const struct cmd_def *c, const char *flag) {
  for (const char *const *n = c->flags; n && *n; n++)
    if (!strcmp(*n, flag)) return 1;
  return 0;
}

/* the entry of a flag command c takes; NULL when it does not take it */
static const struct flag_def *find(const struct cmd_def *c, const char *flag) {
  return opts_takes(c, flag) ? opts_flag(flag) : NULL;
}

/* the foreign flag's message: which subcommands do take it */
static int foreign(const struct cmd_def *c, const char *flag) {
  char who[256] = "";
  size_t n = 0;
  for (int i = 0; cli_commands[i]; i++)
    if (find(cli_commands[i], flag) && n < sizeof who)
      n += (size_t)snprintf(who + n, sizeof who - n, "%s%s", n ? ", " : "", cli_commands[i]->name);
  if (!n && !opts_flag(flag)) {
    char msg[512];
    struct lookup l;
    lookup_begin(&l, msg, sizeof msg, "option", flag);
    for (const char *const *f = c->flags; f && *f; f++) lookup_known(&l, *f);
    return bad(c->name, "%s%s", lookup_text(&l), "");
  }
  fprintf(stderr, "fragbench %s: %s is not a %s option%s%s%s\n(see fragbench %s --help)\n", c->name, flag, c->name,
          n ? " (it is for: " : "", n ? who : "", n ? ")" : "", c->name);
  return 2;
}

/* "OLD.csv NEW.csv", "[FILE...]": the positional arguments as the usage line names them */
static void arg_names(const struct cmd_def *c, char *out, size_t n) {
  size_t k = 0;
  out[0] = 0;
  for (const struct arg_def *d = c->args; d && d->name && k < n; d++)
    k += (size_t)snprintf(out + k, n - k, d->many ? "%s[%s...]" : "%s%s", k ? " " : "", d->name);
}

/* the next positional argument: where the command's args[] has room for it, and not empty */
static int add_arg(const struct cmd_def *c, struct cli_opts *o, const char *arg) {
  int slots = 0;
  const struct arg_def *which = NULL;
  for (const struct arg_def *d = c->args; d && d->name && !which; d++) {
    if (d->many) which = d;
    else if (slots++ == o->nargs) which = d;
  }
  char names[256];
  arg_names(c, names, sizeof names);
  if (!which) {
    if (!names[0]) return bad(c->name, "unexpected argument '%s'%s", arg, "");
    return bad(c->name, "unexpected argument '%s': give %s", arg, names);
  }
  if (!arg[0]) return bad(c->name, "an empty argument where %s goes%s", which->name, "");
  if (o->nargs >= CLI_MAX) return bad(c->name, "%s: at most %s of them", which->name, "64");
  o->args[o->nargs++] = arg;
  return 0;
}

/* a limit: a fraction of the device (0.25, N%) or bytes, read by limit_parse (limit.h) */
static int finish_cap(const char *cmd, struct cap *c, uint64_t base) {
  if (c->kind == CAP_X) {
    if (parse_double(c->text, &c->value) || c->value <= 0) return bad(cmd, "%s '%s': expected a positive multiple such as 1.25", c->flag, c->text);
    if (c->value > 1e6) return bad(cmd, "%s '%s': at most 1000000 times the peak requested", c->flag, c->text);
    return 0;
  }
  struct limit_text lt;
  char err[600];
  if (limit_parse(c->flag, c->text, c->kind == CAP_FRACTION, base, CLI_BYTES_MAX, &lt, err, sizeof err)) return bad(cmd, "%s%s", err, "");
  if (lt.fraction) { c->kind = CAP_FRACTION; c->value = lt.value; }
  c->bytes = lt.bytes;
  return 0;
}

static int finish(const struct cmd_def *c, struct cli_opts *o) {
  uint64_t base = o->sim_total ? o->sim_total : SIM_TOTAL_DEFAULT;
  for (int i = 0; i < o->ncaps; i++)
    if (finish_cap(c->name, &o->caps[i], base)) return 2;
  /* a limit above the simulated device's total: refused where the device is the simulated one */
  int sim = !strcmp(o->device, "sim") || !strcmp(c->name, "advise") || !strcmp(c->name, "explain") || (!strcmp(c->name, "fit") && !strcmp(o->device, "auto"));
  for (int i = 0; sim && i < o->ncaps; i++)
    if (o->caps[i].kind == CAP_BYTES && o->caps[i].bytes > base) {
      char a[32], b[32];
      fprintf(stderr, "fragbench %s: %s %s: %s is above the simulated device's total %s (--sim-total sets it)\n", c->name, o->caps[i].flag,
              o->caps[i].text, fmt_bytes(o->caps[i].bytes, a, sizeof a), fmt_bytes(base, b, sizeof b));
      return 2;
    }
  if (o->max_reserved_text) {
    if (parse_bytes(o->max_reserved_text, base, &o->max_reserved) || !o->max_reserved)
      return bad(c->name, "--max-reserved '%s': expected a byte size such as 40G, 38Gi or 40000000000%s", o->max_reserved_text, "");
    if (o->max_reserved > CLI_BYTES_MAX) return bad(c->name, "--max-reserved '%s': more than any device holds (at most 64 TiB)%s", o->max_reserved_text, "");
  }
  if (o->sim_usable && o->sim_total && o->sim_usable > o->sim_total)
    return bad(c->name, "--sim-usable is more than --sim-total%s%s", "", "");
  if (o->touch && o->no_touch) return bad(c->name, "--touch and --no-touch: give one of them%s%s", "", "");
  if (cli_check_files(o)) return 2;   /* every input against every output, before anything is read */
  if (o->oom_message) {   /* read once too (mincap reads it per input): a copy when a pipe or fifo */
    char err[600];
    const char *p = instage(o->oom_message, err, sizeof err);
    if (!p) { fprintf(stderr, "fragbench %s: --oom-message %s\n", c->name, err); return 2; }
    o->oom_message = p;
  }
  for (int i = 0; i < o->ntraces; i++) {   /* a pipe or fifo is read once, into a copy every reader shares */
    char err[600];
    const char *p = instage(o->traces[i], err, sizeof err);
    if (!p) { fprintf(stderr, "fragbench %s: --trace %s\n", c->name, err); return 2; }
    o->traces[i] = p;
  }
  return 0;
}

uint64_t cli_limit_on(const struct cli_opts *o, const struct device_config *cfg) {
  for (int i = 0; i < o->ncaps; i++)
    if (o->caps[i].kind != CAP_X) {
      int fraction = o->caps[i].kind == CAP_FRACTION;
      return limit_on_device(fraction, o->caps[i].value, o->caps[i].bytes, fraction ? limit_device_total(cfg) : 0);
    }
  return 0;
}

int opts_parse(const struct cmd_def *c, int argc, char **argv, struct cli_opts *o) {
  memset(o, 0, sizeof *o);
  o->cmd = c->name;
  defaults(o);
  int only_args = 0;   /* after "--": every word is a positional argument */
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i], *val = NULL;
    if (!only_args && (!strcmp(arg, "--help") || !strcmp(arg, "-h"))) { opts_help(c, stdout); return -1; }
    if (!only_args && !strcmp(arg, "--")) { only_args = 1; continue; }
    if (only_args || strncmp(arg, "-", 1) || !arg[1]) {   /* a word, or "-" (stdin) */
      if (add_arg(c, o, arg)) return 2;
      continue;
    }
    if (strncmp(arg, "--", 2) || !arg[2]) return bad(c->name, "unknown option '%s'%s", arg, "");
    char flag[64];
    const char *eq = strchr(arg, '=');
    size_t fl = eq ? (size_t)(eq - arg) : strlen(arg);
    if (fl >= sizeof flag) return bad(c->name, "unknown option '%.60s...'%s", arg, "");
    memcpy(flag, arg, fl);
    flag[fl] = 0;
    const struct flag_def *d = find(c, flag);
    if (!d) return foreign(c, flag);
    enum flag_id id = (enum flag_id)(d - opts_flags);
    if (d->type == OPT_SWITCH) {
      if (eq) return bad(c->name, "%s takes no value%s", flag, "");
    } else if (!(d->props & FLAG_REPEAT) && o->given[id]) {
      return bad(c->name, "%s given twice: give it once%s", flag, "");
    }
    if (o->given[id] < 255) o->given[id]++;
    if (d->type != OPT_SWITCH) {
      if (eq) val = eq + 1;
      else if (i + 1 < argc) val = argv[++i];
      else return bad(c->name, "%s needs a value (%s)", flag, d->value ? d->value : "");
      if (check_items(c->name, d, val)) return 2;
      if (d->type != OPT_LIST && d->type != OPT_LIMIT && strchr(val, ',') && d->type != OPT_TEXT)
        return bad(c->name, "%s '%s': one value, not a list", flag, val);
    }
    if (store(c->name, o, id, val)) return 2;
  }
  int need = 0;
  const struct arg_def *missing = NULL;
  for (const struct arg_def *d = c->args; d && d->name; d++)
    if (!d->many && need++ == o->nargs) missing = d;
  if (missing) {
    char names[256];
    arg_names(c, names, sizeof names);
    return bad(c->name, "missing %s: give %s", missing->name, names);
  }
  return finish(c, o);
}

static void print_opt(FILE *f, const char *flag, const char *value, const char *help) {
  char left[64];
  snprintf(left, sizeof left, "%s%s%s", flag, value ? " " : "", value ? value : "");
  fprintf(f, "  %-28s", left);
  if (strlen(left) > 28) fprintf(f, "\n  %-28s", "");
  for (const char *p = help; *p; p++) {
    fputc(*p, f);
    if (*p == '\n') fprintf(f, "  %-28s", "");
  }
  fputc('\n', f);
}

void opts_help(const struct cmd_def *c, FILE *f) {
  fprintf(f, "usage: fragbench %s %s\n", c->name, c->synopsis);
  if (c->about && c->about[0]) fprintf(f, "\n%s", c->about);
  int nargs = 0;
  for (const struct arg_def *d = c->args; d && d->name; d++) {
    if (!nargs++) fprintf(f, "\narguments:\n");
    char name[64];
    snprintf(name, sizeof name, d->many ? "%s..." : "%s", d->name);
    print_opt(f, name, NULL, d->help);
  }
  fprintf(f, "\noptions:\n");
  for (const char *const *n = c->flags; n && *n; n++) {
    const struct flag_def *d = opts_flag(*n);
    if (d) print_opt(f, d->flag, d->value, d->help);
  }
  print_opt(f, "--help", NULL, "this text");
  if (c->epilog) fprintf(f, "\n%s", c->epilog);
}
