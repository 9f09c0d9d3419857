/* options.c - the one parser of every subcommand's option table (options.h).
 *
 * How it reads argv: each "--flag" (or "--flag=value") is looked up in the subcommand's
 * own table; a flag it does not list is exit 2 naming the flag and the subcommand (or
 * "unknown option" when no subcommand takes it). Its value is checked for emptiness (an
 * empty value or list item is exit 2), then stored by the flag's ONE meaning (store()
 * below, shared by every subcommand). Values that depend on other flags (N% of the device
 * total, fractions, --max-reserved) are kept as text and resolved by finish() after the
 * last flag, so the order of flags never matters.
 *
 * Positional arguments (compare's OLD.csv NEW.csv, report's DIR, readspeed's FILE...) are
 * entries of the same table, of type OPT_ARG (exactly one) or OPT_ARGS (zero or more,
 * last): a word that does not start with "-" (and every word after "--") fills the next
 * one, into cli_opts.args[]; a surplus, missing or empty one is exit 2 naming it, and
 * --help lists them under "arguments:".
 *
 * Adding a flag to a subcommand that another subcommand already takes: one entry in that
 * subcommand's table (cli_<name>.c). A new flag: that entry, plus its meaning in store()
 * (and a field in struct cli_opts, cli.h). A new subcommand: a `const struct cmd_def
 * cmd_<name>_def` in its cli_<name>.c (name, synopsis, about, table, function) and one
 * line in cli_commands[] (cli.c); its --help is printed from the table. */
#include "options.h"
#include "limit.h"
#include "cli.h"
#include "instage.h"
#include <stdlib.h>
#include <string.h>

static int bad(const char *cmd, const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "fragbench %s: ", cmd);
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n(see fragbench %s --help)\n", cmd);
  return 2;
}

/* "a,b,,c": each item non-empty (an empty CI variable must not silently drop a value) */
static int check_items(const char *cmd, const char *flag, enum opt_type t, const char *val) {
  if (!val[0] && !strcmp(flag, "--alloc-conf")) return 0;   /* '' = PyTorch's default, as an empty PYTORCH_CUDA_ALLOC_CONF */
  if (!val[0]) return bad(cmd, "%s: empty value%s", flag, "");
  if (t != OPT_LIST && t != OPT_LIMIT) return 0;
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

/* The meaning of every flag, the same on every subcommand that takes it. */
static int store(const char *cmd, struct cli_opts *o, const char *flag, const char *val) {
  uint64_t v;
#define SWITCH(n, field) if (!strcmp(flag, n)) { o->field = 1; return 0; }
  SWITCH("--validate", validate)
  SWITCH("--strict", strict)
  SWITCH("--verify", verify)
  SWITCH("--touch", touch)
  SWITCH("--no-touch", no_touch)
  SWITCH("--quiet", quiet)
  SWITCH("--no-infer-cap", no_infer_cap)
  SWITCH("--trust-message", trust_message)
  SWITCH("--fail-on-oom", fail_on_oom)
#undef SWITCH
  if (!strcmp(flag, "--workload")) return push(cmd, o->workloads, &o->nworkloads, flag, val);
  if (!strcmp(flag, "--trace")) return push(cmd, o->traces, &o->ntraces, flag, val);
  if (!strcmp(flag, "--allocator")) return push(cmd, o->allocators, &o->nallocators, flag, val);
  if (!strcmp(flag, "--alloc-conf")) return cli_add_alloc_conf(o, val);
  if (!strcmp(flag, "--cap")) return add_caps(cmd, o, CAP_FRACTION, flag, val);
  if (!strcmp(flag, "--cap-x")) return add_caps(cmd, o, CAP_X, flag, val);
  if (!strcmp(flag, "--limit") || !strcmp(flag, "--cap-bytes") || !strcmp(flag, "--budget"))
    return add_caps(cmd, o, CAP_BYTES, flag, val);
  if (!strcmp(flag, "--max-reserved")) { o->max_reserved_text = val; return 0; }
  if (!strcmp(flag, "--oom-message")) { o->oom_message = val; return 0; }
  if (!strcmp(flag, "--trace-device")) {
    if (parse_u64(val, &v) || v > 63) return bad(cmd, "--trace-device '%s': expected a device index 0..63%s", val, "");
    o->trace_device = (int)v;
    return 0;
  }
  if (!strcmp(flag, "--device")) {
    if (strcmp(val, "auto") && strcmp(val, "sim") && strcmp(val, "cuda")) return bad(cmd, "--device '%s': expected auto, sim or cuda%s", val, "");
    o->device = val;
    return 0;
  }
  if (!strcmp(flag, "--devices")) { o->devices = val; return 0; }
  if (!strcmp(flag, "--sim-total") || !strcmp(flag, "--sim-usable")) {
    if (parse_bytes(val, 0, &v) || !v) return bad(cmd, "%s '%s': expected a byte size such as 80Gi", flag, val);
    if (v > SIM_TOTAL_MAX) return bad(cmd, "%s '%s': more than the simulated device can model (at most 4 TiB)", flag, val);
    if (flag[6] == 't') o->sim_total = v; else o->sim_usable = v;
    return 0;
  }
  if (!strcmp(flag, "--on-oom")) {
    if (!strcmp(val, "stop")) o->on_oom = ON_OOM_STOP;
    else if (!strcmp(val, "skip")) o->on_oom = ON_OOM_SKIP;
    else return bad(cmd, "--on-oom '%s': expected stop or skip%s", val, "");
    return 0;
  }
  if (!strcmp(flag, "--seed")) { if (parse_u64(val, &o->seed)) return bad(cmd, "--seed '%s': expected a non-negative integer%s", val, ""); return 0; }
  if (!strcmp(flag, "--out")) { o->out = val; return 0; }
  if (!strcmp(flag, "--timeline")) { o->timeline = val; return 0; }
  if (!strcmp(flag, "--breakdown")) { o->breakdown = val; return 0; }
  if (!strcmp(flag, "--at")) { o->at = val; return 0; }
  if (!strcmp(flag, "--plot")) { o->plot = val; return 0; }
  if (!strcmp(flag, "--html")) { o->html = val; return 0; }
  if (!strcmp(flag, "--blocks-csv")) { o->blocks_csv = val; return 0; }
  if (!strcmp(flag, "--confirm-on")) {
    if (strcmp(val, "cuda") && strcmp(val, "sim")) return bad(cmd, "--confirm-on '%s': expected cuda (or sim)%s", val, "");
    o->confirm_on = val;
    return 0;
  }
  if (!strcmp(flag, "--precision")) {
    if (parse_double(val, &o->precision) || o->precision <= 0 || o->precision >= 1) return bad(cmd, "--precision '%s': expected a fraction such as 0.005%s", val, "");
    return 0;
  }
  if (!strcmp(flag, "--threads")) {
    if (parse_u64(val, &v) || !v || v > 256) return bad(cmd, "--threads '%s': expected 1..256%s", val, "");
    o->threads = (int)v;
    return 0;
  }
  if (!strcmp(flag, "--variations")) {
    if (parse_u64(val, &v) || !v || v > 64) return bad(cmd, "--variations '%s': expected 1..64%s", val, "");
    o->variations = (int)v;
    return 0;
  }
  if (!strcmp(flag, "--seconds")) {
    if (parse_double(val, &o->seconds) || o->seconds <= 0) return bad(cmd, "--seconds '%s': expected a positive number%s", val, "");
    if (o->seconds > CLI_SECONDS_MAX) return bad(cmd, "--seconds '%s': at most %s (a day)", val, "86400");
    return 0;
  }
  if (!strcmp(flag, "--vary")) { o->vary = val; return 0; }
  if (!strcmp(flag, "--from") || !strcmp(flag, "--to")) {
    if (parse_u64(val, &v) || !v || v > (1ull << 40)) return bad(cmd, "%s '%s': expected a positive integer", flag, val);
    if (flag[3] == 'r') o->from = v; else o->to = v;
    return 0;
  }
  if (!strcmp(flag, "--margin")) {
    if (parse_bytes(val, 0, &o->margin) || o->margin > CLI_BYTES_MAX) return bad(cmd, "--margin '%s': expected a byte size such as 64Mi or 0%s", val, "");
    o->margin_given = 1;
    return 0;
  }
  if (!strcmp(flag, "--max-increase")) {   /* 1% or 1: percent of OLD */
    char *e;
    double p = strtod(val, &e);
    if (e == val || p < 0 || p != p || p > 1e9 || (*e == '%' && e[1]) || (*e && *e != '%'))
      return bad(cmd, "--max-increase '%s': expected a percentage such as 1%% or 0.5%s", val, "");
    o->max_increase = p / 100.0;
    o->max_increase_given = 1;
    return 0;
  }
  if (!strcmp(flag, "--metric")) return push(cmd, o->metrics, &o->nmetrics, flag, val);
  if (!strcmp(flag, "--tolerance")) { o->tolerance = val; return 0; }
  if (!strcmp(flag, "--junit")) { o->junit = val; return 0; }
  if (!strcmp(flag, "--json")) { o->json = val; return 0; }
  if (!strcmp(flag, "--allow-missing")) { o->allow_missing = 1; return 0; }
  if (!strcmp(flag, "--max-lines")) {
    if (parse_u64(val, &v) || v > 1000000000) return bad(cmd, "--max-lines '%s': expected a count 0..1000000000%s", val, "");
    o->max_lines = (int)v;
    return 0;
  }
  if (!strcmp(flag, "--format")) {
    if (strcmp(val, "png") && strcmp(val, "svg")) return bad(cmd, "--format '%s': expected png or svg%s", val, "");
    o->format = val;
    return 0;
  }
  if (!strcmp(flag, "--events") || !strcmp(flag, "--frames")) {
    if (parse_u64(val, &v) || !v || v > 100000000) return bad(cmd, "%s '%s': expected a count 1..100000000", flag, val);
    if (flag[2] == 'e') o->events = v; else o->frames = (int)v;
    return 0;
  }
  if (!strcmp(flag, "--fail-rate")) {
    if (parse_double(val, &o->fail_rate) || o->fail_rate < 0 || o->fail_rate > 1) return bad(cmd, "--fail-rate '%s': expected a probability in [0, 1]%s", val, "");
    return 0;
  }
  return bad(cmd, "%s: no meaning defined for it (options.c store())%s", flag, "");
}

/* the flags that may be given more than once: each adds one more (an input, a strategy, a
 * cap, a column); every other flag with a value given twice is refused, not silently
 * taken at its last value */
static int repeatable(const char *flag) {
  static const char *const many[] = {"--workload", "--trace", "--allocator", "--alloc-conf", "--cap", "--cap-x", "--limit",
                                     "--cap-bytes", "--budget", "--metric"};
  for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
    if (!strcmp(flag, many[i])) return 1;
  return 0;
}

/* The type store() gives each flag: the tables must agree. */
static const struct { const char *flag; enum opt_type type; } types[] = {
  {"--validate", OPT_SWITCH}, {"--strict", OPT_SWITCH}, {"--verify", OPT_SWITCH}, {"--touch", OPT_SWITCH},
  {"--no-touch", OPT_SWITCH}, {"--quiet", OPT_SWITCH}, {"--no-infer-cap", OPT_SWITCH}, {"--trust-message", OPT_SWITCH}, {"--fail-on-oom", OPT_SWITCH},
  {"--workload", OPT_TEXT}, {"--trace", OPT_TEXT}, {"--allocator", OPT_TEXT}, {"--alloc-conf", OPT_TEXT},
  {"--cap", OPT_LIST}, {"--cap-x", OPT_LIST}, {"--limit", OPT_LIMIT}, {"--cap-bytes", OPT_LIMIT}, {"--budget", OPT_LIMIT},
  {"--max-reserved", OPT_BYTES}, {"--oom-message", OPT_TEXT}, {"--trace-device", OPT_COUNT}, {"--device", OPT_TEXT},
  {"--devices", OPT_LIST}, {"--sim-total", OPT_BYTES}, {"--sim-usable", OPT_BYTES}, {"--on-oom", OPT_TEXT},
  {"--seed", OPT_COUNT}, {"--out", OPT_TEXT}, {"--timeline", OPT_TEXT}, {"--breakdown", OPT_TEXT}, {"--at", OPT_TEXT},
  {"--plot", OPT_TEXT}, {"--html", OPT_TEXT}, {"--blocks-csv", OPT_TEXT}, {"--confirm-on", OPT_TEXT}, {"--precision", OPT_NUMBER}, {"--threads", OPT_COUNT}, {"--variations", OPT_COUNT},
  {"--seconds", OPT_NUMBER}, {"--fail-rate", OPT_NUMBER},
  {"--vary", OPT_TEXT}, {"--from", OPT_COUNT}, {"--to", OPT_COUNT}, {"--margin", OPT_BYTES},
  {"--max-increase", OPT_NUMBER}, {"--metric", OPT_LIST}, {"--tolerance", OPT_TEXT}, {"--junit", OPT_TEXT},
  {"--json", OPT_TEXT}, {"--allow-missing", OPT_SWITCH}, {"--max-lines", OPT_COUNT}, {"--format", OPT_TEXT},
  {"--events", OPT_COUNT}, {"--frames", OPT_COUNT},
};

int opts_flag_type(const char *flag) {
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (!strcmp(types[i].flag, flag)) return (int)types[i].type;
  return -1;
}

static const struct opt_def *find(const struct cmd_def *c, const char *flag) {
  for (const struct opt_def *d = c->opts; d && d->flag; d++)
    if (!OPT_IS_ARG(d) && !strcmp(d->flag, flag)) return d;
  return NULL;
}

/* the foreign flag's message: which subcommands do take it */
static int foreign(const struct cmd_def *c, const char *flag) {
  char who[256] = "";
  size_t n = 0;
  for (int i = 0; cli_commands[i]; i++)
    if (find(cli_commands[i], flag) && n < sizeof who)
      n += (size_t)snprintf(who + n, sizeof who - n, "%s%s", n ? ", " : "", cli_commands[i]->name);
  if (!n && opts_flag_type(flag) < 0) {
    char msg[512];
    struct lookup l;
    lookup_begin(&l, msg, sizeof msg, "option", flag);
    for (const struct opt_def *d = c->opts; d && d->flag; d++)
      if (!OPT_IS_ARG(d)) lookup_known(&l, d->flag);
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
  for (const struct opt_def *d = c->opts; d && d->flag && k < n; d++)
    if (OPT_IS_ARG(d)) k += (size_t)snprintf(out + k, n - k, d->type == OPT_ARGS ? "%s[%s...]" : "%s%s", k ? " " : "", d->flag);
}

/* the next positional argument: where the table has room for it, and not empty */
static int add_arg(const struct cmd_def *c, struct cli_opts *o, const char *arg) {
  int slots = 0;
  const struct opt_def *which = NULL;
  for (const struct opt_def *d = c->opts; d && d->flag && !which; d++) {
    if (d->type == OPT_ARGS) which = d;
    else if (d->type == OPT_ARG && slots++ == o->nargs) which = d;
  }
  char names[256];
  arg_names(c, names, sizeof names);
  if (!which) {
    if (!names[0]) return bad(c->name, "unexpected argument '%s'%s", arg, "");
    return bad(c->name, "unexpected argument '%s': give %s", arg, names);
  }
  if (!arg[0]) return bad(c->name, "an empty argument where %s goes%s", which->flag, "");
  if (o->nargs >= CLI_MAX) return bad(c->name, "%s: at most %s of them", which->flag, "64");
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
  o->device = "auto";
  o->trace_device = -1;
  o->seed = 1;
  o->precision = 0.005;
  o->threads = 2;
  o->seconds = 2;
  o->max_lines = 200;
  o->format = "png";
  o->events = 400000;
  o->frames = 25;
  int only_args = 0;   /* after "--": every word is a positional argument */
  const char *given[128];   /* the single-valued flags seen so far (their table's names) */
  int ngiven = 0;
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
    const struct opt_def *d = find(c, flag);
    if (!d) return foreign(c, flag);
    if (d->type == OPT_SWITCH) {
      if (eq) return bad(c->name, "%s takes no value%s", flag, "");
    } else if (!repeatable(d->flag)) {
      for (int k = 0; k < ngiven; k++)
        if (given[k] == d->flag) return bad(c->name, "%s given twice: give it once%s", flag, "");
      if (ngiven < (int)(sizeof given / sizeof given[0])) given[ngiven++] = d->flag;
    }
    if (d->type != OPT_SWITCH) {
      if (eq) val = eq + 1;
      else if (i + 1 < argc) val = argv[++i];
      else return bad(c->name, "%s needs a value (%s)", flag, d->value ? d->value : "");
      if (check_items(c->name, flag, d->type, val)) return 2;
      if (d->type != OPT_LIST && d->type != OPT_LIMIT && strchr(val, ',') && d->type != OPT_TEXT)
        return bad(c->name, "%s '%s': one value, not a list", flag, val);
    }
    if (store(c->name, o, d->flag, val)) return 2;   /* d->flag: static, kept in caps[].flag */
  }
  int need = 0;
  const struct opt_def *missing = NULL;
  for (const struct opt_def *d = c->opts; d && d->flag; d++)
    if (d->type == OPT_ARG && need++ == o->nargs) missing = d;
  if (missing) {
    char names[256];
    arg_names(c, names, sizeof names);
    return bad(c->name, "missing %s: give %s", missing->flag, names);
  }
  return finish(c, o);
}

static void print_opt(FILE *f, const struct opt_def *d) {
  char left[64];
  snprintf(left, sizeof left, "%s%s%s", d->flag, d->value ? " " : "", d->value ? d->value : "");
  fprintf(f, "  %-28s", left);
  if (strlen(left) > 28) fprintf(f, "\n  %-28s", "");
  for (const char *p = d->help; *p; p++) {
    fputc(*p, f);
    if (*p == '\n') fprintf(f, "  %-28s", "");
  }
  fputc('\n', f);
}

void opts_help(const struct cmd_def *c, FILE *f) {
  fprintf(f, "usage: fragbench %s %s\n", c->name, c->synopsis);
  if (c->about && c->about[0]) fprintf(f, "\n%s", c->about);
  int nargs = 0;
  for (const struct opt_def *d = c->opts; d && d->flag; d++) {
    if (!OPT_IS_ARG(d)) continue;
    if (!nargs++) fprintf(f, "\narguments:\n");
    char name[64];
    snprintf(name, sizeof name, d->type == OPT_ARGS ? "%s..." : "%s", d->flag);
    print_opt(f, &(struct opt_def){name, OPT_SWITCH, NULL, d->help});
  }
  fprintf(f, "\noptions:\n");
  for (const struct opt_def *d = c->opts; d && d->flag; d++)
    if (!OPT_IS_ARG(d)) print_opt(f, d);
  print_opt(f, &(struct opt_def){"--help", OPT_SWITCH, NULL, "this text"});
  if (c->epilog) fprintf(f, "\n%s", c->epilog);
}
