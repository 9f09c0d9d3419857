/* cli_advise.c - `fragbench advise --trace FILE [--budget BYTES] [--out FILE.csv]`: the
 * search of advise.c on one snapshot, a ranked table on stderr, one CSV row per setting
 * replayed (the recommendation first), and as the last line on stdout the
 * PYTORCH_CUDA_ALLOC_CONF to use. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "advise.h"

static const char advise_help[] =
"usage: fragbench advise --trace FILE [--budget BYTES] [--trace-device N] [--out FILE.csv] [--quiet]\n"
"\n"
"Which PYTORCH_CUDA_ALLOC_CONF should this job use? Replays the snapshot (or any trace)\n"
"on the simulated device under PyTorch's allocator settings - expandable_segments,\n"
"max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions and, with a\n"
"budget, garbage_collection_threshold - with values read off the trace's request sizes,\n"
"by coordinate descent from PyTorch's defaults (expandable segments off and on): one knob\n"
"varied at a time, the best kept, until a round changes nothing.\n"
"\n"
"  (no --budget)    recommends the setting that needs the least peak reserved memory\n"
"  --budget BYTES   replays every setting under a cap of BYTES (as\n"
"                   set_per_process_memory_fraction would) and recommends the one that\n"
"                   completes with the least modeled driver time (cudaMalloc, map, unmap);\n"
"                   a budget below the trace's peak requested is refused (exit 2)\n"
"  --out FILE.csv   one results row per setting replayed, the recommendation first, with\n"
"                   its PYTORCH_CUDA_ALLOC_CONF in the alloc_conf column\n"
"  --trace-device N which device of a multi-device snapshot (default: the first with events)\n"
"  --sim-total, --sim-usable   the simulated device (default: an H100 80GB)\n"
"\n"
"Prints a ranked table on stderr and, as the last line on stdout,\n"
"PYTORCH_CUDA_ALLOC_CONF=... to export before the job starts.\n"
"\n"
"The prediction assumes the job makes the same allocation sequence again (same model,\n"
"batch shapes and order) and that its PyTorch's allocator behaves as the one modelled\n"
"here (c10/cuda/CUDACachingAllocator.cpp as of the PyTorch that recorded the bundled\n"
"snapshots, 2.11).\n";

void advise_usage(FILE *f) { fputs(advise_help, f); }

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
  if (o->nworkloads || o->nallocators || o->ncaps || o->devices || o->timeline) {
    fprintf(stderr, "fragbench advise: %s is not an advise option: advise chooses the allocator settings itself "
            "(--budget BYTES for a memory limit)\n(see fragbench advise --help)\n",
            o->nworkloads ? "--workload" : o->nallocators ? "--allocator/--alloc-conf" : o->ncaps ? "--cap" :
            o->devices ? "--devices" : "--timeline");
    return 2;
  }
  if (!strcmp(o->device, "cuda")) {
    fprintf(stderr, "fragbench advise: advise predicts on the simulated device (exact and fast); run its "
            "recommendation with `fragbench run --device cuda --alloc-conf ...`\n");
    return 2;
  }
  struct advise_opts ao = {.trace = o->traces[0], .trace_device = o->trace_device, .budget = o->budget,
                           .progress = !o->quiet && isatty(2)};
  ao.device.kind = "sim";
  ao.device.sim_total = o->sim_total;
  ao.device.sim_usable = o->sim_usable;
  struct advise_result res;
  char err[FB_ERRLEN];
  int rc = advise_run(&ao, &res, err);
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
    output_close(&out);
  }

  const struct advise_candidate *best = &res.c[0];
  int caching = find_spec(&res, "caching"), expandable = find_spec(&res, "expandable"), recorded = find_spec(&res, "recorded");
  if (!o->quiet) {
    char a[32], b[32];
    fprintf(stderr, "fragbench advise: %s: peak requested %s; %d settings replayed in %.2f s (%d descent rounds)%s%s\n",
            best->r.workload, fmt_bytes(res.peak_requested, a, sizeof a), res.n, res.elapsed_s, res.rounds,
            o->budget ? ", budget " : "", o->budget ? fmt_bytes(o->budget, b, sizeof b) : "");
    fprintf(stderr, "%4s  %-70s %12s %9s  %-4s %10s\n", "rank", "PYTORCH_CUDA_ALLOC_CONF", "peak_res", "overhead",
            "fits", "driver ms");
    int shown = 0;
    for (int i = 0; i < res.n; i++) {
      int ref = i == caching || i == expandable || i == recorded;
      if (shown < 12 || ref) {
        table_line(i + 1, &res.c[i], o->budget, i == caching ? "  <- PyTorch's default" :
                   i == expandable ? "  <- expandable segments alone" : "");
        shown++;
      }
    }
    if (res.n > shown) fprintf(stderr, "      (%d more in --out)\n", res.n - shown);
    if (best->r.trace_peak_reserved)
      fprintf(stderr, "PyTorch itself reserved %s when the snapshot was recorded.\n", fmt_bytes(best->r.trace_peak_reserved, a, sizeof a));
    if (expandable >= 0 && res.c[expandable].r.peak_reserved && best->fits && !o->budget)
      fprintf(stderr, "Recommended: %s peak reserved predicted (%+.1f%% against expandable_segments:True alone).\n",
              fmt_bytes(best->r.peak_reserved, a, sizeof a),
              100.0 * ((double)best->r.peak_reserved / (double)res.c[expandable].r.peak_reserved - 1));
    if (expandable >= 0 && best->fits && o->budget) {
      const struct advise_candidate *e = &res.c[expandable];
      fprintf(stderr, "Recommended: completes under the budget, %s peak reserved, %.2f ms modeled driver time; "
              "expandable_segments:True alone ", fmt_bytes(best->r.peak_reserved, a, sizeof a), (double)best->r.modeled_driver_ns / 1e6);
      if (e->fits) fprintf(stderr, "fits too, with %.2f ms.\n", (double)e->r.modeled_driver_ns / 1e6);
      else fprintf(stderr, "runs out of memory at event %llu.\n", (unsigned long long)e->r.first_oom_event);
    }
    if (!best->fits)
      fprintf(stderr, "No setting completes%s: the best got to event %llu of the trace.\n",
              o->budget ? " under the budget" : "", (unsigned long long)best->r.events);
    fprintf(stderr, "This assumes the job makes the same allocation sequence again and that its PyTorch's "
            "allocator behaves as the one modelled here (the snapshot's PyTorch version).\n");
  }
  if (!best->fits) { advise_free(&res); return 1; }
  printf("PYTORCH_CUDA_ALLOC_CONF=%s\n", best->r.alloc_conf);
  advise_free(&res);
  return 0;
}
