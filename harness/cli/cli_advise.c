/* cli_advise.c - `fragbench advise --trace FILE [--limit L] [--out FILE.csv]`: the search
 * of advise.c on one snapshot and the variations of its job, a ranked table on stderr
 * (worst case, headroom, how many variations each setting fits), one CSV row per setting
 * replayed (the recommendation first; the results columns, then headroom_bytes,
 * fits_variations, worst_peak_reserved, variations, need_bytes, need_min_bytes, need_x_min,
 * need_x_max), and as the last line on
 * stdout the PYTORCH_CUDA_ALLOC_CONF to use. */
#include "cli.h"
#include "options.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "advise.h"
#include "cap_infer.h"
#include "limit.h"
#include "outfile.h"

/* the flags it takes (flags.def) */
static const char *const advise_opts[] = {
  "--trace", "--trace-device", FLAGS_LIMIT, "--budget", "--variations", "--seed", "--device", "--sim-total",
  "--sim-usable", "--out", "--quiet",
  NULL,
};

const struct cmd_def cmd_advise_def = {
  "advise", "--trace FILE [--limit BYTES|N%|F] [--oom-message FILE|-] [--out FILE.csv]   the PYTORCH_CUDA_ALLOC_CONF to use",
  "Which PYTORCH_CUDA_ALLOC_CONF should this job use? Replays the snapshot (or any trace)\n"
  "on the simulated device under PyTorch's allocator settings - expandable_segments,\n"
  "max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions and, with a\n"
  "limit, garbage_collection_threshold - with values read off the trace's request sizes,\n"
  "by coordinate descent from PyTorch's defaults (expandable segments off and on).\n"
  "\n"
  "A job is never rerun with the same batches: every setting is replayed on variations of\n"
  "the job built from the snapshot - its iterations (found from where every short-lived\n"
  "block is freed) in other orders and resampled, the warm-up and the end kept - on every\n"
  "core. The worst case over the variations decides: a setting fits when it completes on\n"
  "all of them; headroom_bytes = the limit (else the device) minus its worst-case peak\n"
  "reserved. The recommendation fits on every variation, needs no more than PyTorch's\n"
  "default and at most 2% more than the best (under a limit: the smallest limit it\n"
  "completes under on every variation; without one: its worst-case peak reserved, each as\n"
  "a multiple of the variation's peak requested), and changes the fewest knobs; driver\n"
  "time decides only where it differs by more than 2 ms per iteration.\n"
  "\n"
  "The limit: --limit (--budget, --cap-bytes) in bytes, N% of the device or a fraction as\n"
  "set_per_process_memory_fraction takes it; --oom-message FILE|- reads it from PyTorch's\n"
  "out-of-memory text (the low end of its 2-decimal printing); for a snapshot that ended in\n"
  "an OOM it is otherwise inferred, and advise plans for the LOW end of the inferred\n"
  "interval (--no-infer-cap turns that off). A limit below the trace's peak requested is\n"
  "refused (exit 2).\n"
  "\n"
  "--trace FILE: the snapshot (or any trace) to advise on (required, once). --out FILE.csv:\n"
  "one results row per setting replayed, the recommendation first, with its\n"
  "PYTORCH_CUDA_ALLOC_CONF in the alloc_conf column and headroom_bytes, fits_variations,\n"
  "worst_peak_reserved, variations, need_bytes, need_min_bytes, need_x_min, need_x_max\n"
  "appended (need_*: the smallest limit over the variations, for the pick and the\n"
  "references; _x: as multiples of each variation's own peak requested).\n",
  advise_opts, cmd_advise,
  "Prints a ranked table on stderr and, as the last line on stdout,\n"
  "PYTORCH_CUDA_ALLOC_CONF=... to export before the job starts. Exit 1 when no setting fits\n"
  "on every variation (the smallest limit the top settings need is printed).\n"
  "\n"
  "The prediction assumes a rerun draws its iterations from those recorded, and that its\n"
  "PyTorch's allocator behaves as the one modelled here (c10/cuda/CUDACachingAllocator.cpp\n"
  "as of the PyTorch that recorded the bundled snapshots, 2.11).\n", NULL,
};

static const char *conf_of(const struct advise_candidate *c) {
  return c->r.alloc_conf[0] ? c->r.alloc_conf : c->spec;
}

static void fmt_signed(int64_t v, char *out, size_t n) {
  char b[24];
  if (v == INT64_MIN) { snprintf(out, n, "?"); return; }
  fmt_bytes((uint64_t)(v < 0 ? -v : v), b, sizeof b);
  snprintf(out, n, "%s%s", v < 0 ? "-" : "", b);
}

static void table_line(int rank, const struct advise_candidate *c, const char *mark) {
  char worst[40], head[32], rec[32], conf[80], fits[16];
  snprintf(conf, sizeof conf, "%.79s", conf_of(c));
  if (strlen(conf_of(c)) > 62) snprintf(conf + 58, sizeof conf - 58, "...");
  snprintf(fits, sizeof fits, "%d/%d", c->fits_variations, c->nvariations);
  fmt_signed(c->headroom, head, sizeof head);
  fmt_bytes(advise_worst(c), worst, sizeof worst);
  if (advise_worst(c) != c->worst_reserved) strcat(worst, "*");   /* the smallest working limit, searched */
  fprintf(stderr, "%4d  %-62s %11s %11s %6s %10.2f %11s  %s%s\n", rank, conf, worst,
          head, fits, (double)c->mean_driver_ns / 1e6, fmt_bytes(c->r.peak_reserved, rec, sizeof rec), mark,
          c->origin == ADVISE_RECORDED ? " (the snapshot's own settings)" : "");
}

static int find_spec(const struct advise_result *res, const char *spec) {
  for (int i = 0; i < res->n; i++) if (!strcmp(res->c[i].spec, spec)) return i;
  return -1;
}

/* the results CSV's columns, then advise's own; whole or not at all (outfile.h) */
static int write_csv(const char *path, const struct advise_result *res) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) { fprintf(stderr, "fragbench advise: out of host memory\n"); return 1; }
  static const char *const extra[] = {"headroom_bytes", "fits_variations", "worst_peak_reserved", "variations", "need_bytes",
                                      "need_min_bytes", "need_x_min", "need_x_max"};
  for (int i = 0; i <= res->n; i++) {
    char *line = NULL;
    size_t n = 0;
    FILE *l = open_memstream(&line, &n);
    if (!l) break;
    if (!i) csv_write_header(l);
    else {
      char id[16];
      snprintf(id, sizeof id, "%d", i);
      csv_write_row(l, id, &res->c[i - 1].r);
    }
    fclose(l);
    if (n && line[n - 1] == '\n') line[--n] = 0;
    fputs(line, m);
    free(line);
    if (!i) for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++) fprintf(m, ",%s", extra[k]);
    else {
      const struct advise_candidate *c = &res->c[i - 1];
      if (c->headroom == INT64_MIN) fputc(',', m);
      else fprintf(m, ",%lld", (long long)c->headroom);
      fprintf(m, ",%d/%d,%llu,%d,", c->fits_variations, c->nvariations, (unsigned long long)c->worst_reserved, c->nvariations);
      if (c->need) fprintf(m, "%llu", (unsigned long long)c->need);
      fputc(',', m);
      if (c->need_min) fprintf(m, "%llu", (unsigned long long)c->need_min);
      if (c->need_x_max > 0) fprintf(m, ",%.4f,%.4f", c->need_x_min, c->need_x_max);
      else fputs(",,", m);
    }
    fputc('\n', m);
  }
  fclose(m);
  int rc = 0;
  if (!strcmp(path, "-")) fwrite(buf, 1, len, stdout);
  else {                                            /* a temporary renamed into place: whole or not at all */
    struct outfile of;
    FILE *f = outfile_open(&of, path, "--out");
    if (!f) rc = 2;
    else if (fwrite(buf, 1, len, f) != len) { outfile_finish(&of, 0); fprintf(stderr, "fragbench advise: %s: cannot write\n", path); rc = 2; }
    else if (outfile_finish(&of, 1)) rc = 2;
  }
  free(buf);
  return rc;
}

static void say_variations(const struct advise_result *res, uint64_t seed) {
  if (res->nvariations + res->beyond > 1)
    fprintf(stderr, "fragbench advise: %d variations of the job: the recorded one and %d with its %d middle iterations in other "
            "orders, resampled, or with other shapes (iterations: %s; the warm-up - the prologue and %d iteration(s) - and %d at "
            "the end kept in place), seed %llu, %d at once\n",
            res->nvariations + res->beyond, res->nvariations + res->beyond - 1, res->iterations - res->head_iters - res->tail_iters,
            res->variations_how, res->head_iters, res->tail_iters, (unsigned long long)seed, res->threads);
  else
    fprintf(stderr, "fragbench advise: the recorded sequence only: %s; the advice holds for this sequence, not for reruns "
            "that draw other batches\n", res->variations_how);
  if (res->redrawn)
    fprintf(stderr, "fragbench advise: no variation asks for more at once than the recorded run, to within 1%% (a rerun draws "
            "the shapes the job draws): %d draws that did were drawn again%s\n", res->redrawn,
            res->stand_ins ? "; where every draw did, the recorded order stands in" : "");
}

/* what each of the top settings needs when none fits under the limit */
static void say_needs(const struct advise_result *res, uint64_t limit) {
  char a[32], b[32];
  fprintf(stderr, "No setting completes under the budget (%s) on every variation. The smallest limit each of the top settings needs "
          "(every variation completes, sim, exact for these settings):\n", fmt_bytes(limit, a, sizeof a));
  for (int i = 0, shown = 0; i < res->n && shown < 3; i++) {
    const struct advise_candidate *c = &res->c[i];
    if (!c->need) continue;
    fprintf(stderr, "  %-62s needs %s (%llu bytes), %+.1f%% of the limit\n", conf_of(c), fmt_bytes(c->need, b, sizeof b),
            (unsigned long long)c->need, 100.0 * ((double)c->need / (double)limit - 1));
    shown++;
  }
}

static void say_pick(const struct advise_result *res, int caching, int expandable) {
  const struct advise_candidate *p = &res->c[0];
  char a[32], b[32], c[32];
  fmt_signed(p->headroom, b, sizeof b);
  fprintf(stderr, "Recommended: fits on %d/%d variations, worst-case peak reserved %s, headroom %s against %s%s.\n",
          p->fits_variations, p->nvariations, fmt_bytes(p->worst_reserved, a, sizeof a), b,
          fmt_bytes(res->headroom_of, c, sizeof c), res->headroom_of && p->headroom < (int64_t)(res->headroom_of / 50) ?
          " (under 2%: thin)" : "");
  uint64_t best = p->worst_reserved, fastest = p->mean_driver_ns;
  for (int i = 0; i < res->n; i++) {
    if (!res->c[i].fits) continue;
    if (res->c[i].worst_reserved < best) best = res->c[i].worst_reserved;
    if (res->c[i].mean_driver_ns < fastest) fastest = res->c[i].mean_driver_ns;
  }
  fprintf(stderr, "  %d knob(s) changed from PyTorch's defaults; %+.2f%% against the least worst-case peak reserved listed (%s)",
          advise_knobs_count(&p->k), 100.0 * ((double)p->worst_reserved / (double)best - 1), fmt_bytes(best, a, sizeof a));
  if (p->need_x_max > 0) {
    double least = p->need_x_max;
    for (int i = 0; i < res->n; i++)
      if (res->c[i].fits && res->c[i].need_x_max > 0 && res->c[i].need_x_max < least) least = res->c[i].need_x_max;
    fprintf(stderr, ";\n  smallest working limit over the variations %s = %.3f..%.3f x peak requested (the least of the "
            "settings searched: %.3f)", fmt_bytes(p->need, c, sizeof c), p->need_x_min, p->need_x_max, least);
  }
  for (int r = 0; r < 2; r++) {
    int i = r ? expandable : caching;
    if (i < 0 || i == 0) continue;
    const struct advise_candidate *q = &res->c[i];
    if (q->fits) fprintf(stderr, "; %s %s worst case", r ? "expandable segments alone" : "PyTorch's default", fmt_bytes(q->worst_reserved, a, sizeof a));
    else fprintf(stderr, "; %s fits on %d/%d", r ? "expandable segments alone" : "PyTorch's default", q->fits_variations, q->nvariations);
  }
  fprintf(stderr, ".\n  Modeled driver time (mean over the variations): %.1f ms, the fastest fitting setting %.1f ms; a "
          "difference under %.0f ms (2 ms per iteration) is not weighed.\n", (double)p->mean_driver_ns / 1e6,
          (double)fastest / 1e6, (double)res->driver_matters_ns / 1e6);
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
  struct advise_opts ao = {.trace = o->traces[0], .trace_device = o->trace_device,
                           .progress = !o->quiet && isatty(2), .variations = o->variations, .seed = o->seed,
                           .threads = 0};   /* every core */
  ao.device.kind = "sim";
  ao.device.sim_total = o->sim_total;
  ao.device.sim_usable = o->sim_usable;
  ao.budget = cli_limit_on(o, &ao.device);   /* the limit given, on the device advise replays on */
  struct advise_result res;
  char err[FB_ERRLEN], a[32];
  struct limit lim;
  struct limit_ask ask = {.ngiven = o->ncaps, .given_bytes = ao.budget, .given_text = o->ncaps ? o->caps[0].text : NULL,
                          .oom_message = o->oom_message, .no_infer = o->no_infer_cap, .trace = o->traces[0], .trust_message = o->trust_message,
                          .trace_device = o->trace_device};
  if (limit_resolve(&ask, &lim, err)) { fprintf(stderr, "fragbench advise: %s\n", err); return 2; }
  int inferred = lim.from == LIMIT_INFERRED, over_limit = 0;
  ao.budget = inferred ? lim.ci.lo : lim.bytes;     /* inferred: plan for the low end of the interval */
  if (!o->quiet) {
    char line[1024];
    if (inferred) {
      cap_infer_evidence(&lim.ci, line, sizeof line);
      fprintf(stderr, "fragbench advise: %s %s\n", o->traces[0], line);
    }
  }
  cli_say_limit(o, &lim);
  if (inferred && !o->quiet)
    fprintf(stderr, "fragbench advise: planning for the low end of that interval, %s (%llu bytes): the limit may be "
            "anywhere in it (give it exactly with --limit or --oom-message FILE|-)\n", fmt_bytes(ao.budget, a, sizeof a),
            (unsigned long long)ao.budget);
  int rc = advise_run(&ao, &res, err);
  if (rc == 2 && ao.budget && strstr(err, "below the trace's peak requested")) {
    /* the job itself asks for more than the limit at once: nothing fits there */
    fprintf(stderr, "fragbench advise: nothing fits under %s: %s\n", fmt_bytes(ao.budget, a, sizeof a), err);
    if (inferred) fprintf(stderr, "fragbench advise: that is the low end of the inferred interval; if the job ran under more, "
                          "give the limit with --limit BYTES or --oom-message FILE|- (PyTorch's OOM text)\n");
    if (!o->quiet) fprintf(stderr, "fragbench advise: advising without a budget, for the memory each setting needs\n");
    advise_free(&res);
    ao.budget = 0;
    over_limit = 1;
    rc = advise_run(&ao, &res, err);
  }
  if (rc) {
    fprintf(stderr, "fragbench advise: %s\n", err);
    advise_free(&res);
    return rc;
  }
  if (!res.n) { fprintf(stderr, "fragbench advise: nothing was replayed\n"); advise_free(&res); return 1; }
  if (!res.peak_requested) {   /* no figure to rank settings by (every share would be 0/0) */
    fprintf(stderr, "fragbench advise: %s: no allocation in the trace (empty, or every event skipped): nothing to advise\n",
            o->traces[0]);
    advise_free(&res);
    return 2;
  }
  if (o->out && (rc = write_csv(o->out, &res))) { advise_free(&res); return rc; }

  const struct advise_candidate *best = &res.c[0];
  int caching = find_spec(&res, "caching"), expandable = find_spec(&res, "expandable"), recorded = find_spec(&res, "recorded");
  char job_conf[512], job_spec[640];   /* the job's own setting, from capture.py's side file (cli_side_file.c) */
  int job = cli_side_file_spec(o->traces[0], job_conf, sizeof job_conf, job_spec, sizeof job_spec, err) > 0 ? find_spec(&res, job_spec) : -1;
  if (!o->quiet) {
    char b[32];
    say_variations(&res, o->seed ? o->seed : 1);
    fprintf(stderr, "fragbench advise: %s: peak requested %s; %d settings x %d variations replayed in %.2f s (%d descent rounds)%s%s\n",
            best->r.workload, fmt_bytes(res.peak_requested, a, sizeof a), res.n, res.nvariations, res.elapsed_s, res.rounds,
            ao.budget ? ", limit " : ", no limit: headroom against the device's ", fmt_bytes(res.headroom_of, b, sizeof b));
    fprintf(stderr, "%4s  %-62s %11s %11s %6s %10s %11s\n", "rank", "PYTORCH_CUDA_ALLOC_CONF", "worst", "headroom",
            "fits", "driver ms", "recorded");
    int shown = 0, rows = 0;
    for (int i = 0; i < res.n; i++) {
      int ref = i == caching || i == expandable || i == recorded || i == job;
      int lead = i == 0 || res.c[i].tie != res.c[i - 1].tie;   /* a tie shows as its first row */
      if (!(ref || (lead && rows < 10))) continue;
      int like = 0;
      for (int j = i + 1; lead && j < res.n && res.c[j].tie == res.c[i].tie; j++)
        like += j != caching && j != expandable && j != recorded && j != job;
      char mark[128];
      snprintf(mark, sizeof mark, "%s", i == job ? "  <- the job's PYTORCH_CUDA_ALLOC_CONF (side file)" : i == caching ?
               "  <- PyTorch's default" : i == expandable ? "  <- expandable segments alone" : "");
      if (like) snprintf(mark + strlen(mark), sizeof mark - strlen(mark), "  (and %d like it)", like);
      table_line(i + 1, &res.c[i], mark);
      shown += 1 + like;
      rows += lead;
    }
    if (res.n > shown) fprintf(stderr, "      (%d more in --out)\n", res.n - shown);
    fprintf(stderr, "worst: the largest peak reserved over the variations (where it ran out: the smallest limit it needs "
            "there; with *: the smallest limit it completes under on every variation, searched for the best and the references "
            "under a limit); recorded: on the recorded sequence alone; driver ms: the mean; \"like it\": settings that complete "
            "on the same variations within %.0f%% of that row's worst case, shown as the simplest of them.\n", 100 * ADVISE_TIE);
    if (res.beyond)
      fprintf(stderr, "%d of %d variations ask for more than the limit itself (peak requested %s): no setting fits them; "
              "the settings are ranked on the other %d.\n", res.beyond, res.beyond + res.nvariations,
              fmt_bytes(res.beyond_peak, a, sizeof a), res.nvariations);
    if (best->r.trace_peak_reserved)
      fprintf(stderr, "PyTorch itself reserved %s when the snapshot was recorded.\n", fmt_bytes(best->r.trace_peak_reserved, a, sizeof a));
    if (res.pick >= 0) {
      say_pick(&res, caching, expandable);
      if (!best->fits)
        fprintf(stderr, "  No setting completes every variation under the limit: this one completes the recorded run and "
                "%d of %d variations, the most of any; a rerun like the other %d may still run out.\n", best->fits_variations,
                best->nvariations, best->nvariations - best->fits_variations);
    } else if (ao.budget) {
      say_needs(&res, ao.budget);
      if (inferred) fprintf(stderr, "The limit was inferred: the job ran under between %s and %s, and this plans for the low "
                            "end. If it ran under more, give the limit exactly: --limit BYTES, or --oom-message FILE|- with "
                            "PyTorch's out-of-memory text.\n", fmt_bytes(lim.ci.lo, a, sizeof a), fmt_bytes(lim.ci.hi, b, sizeof b));
    }
    else fprintf(stderr, "No setting completes on every variation on this device.\n");
    fprintf(stderr, "This assumes a rerun draws its iterations from those recorded and that its PyTorch's allocator "
            "behaves as the one modelled here (the snapshot's PyTorch version).\n");
    if (res.ends_in_oom)
      fprintf(stderr, "The snapshot ends at the OOM: it holds the job only up to there (%d iteration%s found). A rerun's later "
              "steps may ask for more than any step recorded here (peak requested %s): keep the headroom, or advise on the "
              "snapshot of a run that completed.\n", res.iterations, res.iterations == 1 ? "" : "s",
              fmt_bytes(res.peak_requested, a, sizeof a));
  }
  if (res.pick < 0) { advise_free(&res); return 1; }
  printf("PYTORCH_CUDA_ALLOC_CONF=%s\n", best->r.alloc_conf);
  advise_free(&res);
  return over_limit ? 1 : 0;   /* over the limit: the advice is for memory, but nothing completes under the limit */
}
