/* cli.c - `fragbench` entry: subcommand dispatch and the top-level --help. Each
 * subcommand declares its option table beside it (cli_<name>.c); options.c parses argv
 * against it (see options.c's top comment for adding a flag or a subcommand). */
#include "cli.h"
#include "options.h"
#include "alloc_conf.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct cmd_def cmd_run_def, cmd_mincap_def, cmd_device_def, cmd_stress_def, cmd_export_def,
    cmd_advise_def, cmd_explain_def, cmd_list_def, cmd_perf_def;
/* every subcommand parsed from its table, in --help order */
const struct cmd_def *const cli_commands[] = {
  &cmd_run_def, &cmd_mincap_def, &cmd_device_def, &cmd_stress_def, &cmd_export_def, &cmd_advise_def,
  &cmd_explain_def, &cmd_list_def, &cmd_perf_def, NULL,
};
/* those that read their own arguments (files and folders, not a selection) */
static const char *const own_args[][2] = {
  {"report", "DIR [--format png|svg]   report.md and the plot data of a bench run folder"},
  {"compare", "OLD.csv NEW.csv [--max-increase 1%] [--metric COLS] [--junit FILE.xml] [--json FILE]\n"
              "                   regression check; exit 1 when worse"},
  {"readspeed", "[--events N] [--frames K] [FILE...]   snapshot reading MB/s"},
};

static void print_usage(FILE *f) {
  fprintf(f, "fragbench - a stress-test and fragmentation benchmark for GPU memory allocators\n\nusage:\n");
  for (int i = 0; cli_commands[i]; i++) fprintf(f, "  fragbench %-8s %s\n", cli_commands[i]->name, cli_commands[i]->synopsis);
  for (size_t i = 0; i < sizeof own_args / sizeof own_args[0]; i++) fprintf(f, "  fragbench %-8s %s\n", own_args[i][0], own_args[i][1]);
  fprintf(f, "\n`fragbench COMMAND --help` lists every flag COMMAND takes. run's:\n\n");
  opts_help(&cmd_run_def, f);
}

/* --alloc-conf 'expandable_segments:True,max_split_size_mb:128' (PyTorch's own string;
 * `env` reads PYTORCH_CUDA_ALLOC_CONF) becomes one more --allocator */
int cli_add_alloc_conf(struct cli_opts *o, const char *val) {
  if (o->nallocators >= CLI_MAX) { fprintf(stderr, "fragbench: too many --allocator/--alloc-conf\n"); return 2; }
  const char *conf = val;
  if (!strcmp(val, "env")) {
    conf = getenv("PYTORCH_CUDA_ALLOC_CONF");
    if (!conf) conf = getenv("PYTORCH_ALLOC_CONF");   /* newer PyTorch's device-generic name */
    if (!conf) conf = "";                      /* unset: PyTorch's default, the caching allocator */
  }
  char *spec = o->conf_spec[o->nconf], ignored[400], err[FB_ERRLEN];
  if (!conf[0]) snprintf(spec, sizeof o->conf_spec[0], "caching");
  else if (alloc_conf_to_spec(conf, spec, sizeof o->conf_spec[0], ignored, sizeof ignored, err)) {
    fprintf(stderr, "fragbench: --alloc-conf%s: %s\n(see fragbench --help)\n", strcmp(val, "env") ? "" : " env", err);
    return 2;
  } else if (ignored[0]) {
    fprintf(stderr, "fragbench: --alloc-conf: %s: no effect on device memory in this model; ignored\n", ignored);
  }
  o->allocators[o->nallocators++] = spec;
  o->nconf++;
  return 0;
}

int trace_bench_main(int argc, char **argv);
int cmd_report_main(int argc, char **argv);
int cmd_compare_main(int argc, char **argv);

/* readspeed reads its own arguments (workloads/trace_bench.c); its flags are checked here
 * first so that a foreign or empty one is exit 2 like everywhere else, not a file name */
static int readspeed_check(int argc, char **argv) {
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) continue;
    if (!strcmp(a, "--events") || !strcmp(a, "--frames")) {
      uint64_t v;
      if (i + 1 >= argc) { fprintf(stderr, "fragbench readspeed: %s needs a value (N)\n", a); return 2; }
      if (parse_u64(argv[++i], &v) || !v || v > 100000000) {
        fprintf(stderr, "fragbench readspeed: %s '%s': expected a count 1..100000000\n", a, argv[i]);
        return 2;
      }
      continue;
    }
    if (!strncmp(a, "--", 2)) {
      fprintf(stderr, "fragbench readspeed: unknown option '%s'; known: --events --frames\n(usage: fragbench readspeed %s)\n", a,
              own_args[2][1]);
      return 2;
    }
  }
  return 0;
}

int cli_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "readspeed")) return readspeed_check(argc, argv) ? 2 : trace_bench_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "report")) return cmd_report_main(argc - 1, argv + 1);       /* a folder, its own options */
  if (!strcmp(argv[1], "compare")) return cmd_compare_main(argc - 1, argv + 1);     /* two files, its own options */
  int k = 0;
  while (cli_commands[k] && strcmp(cli_commands[k]->name, argv[1])) k++;
  if (!cli_commands[k]) {
    char msg[512];
    struct lookup l;
    lookup_begin(&l, msg, sizeof msg, "command", argv[1]);
    for (int i = 0; cli_commands[i]; i++) lookup_known(&l, cli_commands[i]->name);
    for (size_t i = 0; i < sizeof own_args / sizeof own_args[0]; i++) lookup_known(&l, own_args[i][0]);
    fprintf(stderr, "fragbench: %s\n(see fragbench --help)\n", lookup_text(&l));
    return 2;
  }
  struct cli_opts *o = malloc(sizeof *o);
  if (!o) { fprintf(stderr, "fragbench: out of host memory\n"); return 1; }
  int rc = opts_parse(cli_commands[k], argc, argv, o);
  if (!rc) rc = cli_commands[k]->fn(o);
  else if (rc < 0) rc = 0;   /* --help */
  free(o);
  return rc;
}
