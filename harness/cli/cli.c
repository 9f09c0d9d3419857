/* cli.c - `fragbench` entry: subcommand dispatch, --help, and option parsing shared by
 * every subcommand (see cli.h). The subcommands live in cli_<name>.c. */
#include "cli.h"
#include "alloc_conf.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"fragbench - a stress-test and fragmentation benchmark for GPU memory allocators\n"
"\n"
"usage:\n"
"  fragbench run    [selection] [options]   replay, one CSV row per workload x allocator x cap\n"
"  fragbench mincap [selection] [--precision 0.005] [--confirm-on cuda]   smallest cap that\n"
"                   completes; --confirm-on replays each found cap (and one step below) on the\n"
"                   GPU and fails loudly where it disagrees with the search's device\n"
"  fragbench device [--device auto|sim|cuda]   the device a run would use: kind, name, total, free\n"
"  fragbench stress --allocator A [--workload W | --trace F] [--threads N] [--seconds S]\n"
"                   [--fail-rate P] [--validate]\n"
"  fragbench export (--workload W | --trace FILE) --out FILE   write the native trace CSV\n"
"  fragbench advise --trace FILE [--budget BYTES] [--out FILE.csv]   the PYTORCH_CUDA_ALLOC_CONF\n"
"                   that needs the least memory, or fits the budget with the least driver time\n"
"                   (fragbench advise --help)\n"
"  fragbench explain --trace FILE [--at oom|peak|EVENT] [--allocator A] [--plot FILE.png|.svg]\n"
"                   the memory at that moment: segments, blocks, why a request did not fit\n"
"                   (fragbench explain --help)\n"
"  fragbench fit --workload GEN --vary PARAM --limit BYTES|N%|FRACTION [--allocator A]...\n"
"                   [--from N --to M] [--margin BYTES] [--plot F.png]   the largest value of\n"
"                   PARAM that completes under the limit, per strategy (fragbench fit --help)\n"
"  fragbench list                            workloads, trace formats, allocators, parameters\n"
"  fragbench perf [--out FILE.csv]           the suite's own speed on sim (make perf)\n"
"  fragbench report DIR [--format png|svg]   report.md and the plot data of a bench run folder\n"
"  fragbench compare OLD.csv NEW.csv [--max-increase 1%] [--metric COLS] [--junit FILE.xml]\n"
"                   [--json FILE] [--tolerance FILE]   regression check; exit 1 when worse\n"
"                   (fragbench compare --help)\n"
"  fragbench readspeed [--events N] [--frames K] [FILE...]   snapshot reading MB/s\n"
"                                            (default: tests/data and a synthetic snapshot)\n"
"\n"
"selection (each may repeat):\n"
"  --workload NAME[:k=v,...]   a synthetic generator (see `fragbench list`)\n"
"  --trace FILE                a PyTorch snapshot (.pickle, .pickle.gz), RMM log or native CSV\n"
"  --trace-device N            which device of a multi-device snapshot (default: each with events)\n"
"  --allocator NAME[:k=v,...]  a strategy; `recorded` = whichever the snapshot used, with the\n"
"                              snapshot's own settings (default: raw); caching and expandable\n"
"                              named here get PyTorch's defaults\n"
"  --alloc-conf CONF           PyTorch's PYTORCH_CUDA_ALLOC_CONF string, e.g.\n"
"                              'expandable_segments:True,max_split_size_mb:128': caching, expandable\n"
"                              or async with those knobs; `env` reads PYTORCH_CUDA_ALLOC_CONF\n"
"                              (or PYTORCH_ALLOC_CONF)\n"
"\n"
"device and memory:\n"
"  --device auto|sim|cuda      auto (default): cuda when a GPU is visible, else sim\n"
"  --devices LIST              0,1 | all | sim:N: one device per rank, one row each + device=all\n"
"  --sim-total BYTES           sim device total (default 85017493504, an H100 80GB)\n"
"  --sim-usable BYTES          what cudaMalloc can get on sim (default 84230209536)\n"
"  --cap F[,F...]              cap reserved memory at fraction F of the device total\n"
"  --cap-bytes N[,N...]        ... at N bytes (K/M/G/T = 1000^n, Ki/Mi/Gi/Ti = 1024^n, or N%)\n"
"  --cap-x M[,M...]            ... at M times the workload's own peak requested\n"
"  --on-oom stop|skip          stop the row at the first OOM (default) or skip that request\n"
"  --no-infer-cap              a snapshot that ended in an OOM replays uncapped (by default, with\n"
"                              no cap given, every strategy replays under the limit the job ran\n"
"                              under, inferred from the snapshot: columns cap_source, cap_lo, cap_hi)\n"
"\n"
"checks and output:\n"
"  --seed N                    generator seed (default 1)\n"
"  --validate                  check every block: no overlap, inside held memory, aligned, counts agree\n"
"  --strict                    skippable bad events (unknown free, double free, zero size) are fatal\n"
"  --touch                     cuda: write every block once after allocation (cudaMemsetAsync); async's\n"
"                              blocks are written so by default, as a program's kernels would\n"
"  --no-touch                  cuda: no write at all, not even async's default one (an idle GPU)\n"
"  --verify                    cuda: write a pattern at allocation and check it at free\n"
"  --out FILE.csv              write the CSV there (default: stdout)\n"
"  --timeline FILE.csv         requested/allocated/reserved over the run: at each ITER on loops of\n"
"                              64+ iterations, else 512..1024 samples spread over the run\n"
"  --quiet                     no table or warnings on stderr\n"
"  --max-reserved BYTES        a gate for CI: exit 1 when a row's peak reserved exceeds BYTES\n"
"  --fail-on-oom               a gate for CI: exit 1 when a row runs out of memory under its cap\n"
"  --breakdown FILE.csv        peak reserved split by stream (the device's count of what each\n"
"                              stream's allocations made it take), one line per row and stream\n"
"\n"
"exit status: 0 every row ran (OOM and skipped rows included); 1 a validator failure, a\n"
"device error, or a row that failed --max-reserved/--fail-on-oom; 2 bad usage or bad input.\n";

static void print_usage(FILE *f) { fputs(usage, f); }

struct command { const char *name; int (*fn)(struct cli_opts *); };
static const struct command commands[] = {
  {"run", cmd_run},
  {"list", cmd_list},
  {"perf", cmd_perf},
  {"export", cmd_export},
  {"mincap", cmd_mincap},
  {"stress", cmd_stress},
  {"advise", cmd_advise},
  {"device", cmd_device},
  {"explain", cmd_explain},
  {"fit", cmd_fit},
  {NULL, NULL},
};

static int bad(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "fragbench: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n(see fragbench --help)\n");
  return 2;
}

/* "0.5,0.75" into caps of one kind */
static int add_caps(struct cli_opts *o, enum cap_kind kind, const char *opt, const char *list) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (o->ncaps >= CLI_MAX) return bad("%s: too many caps%s", opt, "");
    struct cap *c = &o->caps[o->ncaps++];
    c->kind = kind;
    if (kind == CAP_BYTES) {
      uint64_t base = o->sim_total ? o->sim_total : SIM_TOTAL_DEFAULT;
      if (parse_bytes(tok, base, &c->bytes) || !c->bytes)
        return bad("%s '%s': expected a byte size such as 40G, 38Gi, 40000000000 or 50%%", opt, tok);
    } else {
      if (parse_double(tok, &c->value) || c->value <= 0 || (kind == CAP_FRACTION && c->value > 1))
        return bad(kind == CAP_FRACTION ? "%s '%s': expected a fraction in (0, 1]" : "%s '%s': expected a positive multiple such as 1.25", opt, tok);
    }
  }
  return 0;
}

/* --alloc-conf 'expandable_segments:True,max_split_size_mb:128' (PyTorch's own string;
 * `env` reads PYTORCH_CUDA_ALLOC_CONF) becomes one more --allocator */
static int add_alloc_conf(struct cli_opts *o, const char *val) {
  if (o->nallocators >= CLI_MAX) return bad("too many --allocator/--alloc-conf%s%s", "", "");
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

int cli_parse(int argc, char **argv, struct cli_opts *o) {
  memset(o, 0, sizeof *o);
  o->device = "auto";
  o->trace_device = -1;
  o->seed = 1;
  o->precision = 0.005;
  o->threads = 2;
  o->seconds = 2;
  for (int i = 2; i < argc; i++) {
    char *arg = argv[i], *val = NULL;
    char name[64];
    if (strncmp(arg, "--", 2)) return bad("unexpected argument '%s'%s", arg, "");
    snprintf(name, sizeof name, "%s", arg);
    char *eq = strchr(name, '=');
    if (eq) { *eq = 0; val = arg + (eq - name) + 1; }
#define FLAG(n, field) if (!strcmp(name, n)) { if (val) return bad("%s takes no value%s", n, ""); o->field = 1; continue; }
    FLAG("--validate", validate)
    FLAG("--strict", strict)
    FLAG("--verify", verify)
    FLAG("--touch", touch)
    FLAG("--no-touch", no_touch)
    FLAG("--quiet", quiet)
    FLAG("--no-infer-cap", no_infer_cap)
    FLAG("--fail-on-oom", fail_on_oom)
#undef FLAG
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
      if (!strcmp(argv[1], "advise")) advise_usage(stdout);
      else if (!strcmp(argv[1], "explain")) explain_usage(stdout);
      else if (!strcmp(argv[1], "fit")) fit_usage(stdout);
      else print_usage(stdout);
      exit(0);
    }
    if (!val) {
      if (i + 1 >= argc) return bad("%s needs a value%s", name, "");
      val = argv[++i];
    }
    if (!strcmp(name, "--workload")) { if (o->nworkloads >= CLI_MAX) return bad("too many %s%s", name, ""); o->workloads[o->nworkloads++] = val; }
    else if (!strcmp(name, "--trace")) { if (o->ntraces >= CLI_MAX) return bad("too many %s%s", name, ""); o->traces[o->ntraces++] = val; }
    else if (!strcmp(name, "--allocator")) { if (o->nallocators >= CLI_MAX) return bad("too many %s%s", name, ""); o->allocators[o->nallocators++] = val; }
    else if (!strcmp(name, "--alloc-conf")) { if (add_alloc_conf(o, val)) return 2; }
    else if (!strcmp(name, "--breakdown")) o->breakdown = val;
    else if (!strcmp(name, "--max-reserved")) {
      if (parse_bytes(val, 0, &o->max_reserved) || !o->max_reserved) return bad("--max-reserved '%s': expected a byte size such as 40G, 38Gi or 40000000000%s", val, "");
    }
    else if (!strcmp(name, "--budget")) {
      if (parse_bytes(val, 0, &o->budget) || !o->budget) return bad("--budget '%s': expected a byte size such as 40G, 38Gi or 40000000000%s", val, "");
    }
    else if (!strcmp(name, "--trace-device")) {
      uint64_t v;
      if (parse_u64(val, &v) || v > 63) return bad("--trace-device '%s': expected a device index 0..63%s", val, "");
      o->trace_device = (int)v;
    }
    else if (!strcmp(name, "--device")) {
      if (strcmp(val, "auto") && strcmp(val, "sim") && strcmp(val, "cuda")) return bad("--device '%s': expected auto, sim or cuda%s", val, "");
      o->device = val;
    }
    else if (!strcmp(name, "--devices")) o->devices = val;
    else if (!strcmp(name, "--sim-total")) { if (parse_bytes(val, 0, &o->sim_total) || !o->sim_total) return bad("--sim-total '%s': expected a byte size such as 80Gi%s", val, ""); }
    else if (!strcmp(name, "--sim-usable")) { if (parse_bytes(val, 0, &o->sim_usable) || !o->sim_usable) return bad("--sim-usable '%s': expected a byte size such as 78Gi%s", val, ""); }
    else if (!strcmp(name, "--cap")) { if (add_caps(o, CAP_FRACTION, name, val)) return 2; }
    else if (!strcmp(name, "--cap-bytes")) { if (add_caps(o, CAP_BYTES, name, val)) return 2; }
    else if (!strcmp(name, "--cap-x")) { if (add_caps(o, CAP_X, name, val)) return 2; }
    else if (!strcmp(name, "--on-oom")) {
      if (!strcmp(val, "stop")) o->on_oom = ON_OOM_STOP;
      else if (!strcmp(val, "skip")) o->on_oom = ON_OOM_SKIP;
      else return bad("--on-oom '%s': expected stop or skip%s", val, "");
    }
    else if (!strcmp(name, "--seed")) { if (parse_u64(val, &o->seed)) return bad("--seed '%s': expected a non-negative integer%s", val, ""); }
    else if (!strcmp(name, "--out")) o->out = val;
    else if (!strcmp(name, "--at")) o->at = val;
    else if (!strcmp(name, "--plot")) o->plot = val;
    else if (!strcmp(name, "--timeline")) o->timeline = val;
    else if (!strcmp(name, "--vary")) o->vary = val;
    else if (!strcmp(name, "--limit")) o->limit = val;   /* resolved against the device by the command */
    else if (!strcmp(name, "--from")) { if (parse_u64(val, &o->from) || !o->from) return bad("--from '%s': expected a positive integer%s", val, ""); }
    else if (!strcmp(name, "--to")) { if (parse_u64(val, &o->to) || !o->to) return bad("--to '%s': expected a positive integer%s", val, ""); }
    else if (!strcmp(name, "--margin")) { if (parse_bytes(val, 0, &o->margin)) return bad("--margin '%s': expected a byte size such as 64Mi or 0%s", val, ""); o->margin_given = 1; }
    else if (!strcmp(name, "--confirm-on")) {
      if (strcmp(val, "cuda") && strcmp(val, "sim")) return bad("--confirm-on '%s': expected cuda (or sim)%s", val, "");
      o->confirm_on = val;
    }
    else if (!strcmp(name, "--precision")) { if (parse_double(val, &o->precision) || o->precision <= 0 || o->precision >= 1) return bad("--precision '%s': expected a fraction such as 0.005%s", val, ""); }
    else if (!strcmp(name, "--threads")) { uint64_t v; if (parse_u64(val, &v) || !v || v > 256) return bad("--threads '%s': expected 1..256%s", val, ""); o->threads = (int)v; }
    else if (!strcmp(name, "--seconds")) { if (parse_double(val, &o->seconds) || o->seconds <= 0) return bad("--seconds '%s': expected a positive number%s", val, ""); }
    else if (!strcmp(name, "--fail-rate")) { if (parse_double(val, &o->fail_rate) || o->fail_rate < 0 || o->fail_rate > 1) return bad("--fail-rate '%s': expected a probability in [0, 1]%s", val, ""); }
    else return bad("unknown option '%s'%s", name, "");
  }
  if (o->touch && o->no_touch) return bad("--touch and --no-touch: give one of them%s%s", "", "");
  /* fractions of --sim-total given after --cap-bytes N% are resolved against the default total */
  return 0;
}

int trace_bench_main(int argc, char **argv);
int cmd_report_main(int argc, char **argv);
int cmd_compare_main(int argc, char **argv);

int cli_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "readspeed")) return trace_bench_main(argc - 1, argv + 1);   /* its own options */
  if (!strcmp(argv[1], "report")) return cmd_report_main(argc - 1, argv + 1);       /* a folder, its own options */
  if (!strcmp(argv[1], "compare")) return cmd_compare_main(argc - 1, argv + 1);     /* two files, its own options */
  const struct command *c = commands;
  while (c->name && strcmp(c->name, argv[1])) c++;
  if (!c->name) {
    fprintf(stderr, "fragbench: unknown command '%s'; known:", argv[1]);
    for (c = commands; c->name; c++) fprintf(stderr, " %s", c->name);
    fprintf(stderr, "\n(see fragbench --help)\n");
    return 2;
  }
  struct cli_opts o;
  int rc = cli_parse(argc, argv, &o);
  if (rc) return rc;
  o.cmd = c->name;
  return c->fn(&o);
}
