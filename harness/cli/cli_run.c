/* cli_run.c - `fragbench run`: the rows are planned once in the engine (plan.h: input x
 * strategy x cap x device, caps resolved there) and run by its one loop; this file only
 * picks the launcher (here, a thread per device with --devices, an MPI rank per device
 * under mpirun: multi.c, run_mpi.c) and writes what comes back: the results CSV, the
 * timeline and the breakdown, each renamed into place only when the run succeeds. */
#include "cli.h"
#include "options.h"
#include "stream_acct.h"
#include "multi.h"
#include "plan.h"
#include "timeline.h"
#include "cap_infer.h"
#include "results_read.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_pick_device(struct cli_opts *o, struct device_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->sim_total = o->sim_total;
  cfg->sim_usable = o->sim_usable;
  char err[FB_ERRLEN];
  if (!strcmp(o->device, "sim")) { cfg->kind = "sim"; return 0; }
  int n = cuda_device_count(err);
  if (!strcmp(o->device, "cuda")) {
    if (n <= 0) {
      fprintf(stderr, "fragbench: --device cuda: no usable GPU: %s\n", n == 0 ? "no CUDA device visible" : err);
      return 1;
    }
    cfg->kind = "cuda";
    return 0;
  }
  if (n > 0) {
    cfg->kind = "cuda";
    if (!o->quiet) fprintf(stderr, "fragbench: device auto: using cuda (%d GPU%s visible)\n", n, n > 1 ? "s" : "");
  } else {
    cfg->kind = "sim";
    if (!o->quiet) fprintf(stderr, "fragbench: device auto: no GPU (%s); using the simulated device\n", n == 0 ? "no CUDA device visible" : err);
  }
  return 0;
}

int cli_check_selection(const struct cli_opts *o) {
  struct plan_opts po;
  cli_plan_opts(o, NULL, 0, 0, &po);
  char err[FB_ERRLEN];
  if (plan_check_selection(&po, err)) { fprintf(stderr, "fragbench: %s\n", err); return 2; }
  return 0;
}

int cli_sources(const struct cli_opts *o, struct source *out, int max, int *n) {
  struct plan_opts po;
  cli_plan_opts(o, NULL, 0, 0, &po);
  char err[FB_ERRLEN];
  if (plan_sources(&po, (struct plan_source *)out, max, n, err)) { fprintf(stderr, "fragbench: %s\n", err); return 2; }
  return 0;
}

int cli_rows(struct cli_opts *o, struct cli_rows *rows) {
  static const char *const raw[] = {"raw"};
  rows->allocs = o->nallocators ? o->allocators : raw;
  rows->nalloc = o->nallocators ? o->nallocators : 1;
  if (cli_pick_device(o, &rows->cfg)) return 1;
  return cli_sources(o, rows->src, CLI_MAX * 4, &rows->nsrc) ? 2 : 0;
}

void cli_spec(const struct cli_opts *o, const struct device_config *cfg, const struct source *src, struct run_spec *s) {
  memset(s, 0, sizeof *s);
  s->workload = src->workload;
  s->trace = src->trace;
  s->trace_device = src->trace_device;
  s->world = 1;
  s->seed = o->seed;
  if (cfg) s->device = *cfg;
  s->on_oom = o->on_oom;
  s->validate = o->validate;
  s->strict = o->strict;
  s->verify = o->verify;
  s->touch = o->touch;
  s->no_touch = o->no_touch;
  s->fail_rate = o->fail_rate;
  s->quiet = o->quiet;
  s->progress = !o->quiet && isatty(2);
}

static struct plan_cap plan_caps[CLI_MAX];

void cli_plan_opts(const struct cli_opts *o, const struct device_config *devices, int ndevices, int multi, struct plan_opts *po) {
  memset(po, 0, sizeof *po);
  po->workloads = o->workloads; po->nworkloads = o->nworkloads;
  po->traces = o->traces; po->ntraces = o->ntraces;
  po->trace_device = o->trace_device;
  po->allocators = o->allocators; po->nallocators = o->nallocators;
  for (int i = 0; i < o->ncaps; i++)
    plan_caps[i] = (struct plan_cap){o->caps[i].kind == CAP_FRACTION ? PLAN_CAP_FRACTION : o->caps[i].kind == CAP_X ? PLAN_CAP_X
                                     : PLAN_CAP_BYTES, o->caps[i].value, o->caps[i].bytes};
  po->caps = plan_caps; po->ncaps = o->ncaps;
  po->devices = devices; po->ndevices = ndevices; po->multi = multi;
  cli_spec(o, devices, &(struct source){.trace_device = -1}, &po->base);
  po->timeline = o->timeline != NULL;
  po->breakdown = o->breakdown != NULL;
  po->no_infer_cap = o->no_infer_cap;
  po->trust_message = o->trust_message;
  po->oom_message = o->oom_message;
}

void cli_say_limit(const struct cli_opts *o, const struct limit *lim) {
  if (o->quiet) return;
  char line[1024], given[400];
  struct limit l = *lim;
  if (o->ncaps) {   /* as the user wrote it */
    size_t k = 0;
    given[0] = 0;
    for (int i = 0; i < o->ncaps && k < sizeof given; i++) {   /* and how it was read: "G = GiB = 2^30 bytes", "25% of the device" */
      struct limit_text lt;
      char err[600], how[128] = "";
      if (o->caps[i].kind == CAP_X) snprintf(how, sizeof how, ": %s times each input's peak requested", o->caps[i].text);
      else if (!limit_parse(o->caps[i].flag, o->caps[i].text, o->caps[i].kind == CAP_FRACTION && !strcmp(o->caps[i].flag, "--cap"), 0, 0,
                            &lt, err, sizeof err))
        snprintf(how, sizeof how, ": %s", lt.fraction ? (strchr(o->caps[i].text, '%') ? "of the device's total" : "a fraction of the device's total")
                                                        : lt.how);
      k += (size_t)snprintf(given + k, sizeof given - k, "%s%s %s%s", i ? ", " : "", o->caps[i].flag, o->caps[i].text, how);
    }
    l.from = LIMIT_GIVEN;
    l.bytes = lim->from == LIMIT_GIVEN ? lim->bytes : 0;   /* resolved by the caller on its device; 0 = one per row */
    snprintf(l.source, sizeof l.source, "%.120s", given);
  }
  limit_sentence(&l, line, sizeof line);
  fprintf(stderr, "fragbench %s: %s\n", o->cmd, line);
}

/* the one limit given, in bytes on the rows' devices (as each row resolves it); 0 where
 * there are several limits, a multiple of each input's peak, or devices whose totals
 * make a fraction several figures: the sentence then says "one per row" */
static uint64_t said_bytes(const struct cli_opts *o, const struct device_config *dev, int n) {
  if (o->ncaps != 1 || o->caps[0].kind == CAP_X) return 0;
  uint64_t b = cli_limit_on(o, &dev[0]);
  for (int i = 1; i < n && b; i++)
    if (cli_limit_on(o, &dev[i]) != b) return 0;
  return b;
}

struct run_emit { struct output *out; FILE *tl, *bd; int write; };

/* what one group's rows gave: the CSV, the timeline, the breakdown, messages */
static int emit(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx) {
  struct run_emit *e = ctx;
  int worst = 0;
  for (int i = 0; i < n; i++)
    if (res[i].exit_class == 2 && !res[i].allocator[0] && !res[i].workload[0]) {   /* the input itself is bad */
      if (e->write) fprintf(stderr, "fragbench: %s\n", res[i].status + 7);
      return 2;
    }
  for (int i = 0; i < n; i++) {
    const struct run_result *r = &res[i];
    if (r->exit_class > worst) worst = r->exit_class;
    if (!e->write) continue;
    if (e->bd) breakdown_rows(e->bd, e->out->rows + 1, r, &rows[i].acct);
    output_row(e->out, r);
    if (e->tl && rows[i].timeline_len) fwrite(rows[i].timeline, 1, rows[i].timeline_len, e->tl);
    const char *a = r->allocator[0] ? r->allocator : rows[i].spec.allocator;
    if (r->exit_class && p->o.multi) fprintf(stderr, "fragbench: device %d: %s x %s: %s\n", i, r->workload, a, r->status);
    else if (r->exit_class) fprintf(stderr, "fragbench: %s x %s: %s\n", r->workload, a, r->status);
  }
  if (p->o.multi && e->write) {
    struct run_result agg;
    aggregate_rows(res, n, &agg);
    output_row(e->out, &agg);
  }
  return worst;
}

/* the flags it takes (flags.def) */
static const char *const run_opts[] = {
  FLAGS_SELECTION, FLAGS_STRATEGY, FLAGS_DEVICE, "--devices", "--cap", "--cap-x", FLAGS_LIMIT, "--on-oom", FLAGS_CHECKS,
  "--touch", "--no-touch", "--verify", "--out", "--timeline", "--breakdown", "--quiet", "--max-reserved", "--fail-on-oom",
  "--uncapped", NULL,
};

const struct cmd_def cmd_run_def = {
  "run", "[selection] [options]   replay, one CSV row per input x strategy x cap x device",
  "Replays every input (--workload, --trace; each device trace of a snapshot) under every\n"
  "strategy (--allocator, --alloc-conf) and every cap, one results CSV row each. With no\n"
  "cap given, a snapshot that ended in an OOM replays under the limit it ran under, inferred\n"
  "from it (columns cap_source, cap_lo, cap_hi); --no-infer-cap turns that off. Without\n"
  "--out the CSV goes to stdout; on a terminal, the table only. --uncapped FILE (the same\n"
  "inputs' uncapped rows on this device, make bench's runs.csv): a capped row whose strategy\n"
  "makes its uncapped run under any cap it never reached (cap-blind ones, async), and whose\n"
  "uncapped row completed reserving at most the cap, is that row, not replayed.\n",
  run_opts, cmd_run,
  "exit status: 0 every row ran (OOM and skipped rows included); 1 a validator failure, a\n"
  "device error, or a row that failed --max-reserved/--fail-on-oom; 2 bad usage or bad input.\n", NULL,
};

int cmd_run(struct cli_opts *o) {
  if (!o->nworkloads && !o->ntraces) {
    fprintf(stderr, "fragbench run: nothing to replay: give --workload NAME or --trace FILE (see fragbench list)\n");
    return 2;
  }
  int world = mpi_world(), root = mpi_rank() == 0;
  if (world > 1 && (o->timeline || o->breakdown || o->devices)) {
    fprintf(stderr, "fragbench run: %s is not available under MPI (one process writes the CSV; the timeline and the "
            "breakdown stay with each rank): run the same rows with --devices instead\n",
            o->timeline ? "--timeline" : o->breakdown ? "--breakdown" : "--devices (one device per rank already)");
    return 2;
  }
  if (o->uncapped && (o->timeline || o->breakdown || o->devices || world > 1)) {
    fprintf(stderr, "fragbench run: --uncapped with %s: a row taken from its uncapped row has no timeline or breakdown of its "
            "own, and the rows are one device's: drop one of the two\n",
            o->timeline ? "--timeline" : o->breakdown ? "--breakdown" : o->devices ? "--devices" : "MPI");
    return 2;
  }
  if (cli_check_selection(o)) return 2;
  struct device_config cfg;
  if (cli_pick_device(o, &cfg)) return 1;
  struct device_list *dl = calloc(1, sizeof *dl);
  if (!dl) return 1;
  int multi = 0, rc;
  if (o->devices) {
    if ((rc = device_list_parse(o->devices, &cfg, dl))) { free(dl); return rc; }
    multi = 1;
  } else if (world > 1) {
    mpi_devices(&cfg, dl);
    multi = 1;
  } else {
    dl->n = 1;
    dl->cfg[0] = cfg;
  }
  struct plan_opts po;
  cli_plan_opts(o, dl->cfg, dl->n, multi, &po);
  struct plan p;
  char err[FB_ERRLEN];
  struct results uncapped = {0};
  if (o->uncapped) {
    if (results_load(o->uncapped, &uncapped, err, sizeof err)) {
      fprintf(stderr, "fragbench run: --uncapped %s\n", err);
      free(dl);
      return 2;
    }
    po.uncapped = &uncapped;
  }
  if (plan_build(&po, &p, err)) { fprintf(stderr, "fragbench: %s\n", err); results_free(&uncapped); free(dl); return 2; }
  if (root && p.lim.from == LIMIT_INFERRED && !o->quiet) {
    char line[1024];
    cap_infer_evidence(&p.lim.ci, line, sizeof line);   /* where it died; the limit sentence follows */
    fprintf(stderr, "fragbench: %s %s\n", p.rows[0].spec.trace, line);
  }
  if (root) {
    struct limit said = p.lim;
    if (o->ncaps) { said.from = LIMIT_GIVEN; said.bytes = said_bytes(o, dl->cfg, dl->n); }
    cli_say_limit(o, &said);
  }

  struct output out;
  struct run_emit e = {.out = &out, .write = root};
  struct outfile tl = {0}, bd = {0};
  rc = 0;
  if (root) {
    /* every input against every output: checked once, in cli_check_files (options.c) */
    if (output_open_run(&out, o->out, o->quiet)) rc = 2;
    else {
      out.quiet = o->quiet;
      output_gate(&out, o);
      if (o->timeline && !(e.tl = outfile_open(&tl, o->timeline, "the timeline"))) rc = 2;
      if (e.tl) fputs(TIMELINE_HEADER, e.tl);
      if (!rc && o->breakdown && !(e.bd = outfile_open(&bd, o->breakdown, "the breakdown"))) rc = 2;
      if (e.bd) breakdown_header(e.bd);
      if (rc) { outfile_abort(&tl); output_abort(&out); }
    }
  }
  rc = mpi_agree(rc);
  if (rc) { plan_release(&p); results_free(&uncapped); free(dl); return rc; }
  plan_exec_fn exec = o->devices ? multi_exec_threads : world > 1 ? mpi_exec : plan_exec_here;
  int worst = plan_run(&p, exec, NULL, emit, &e);
  if (o->uncapped && !o->quiet)
    fprintf(stderr, "fragbench run: %d capped row%s taken from %s: the uncapped run, which never met the cap, not replayed\n",
            p.nby_uncapped, p.nby_uncapped == 1 ? "" : "s", o->uncapped);
  plan_release(&p);
  results_free(&uncapped);
  free(dl);
  if (root) {
    /* the outputs appear under their names only when every row ran (a row's OOM is a
     * result); otherwise every existing file stays as it was. A gate that failed
     * (--fail-on-oom, --max-reserved) is a verdict on whole results: they are written,
     * and the command exits 1 saying so (a CI baseline of an OOM snapshot can be made) */
    int keep = worst == 0, gate = out.gate_failed && worst < 1;
    if (gate) worst = 1;
    if (outfile_finish(&tl, keep) || outfile_finish(&bd, keep)) { if (worst < 2) worst = 2; keep = 0; }
    if (output_finish(&out, keep) && worst < 2) worst = 2;
    if (gate && worst == 1)
      fprintf(stderr, "fragbench run: exit 1: a row failed %s%s%s; the results were written whole to %s\n",
              o->fail_on_oom ? "--fail-on-oom" : "", o->fail_on_oom && o->max_reserved ? " or " : "", o->max_reserved ? "--max-reserved" : "",
              o->out && strcmp(o->out, "-") ? o->out : "stdout");
  }
  return mpi_agree(worst);
}
