/* cli_advise.c - `fragbench advise --trace FILE [--budget BYTES] [--out FILE.csv]`: the
 * search of advise.c on one snapshot, a ranked table on stderr, one CSV row per setting
 * replayed (the recommendation first), and as the last line on stdout the
 * PYTORCH_CUDA_ALLOC_CONF to use. */
#include "cli.h"
#include "options.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "advise.h"
#include "cap_infer.h"
#include "limit.h"

static const struct opt_def advise_opts[] = {
  {"--trace", OPT_TEXT, "FILE", "the snapshot (or any trace) to advise on (required, once)"},
  {"--trace-device", OPT_COUNT, "N", "which device of a multi-device snapshot (default: the first with events)"},
  OPTS_LIMIT,
  {"--budget", OPT_LIMIT, "BYTES|N%|FRACTION", "the same as --limit: replays every setting under it and recommends\n"
   "the one that completes with the least modeled driver time"},
  {"--device", OPT_TEXT, "sim", "advise predicts on the simulated device (cuda is refused)"},
  {"--sim-total", OPT_BYTES, "BYTES", "the simulated device's total (default: an H100 80GB; at most 4 TiB)"},
  {"--sim-usable", OPT_BYTES, "BYTES", "what cudaMalloc can get on sim"},
  {"--out", OPT_TEXT, "FILE.csv", "one results row per setting replayed, the recommendation first, with its\n"
   "PYTORCH_CUDA_ALLOC_CONF in the alloc_conf column; written whole or not at all"},
  OPTS_QUIET,
  OPTS_END,
};

const struct cmd_def cmd_advise_def = {
  "advise", "--trace FILE [--limit BYTES|N%|F] [--out FILE.csv]   the PYTORCH_CUDA_ALLOC_CONF to use",
  "Which PYTORCH_CUDA_ALLOC_CONF should this job use? Replays the snapshot (or any trace)\n"
  "on the simulated device under PyTorch's allocator settings - expandable_segments,\n"
  "max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions and, with a\n"
  "limit, garbage_collection_threshold - with values read off the trace's request sizes,\n"
  "by coordinate descent from PyTorch's defaults (expandable segments off and on): one knob\n"
  "varied at a time, the best kept, until a round changes nothing.\n"
  "\n"
  "Without a limit it recommends the setting that needs the least peak reserved memory; for\n"
  "a snapshot that ended in an OOM the limit is the one the job ran under, inferred from it\n"
  "(said on stderr; --no-infer-cap turns that off). With a limit (--limit, --budget,\n"
  "--oom-message) every setting replays under it and the one that completes with the least\n"
  "modeled driver time wins; a limit below the trace's peak requested is refused (exit 2).\n",
  advise_opts, cmd_advise,
  "Prints a ranked table on stderr and, as the last line on stdout,\n"
  "PYTORCH_CUDA_ALLOC_CONF=... to export before the job starts.\n"
  "\n"
  "The prediction assumes the job makes the same allocation sequence again (same model,\n"
  "batch shapes and order) and that its PyTorch's allocator behaves as the one modelled\n"
  "here (c10/cuda/CUDACachingAllocator.cpp as of the PyTorch that recorded the bundled\n"
  "snapshots, 2.11).\n",
};


static const char *conf_of(const struct advise_candidate *c) {
  return c->r.alloc_conf[0] ? c->r.alloc_conf : c->spec;
}

static void table_line(int rank, const struct advise_candidate *c, uint64_t budget, const char *mark) {
  char res[32], conf[80];
  snprintf(conf, sizeof conf, "%.79s", conf_of(c));
  if (strlen(conf_of(c)) > 70) snprintf(conf + 66, sizeof conf - 66, "...");
  const char *fits = c->fits ? "yes" : "no";
  fprintf(stderr, "%4d  %-70s %12s %9.3f  %-4s %10.2f  %s%s\n", rank, conf, fmt_bytes(c->r.peak_reserved, res, sizeof res),
          c->r.overhead, budget || !c->fits ? fits : "-", (double)c->r.modeled_driver_ns / 1e6, mark,
          c->origin == ADVISE_RECORDED ? " (the snapshot's own settings)" : "");
}

static int find_spec(const struct advise_result *res, const char *spec) {
  for (int i = 0; i < res->n; i++) if (!strcmp(res->c[i].spec, spec)) return i;
  return -1;
}

int cmd_advise(struct cli_opts *o) {
  if (o->ntraces != 1) {
    fprintf(stderr, "fragbench advise: give one --trace FILE (a PyTorch snapshot, RMM log or native CSV)\n(see fragbench advise --help)\n");
    return 2;
  }
  if (o->ncaps > 1) {
    fprintf(stderr, "fragbench advise: one limit (--limit, --budget or --cap-bytes) at most\n(see fragbench advise --help)\n");
    return 2;
  }
  if (!strcmp(o->device, "cuda")) {
    fprintf(stderr, "fragbench advise: advise predicts on the simulated device (exact and fast); run its "
            "recommendation with `fragbench run --device cuda --alloc-conf ...`\n");
    return 2;
  }
  if (outfile_check("advise", (const char *[]){"--out"}, &o->out, 1, (const char *[]){o->traces[0], o->oom_message}, 2)) return 2;
  struct advise_opts ao = {.trace = o->traces[0], .trace_device = o->trace_device, .budget = o->budget,
                           .progress = !o->quiet && isatty(2)};
  ao.device.kind = "sim";
  ao.device.sim_total = o->sim_total;
  ao.device.sim_usable = o->sim_usable;
  struct advise_result res;
  char err[FB_ERRLEN];
  int inferred = 0;
  struct limit lim;
  struct limit_ask ask = {.ngiven = o->ncaps, .given_bytes = o->budget, .given_text = o->ncaps ? o->caps[0].flag : NULL,
                          .oom_message = o->oom_message, .no_infer = o->no_infer_cap, .trace = o->traces[0],
                          .trace_device = o->trace_device};
  if (limit_resolve(&ask, &lim, err)) { fprintf(stderr, "fragbench advise: %s\n", err); return 2; }
  if (!o->quiet) {
    char line[1024];
    if (lim.from == LIMIT_INFERRED) {
      cap_infer_evidence(&lim.ci, line, sizeof line);
      fprintf(stderr, "fragbench advise: %s %s\n", o->traces[0], line);
    }
  }
  cli_say_limit(o, &lim);
  ao.budget = lim.bytes;
  inferred = lim.from == LIMIT_INFERRED;
  int rc = advise_run(&ao, &res, err);
  if (rc == 2 && inferred) {   /* the job needed more than its limit whatever the setting */
    if (!o->quiet) fprintf(stderr, "fragbench advise: %s; advising without a budget\n", err);
    advise_free(&res);
    ao.budget = 0;
    rc = advise_run(&ao, &res, err);
  }
  if (rc) {
    fprintf(stderr, "fragbench advise: %s\n", err);
    advise_free(&res);
    return rc;
  }
  if (!res.n) { fprintf(stderr, "fragbench advise: nothing was replayed\n"); advise_free(&res); return 1; }

  struct output out = {0};
  if (o->out) {
    if (output_open(&out, o->out)) { advise_free(&res); return 2; }
    for (int i = 0; i < res.n; i++) {
      char id[16];
      snprintf(id, sizeof id, "%d", i + 1);
      csv_write_row(out.csv, id, &res.c[i].r);
    }
    if (output_finish(&out, 1)) { advise_free(&res); return 2; }   /* complete: every setting replayed */
  }

  const struct advise_candidate *best = &res.c[0];
  int caching = find_spec(&res, "caching"), expandable = find_spec(&res, "expandable"), recorded = find_spec(&res, "recorded");
  if (!o->quiet) {
    char a[32], b[32];
    fprintf(stderr, "fragbench advise: %s: peak requested %s; %d settings replayed in %.2f s (%d descent rounds)%s%s\n",
            best->r.workload, fmt_bytes(res.peak_requested, a, sizeof a), res.n, res.elapsed_s, res.rounds,
            ao.budget ? ", budget " : "", ao.budget ? fmt_bytes(ao.budget, b, sizeof b) : "");
    fprintf(stderr, "%4s  %-70s %12s %9s  %-4s %10s\n", "rank", "PYTORCH_CUDA_ALLOC_CONF", "peak_res", "overhead",
            "fits", "driver ms");
    int shown = 0;
    for (int i = 0; i < res.n; i++) {
      int ref = i == caching || i == expandable || i == recorded;
      if (shown < 12 || ref) {
        table_line(i + 1, &res.c[i], ao.budget, i == caching ? "  <- PyTorch's default" :
                   i == expandable ? "  <- expandable segments alone" : "");
        shown++;
      }
    }
    if (res.n > shown) fprintf(stderr, "      (%d more in --out)\n", res.n - shown);
    if (best->r.trace_peak_reserved)
      fprintf(stderr, "PyTorch itself reserved %s when the snapshot was recorded.\n", fmt_bytes(best->r.trace_peak_reserved, a, sizeof a));
    if (expandable >= 0 && res.c[expandable].r.peak_reserved && best->fits && !ao.budget)
      fprintf(stderr, "Recommended: %s peak reserved predicted (%+.1f%% against expandable_segments:True alone).\n",
              fmt_bytes(best->r.peak_reserved, a, sizeof a),
              100.0 * ((double)best->r.peak_reserved / (double)res.c[expandable].r.peak_reserved - 1));
    if (expandable >= 0 && best->fits && ao.budget) {
      const struct advise_candidate *e = &res.c[expandable];
      fprintf(stderr, "Recommended: completes under the budget, %s peak reserved, %.2f ms modeled driver time; "
              "expandable_segments:True alone ", fmt_bytes(best->r.peak_reserved, a, sizeof a), (double)best->r.modeled_driver_ns / 1e6);
      if (e->fits) fprintf(stderr, "fits too, with %.2f ms.\n", (double)e->r.modeled_driver_ns / 1e6);
      else fprintf(stderr, "runs out of memory at event %llu.\n", (unsigned long long)e->r.first_oom_event);
    }
    if (!best->fits)
      fprintf(stderr, "No setting completes%s: the best got to event %llu of the trace.\n",
              ao.budget ? " under the budget" : "", (unsigned long long)best->r.events);
    fprintf(stderr, "This assumes the job makes the same allocation sequence again and that its PyTorch's "
            "allocator behaves as the one modelled here (the snapshot's PyTorch version).\n");
  }
  if (!best->fits) { advise_free(&res); return 1; }
  printf("PYTORCH_CUDA_ALLOC_CONF=%s\n", best->r.alloc_conf);
  advise_free(&res);
  return 0;
}
