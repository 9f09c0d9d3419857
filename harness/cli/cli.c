/* cli.c - `fragbench` entry: subcommand dispatch and the top-level --help. Each
 * subcommand lists the flags it takes beside it (cli_<name>.c; each flag is one entry of
 * flags.def); options.c parses argv against them (see options.c's top comment for adding
 * a flag or a subcommand). */
#include "cli.h"
#include "options.h"
#include "inputs.h"
#include "alloc_conf.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct cmd_def cmd_run_def, cmd_mincap_def, cmd_device_def, cmd_stress_def, cmd_export_def,
    cmd_advise_def, cmd_explain_def, cmd_fit_def, cmd_list_def, cmd_perf_def, cmd_report_def, cmd_compare_def,
    cmd_readspeed_def, cmd_history_def, cmd_percall_def;
/* every subcommand, parsed from its table, in --help order */
const struct cmd_def *const cli_commands[] = {
  &cmd_run_def, &cmd_mincap_def, &cmd_device_def, &cmd_stress_def, &cmd_export_def, &cmd_advise_def,
  &cmd_explain_def, &cmd_fit_def, &cmd_list_def, &cmd_perf_def, &cmd_report_def, &cmd_compare_def,
  &cmd_readspeed_def, &cmd_history_def, &cmd_percall_def, NULL,
};

static void print_usage(FILE *f) {
  fprintf(f, "fragbench - a stress-test and fragmentation benchmark for GPU memory allocators\n\nusage:\n");
  for (int i = 0; cli_commands[i]; i++) fprintf(f, "  fragbench %-8s %s\n", cli_commands[i]->name, cli_commands[i]->synopsis);
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

int cli_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  int k = 0;
  while (cli_commands[k] && strcmp(cli_commands[k]->name, argv[1])) k++;
  if (!cli_commands[k]) {
    char msg[512];
    struct lookup l;
    lookup_begin(&l, msg, sizeof msg, "command", argv[1]);
    for (int i = 0; cli_commands[i]; i++) lookup_known(&l, cli_commands[i]->name);
    fprintf(stderr, "fragbench: %s\n(see fragbench --help)\n", lookup_text(&l));
    return 2;
  }
  struct cli_opts *o = malloc(sizeof *o);
  if (!o) { fprintf(stderr, "fragbench: out of host memory\n"); return 1; }
  int rc = opts_parse(cli_commands[k], argc, argv, o);
  if (!rc) {
    inputs_begin();   /* each trace the command replays is read once (inputs.h) */
    rc = cli_commands[k]->fn(o);
    inputs_end();
  } else if (rc < 0) rc = 0;   /* --help */
  /* what went to standard output (the CSV, the answer) must have arrived: a failed write
   * (a full disk, /dev/full, a closed pipe) is an error, not a silent exit 0 */
  if (fflush(stdout) || ferror(stdout)) {
    fprintf(stderr, "fragbench %s: writing to standard output failed: %s\n", argv[1], strerror(errno ? errno : EIO));
    if (rc < 2) rc = 2;
  }
  free(o);
  return rc;
}
