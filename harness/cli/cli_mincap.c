/* cli_mincap.c - `fragbench mincap`: for every source (workload or device trace) x
 * allocator, the smallest cap that completes (mincap.c), one CSV row each: the surviving
 * run's metrics with cap_bytes = mincap_bytes and mincap_x = mincap_bytes / peak_requested. */
#include "cli.h"
#include "options.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mincap.h"
#include "row_pool.h"
#include "results_read.h"
#include "model_bound.h"
#include "cap_infer.h"
#include "limit.h"
#include "replay_open.h"
#include "uncapped_rows.h"

/* the flags it takes (flags.def) */
static const char *const mincap_opts[] = {
  FLAGS_SELECTION, FLAGS_STRATEGY, FLAGS_DEVICE, FLAGS_LIMIT, "--precision", "--confirm-on", "--found", "--uncapped", "--known", FLAGS_CHECKS, "--out",
  "--quiet",
  NULL,
};

const struct cmd_def cmd_mincap_def = {
  "mincap", "[selection] [--precision 0.005] [--confirm-on cuda]   smallest cap that completes",
  "For every input x strategy, the smallest cap under which the replay completes (one CSV\n"
  "row each: cap_bytes = mincap_bytes, mincap_x = mincap_bytes / peak_requested). A limit\n"
  "(--limit, or the one a snapshot's OOM implies) is where each strategy's need is placed:\n"
  "below, inside or above it. --found FILE.csv (an earlier mincap's rows, the same inputs and\n"
  "strategies): each cap replayed once from there instead of searched - make bench searches on\n"
  "the CPU while the GPU replays the uncapped rows, then confirms the caps found (--confirm-on).\n"
  "A search starts from the input's uncapped row in --uncapped FILE (on the search's device)\n"
  "instead of replaying it, and a probe at a cap under which a row of --known FILE ran out\n"
  "takes that row's outcome: make bench's searches on the GPU reuse its uncapped rows and cap\n"
  "sweep.\n",
  mincap_opts, cmd_mincap, NULL, NULL,
};

/* the searches of one command: task i = source i / nalloc x strategy i % nalloc */
struct mincap_job {
  const struct cli_opts *o;
  const struct source *src;
  struct run_spec spec[CLI_MAX * 4];
  struct limit *lim;
  const char *const *allocs;
  int nalloc;
  struct output *out;
  const struct device_config *confirm;
  struct run_result *res;
  int *cls;
  int progress, pooled, worst, nconfirmed, ndisagree;
  struct row_pool_line line;      /* one progress line for the searches */
  struct results *found;          /* --found: the rows of an earlier search, row i for task i */
  struct results *uncapped;       /* --uncapped: the inputs' uncapped rows (on the confirming device, or the search's) */
  struct results *known;          /* --known: rows under caps on the search's device */
  const char *kind;               /* the search's device kind (rows of --uncapped and --known must be on it) */
  int nby_uncapped;               /* confirmations made by such a row */
  int nbelow_floor;               /* confirmations whose step below is under the peak requested (not replayed) */
  int *nknown;                    /* per task: probes answered by a row of --uncapped or --known */
};

/* --uncapped: the row of r's input and strategy, no cap, on the confirming device; 0 with
 * *u filled, or -1 where there is none */
static int uncapped_row(const struct mincap_job *j, const struct run_result *r, struct run_result *u) {
  int i = uncapped_row_find(j->uncapped, r->workload, r->allocator, r->params, r->seed, j->o->confirm_on, 0);
  if (i < 0) return -1;
  uncapped_row_read(j->uncapped, i, u);
  return 0;
}

/* --found: task i's row of the earlier search replayed at its cap (or uncapped where it
 * found none) - the search's surviving run, replayed once - and checked to be that row:
 * the same input, strategy, status and peak reserved; else an error naming the row */
static int replay_found(struct mincap_job *j, int i, const struct run_spec *base, struct run_result *r) {
  const struct results *t = j->found;
  run_result_init(r);
  if (i >= t->nrows) {
    snprintf(r->status, sizeof r->status, "error: %s has %d rows; row %d was asked for (the same inputs and strategies, in order)", t->path, t->nrows, i + 1);
    return r->exit_class = 2;
  }
  int ok = 1;
  uint64_t cap = results_u64(t, i, "mincap_bytes", &ok);
  struct run_spec s = mincap_probe_spec(base, ok ? cap : 0);
  int cls = replay_run(&s, r);
  const char *status = results_get(t, i, "status");
  char want[64];
  snprintf(want, sizeof want, "%s", results_get(t, i, "peak_reserved"));
  char got[32];
  snprintf(got, sizeof got, "%llu", (unsigned long long)r->peak_reserved);
  if (strcmp(results_get(t, i, "workload"), r->workload) || strcmp(results_get(t, i, "allocator"), r->allocator) ||
      strcmp(results_get(t, i, "params"), r->params)) {
    snprintf(r->status, sizeof r->status, "error: %s line %d is %.100s x %.60s, not %.100s x %.60s (the same inputs and strategies, in order)",
             t->path, t->row_line[i], results_get(t, i, "workload"), results_get(t, i, "allocator"), r->workload, r->allocator);
    return r->exit_class = 2;
  }
  if (cls || strcmp(got, want) || strncmp(status, r->status, 2)) {
    char ended[64];
    snprintf(ended, sizeof ended, "%.60s", r->status);
    snprintf(r->status, sizeof r->status, "error: %s line %d: replayed at %llu bytes it ends '%.60s' with %s reserved, the row says '%.60s' with %s "
             "(written by another binary or other settings?)", t->path, t->row_line[i], (unsigned long long)s.cap_bytes, ended, got, status, want);
    return r->exit_class = 2;
  }
  if (ok && cap) {   /* the search's row: its cap, and what the search said of it */
    r->mincap_bytes = cap;
    r->mincap_x = results_num(t, i, "mincap_x", NULL);
    r->cap_bytes = cap;
    snprintf(r->status, sizeof r->status, "%s", status);
    model_bound_row(&s, r);
  }
  return r->exit_class;
}

/* A search's known runs (searching, not confirming): its uncapped row in --uncapped that
 * completed (*row: that row whole, which stands for the runs under caps it never reached
 * where the strategy makes it under them: uncapped_rows.h), and the caps under which its
 * rows in --known ran out ("oom", not completed), all on the search's device. The input's
 * label and the strategy's params are a row's own: replay_identity names them without a
 * replay. 0, or -1 (out of host memory). */
static int known_runs(const struct mincap_job *j, const struct run_spec *s, struct mincap_known *k, struct run_result *row) {
  memset(k, 0, sizeof *k);
  if (!j->uncapped && !j->known) return 0;
  struct run_result d;
  char err[FB_ERRLEN];
  run_result_init(&d);
  if (replay_identity(s, &d, err)) return 0;   /* the search itself will say what is wrong */
  int u = uncapped_row_find(j->uncapped, d.workload, d.allocator, d.params, s->seed, j->kind, 1);
  if (u >= 0) {
    uncapped_row_read(j->uncapped, u, row);
    k->uncapped = 1;
    k->peak_requested = row->peak_requested;
    k->peak_reserved = row->peak_reserved;
    k->row = row;
    k->blind = d.blind_unreached;
  }
  const struct results *t = j->known;
  uint64_t *caps = NULL;
  for (int i = 0; t && i < t->nrows; i++) {
    uint64_t cap = results_u64(t, i, "cap_bytes", NULL);
    if (!cap || !results_same_input(t, i, d.workload, d.allocator, d.params, s->seed, j->kind) ||
        strncmp(results_get(t, i, "status"), "oom", 3) || results_u64(t, i, "completed", NULL))
      continue;
    uint64_t *c = realloc(caps, (size_t)(k->nran_out + 1) * sizeof *c);
    if (!c) { free(caps); return -1; }
    caps = c;
    caps[k->nran_out++] = cap;
  }
  k->ran_out = caps;
  return 0;
}

static void mincap_task(int i, void *ctx) {
  struct mincap_job *j = ctx;
  struct run_spec s = j->spec[i / j->nalloc];
  s.allocator = j->allocs[i % j->nalloc];
  if (j->found) { j->cls[i] = replay_found(j, i, &s, &j->res[i]); return; }
  struct mincap_known k;
  struct run_result *row = malloc(sizeof *row);   /* a run_result is large for a worker's stack */
  if (!row || known_runs(j, &s, &k, row)) {
    free(row);
    run_result_init(&j->res[i]);
    snprintf(j->res[i].status, sizeof j->res[i].status, "error: out of host memory");
    j->cls[i] = j->res[i].exit_class = 1;
    return;
  }
  struct mincap_report rep;
  j->cls[i] = mincap_find_known(&s, j->o->precision, j->progress && j->pooled == 1, &k, &j->res[i], &rep);   /* probe lines only one at a time */
  j->nknown[i] = rep.known;
  free((void *)k.ran_out);
  free(row);
}

static void mincap_wait(int k, int n, int running, void *ctx) { row_pool_line_wait(&((struct mincap_job *)ctx)->line, k, n, running); }

/* search i done (and all before it): its source's limit said before its first row, the
 * row confirmed on the other device, written, placed against the limit; nonzero stops */
static int mincap_done(int i, void *ctx) {
  struct mincap_job *j = ctx;
  const struct cli_opts *o = j->o;
  int si = i / j->nalloc, ai = i % j->nalloc;
  struct limit *lim = &j->lim[si];
  struct run_result *rp = &j->res[i], r = *rp;
  int cls = j->cls[i];
  row_pool_line_clear(&j->line);
  struct cap_inference ci = lim->ci;
  if (ai == 0) {
    if (lim->from == LIMIT_INFERRED && !o->quiet) {
      char line[1024];
      cap_infer_evidence(&ci, line, sizeof line);
      fprintf(stderr, "fragbench: %s %s\n", j->src[si].trace, line);
    }
    if (si == 0 || lim->from == LIMIT_INFERRED) cli_say_limit(o, lim);
  }
  if (lim->from == LIMIT_GIVEN || lim->from == LIMIT_OOM_MESSAGE) {   /* one limit: an interval of one byte */
    ci.has_oom = 1;
    ci.lo = lim->bytes;
    ci.hi = lim->bytes + 1;
  }
  if (cls == 2 && !r.allocator[0] && !r.workload[0]) {
    fprintf(stderr, "fragbench: %s\n", r.status + 7);
    j->worst = 2;
    return 1;
  }
  if (j->confirm && !cls && r.mincap_bytes) {
    char msg[FB_ERRLEN];
    struct run_spec s = j->spec[si];
    s.allocator = j->allocs[ai];
    struct run_result u;
    const struct run_result *up = j->uncapped && !uncapped_row(j, &r, &u) ? &u : NULL;
    if (mincap_uncapped_stands(&r, up)) j->nby_uncapped++;
    if (mincap_below_floor(&r, o->precision)) j->nbelow_floor++;
    int ok = mincap_confirm(&s, j->confirm, &r, up, o->precision, msg, sizeof msg, NULL);
    if (ok == 1) {
      j->nconfirmed++;
      if (!o->quiet) fprintf(stderr, "mincap: %s x %s: confirmed on %s: %s\n", r.workload, r.allocator, o->confirm_on, msg);
    } else {
      j->ndisagree++;
      fprintf(stderr, "fragbench: MINCAP NOT CONFIRMED on %s: %s x %s: %s\n", o->confirm_on, r.workload, r.allocator, msg);
      snprintf(r.status, sizeof r.status, "error: not confirmed on %s: %.400s", o->confirm_on, msg);
      r.exit_class = cls = 1;
    }
  }
  if (lim->from == LIMIT_INFERRED) { r.cap_lo = ci.lo; r.cap_hi = ci.hi; }
  output_row(j->out, &r);
  if (ci.has_oom && r.mincap_bytes && !o->quiet) {
    char a[32];
    const char *place = cap_infer_place(&ci, r.mincap_bytes);
    fprintf(stderr, "fragbench: %s x %s: needs %s: %s the limit%s%s\n", r.workload, r.allocator,
            fmt_bytes(r.mincap_bytes, a, sizeof a), !strcmp(place, "inside") ? "inside the interval of" : place,
            lim->from == LIMIT_INFERRED ? " the job ran under" : "",
            !strcmp(place, "below") ? " (completes under it)" : !strcmp(place, "above") ? " (fails under it)" : "");
  }
  if (cls) fprintf(stderr, "fragbench: %s x %s: %s\n", r.workload, r.allocator[0] ? r.allocator : j->allocs[ai], r.status);
  else if (!strncmp(r.status, "ok: ", 4) && !o->quiet)
    fprintf(stderr, "fragbench: %s x %s: %s\n", r.workload, r.allocator, r.status);
  if (cls > j->worst) j->worst = cls;
  return cls == 2;
}

/* a results file a flag names, loaded into t (nothing where the flag is not given); 0, or 2
 * with the message said */
static int load_rows(const char *flag, const char *path, struct results *t) {
  char err[FB_ERRLEN];
  memset(t, 0, sizeof *t);
  if (!path || !results_load(path, t, err, sizeof err)) return 0;
  fprintf(stderr, "fragbench mincap: %s %s\n", flag, err);
  return 2;
}

int cmd_mincap(struct cli_opts *o) {
  if (!o->nworkloads && !o->ntraces) {
    fprintf(stderr, "fragbench mincap: nothing to replay: give --workload NAME or --trace FILE (see fragbench list)\n");
    return 2;
  }
  if (o->ncaps > 1) {
    fprintf(stderr, "fragbench mincap: one limit (--limit or --cap-bytes) at most: mincap finds each cap itself and "
            "places it against the limit\n");
    return 2;
  }
  if (o->on_oom == ON_OOM_SKIP) {
    fprintf(stderr, "fragbench mincap: --on-oom skip does not apply: a cap completes only without an OOM\n");
    return 2;
  }
  if (o->timeline || o->devices) {
    fprintf(stderr, "fragbench mincap: %s is not available for mincap\n", o->timeline ? "--timeline" : "--devices");
    return 2;
  }
  if (o->uncapped && o->found && !o->confirm_on) {
    fprintf(stderr, "fragbench mincap: --uncapped with --found names rows on the device of --confirm-on: give --confirm-on too\n");
    return 2;
  }
  if (o->known && o->found) {
    fprintf(stderr, "fragbench mincap: --known answers a search's probes; with --found nothing is searched\n");
    return 2;
  }
  struct cli_rows rows;
  int rc = cli_rows(o, &rows);
  if (rc) return rc;

  struct device_config confirm_cfg = {0};
  if (o->confirm_on) {
    struct cli_opts c = *o;
    c.device = o->confirm_on;
    c.quiet = 1;
    if (cli_pick_device(&c, &confirm_cfg)) return 1;
  }
  struct output out;
  if (output_open(&out, o->out)) return 2;
  out.quiet = o->quiet;
  struct mincap_job job = {.o = o, .allocs = rows.allocs, .nalloc = rows.nalloc, .out = &out, .confirm = o->confirm_on ? &confirm_cfg : NULL};
  job.src = rows.src;
  job.kind = rows.cfg.kind ? rows.cfg.kind : "sim";
  size_t ntask = (size_t)(rows.nsrc > 0 && rows.nalloc > 0 ? rows.nsrc * rows.nalloc : 1);
  job.lim = calloc((size_t)(rows.nsrc ? rows.nsrc : 1), sizeof *job.lim);
  job.res = calloc(ntask, sizeof *job.res);
  job.cls = calloc(ntask, sizeof *job.cls);
  job.nknown = calloc(ntask, sizeof *job.nknown);
  struct results found = {0}, uncapped = {0}, known = {0};
  if (!job.lim || !job.res || !job.cls || !job.nknown) {
    fprintf(stderr, "fragbench: out of host memory\n");
    rc = 1;
  } else {
    rc = load_rows("--found", o->found, &found);
    if (!rc) rc = load_rows("--uncapped", o->uncapped, &uncapped);
    if (!rc) rc = load_rows("--known", o->known, &known);
  }
  if (rc) {
    results_free(&found);
    results_free(&uncapped);
    free(job.lim); free(job.res); free(job.cls); free(job.nknown);
    output_abort(&out);
    return rc;
  }
  if (o->found) job.found = &found;
  if (o->uncapped) job.uncapped = &uncapped;
  if (o->known) job.known = &known;
  /* every source's limit, resolved before the searches start (said when its first row is
   * written); a source whose limit cannot be resolved ends the rows there, as it did */
  char lim_err[FB_ERRLEN] = "";
  int nok = 0;
  for (; nok < rows.nsrc; nok++) {
    struct limit_ask ask = {.ngiven = o->ncaps, .given_bytes = cli_limit_on(o, &rows.cfg), .oom_message = o->oom_message,
                            .no_infer = o->no_infer_cap, .trace = rows.src[nok].trace, .trace_device = rows.src[nok].trace_device,
                            .trust_message = o->trust_message};
    if (limit_resolve(&ask, &job.lim[nok], lim_err)) break;
  }
  /* the searches on every core where they run on sim (a GPU's one after another on it),
   * each row written, confirmed and explained in order on this thread */
  job.progress = !o->quiet && isatty(2);
  job.pooled = row_pool_threads_on(job.kind);
  for (int si = 0; si < nok; si++) cli_spec(o, &rows.cfg, &rows.src[si], &job.spec[si]);
  row_pool_line_start(&job.line, "mincap", "searches", job.progress);
  row_pool_run(nok * rows.nalloc, job.pooled, mincap_task, mincap_done, mincap_wait, &job);
  row_pool_line_end(&job.line);
  results_free(&found);
  results_free(&uncapped);
  results_free(&known);
  int nknown = 0;
  for (int i = 0; i < nok * rows.nalloc; i++) nknown += job.nknown[i];
  if (!o->found && (o->uncapped || o->known) && !o->quiet)
    fprintf(stderr, "mincap: %d probe%s answered by rows of %s instead of replayed\n", nknown, nknown == 1 ? "" : "s",
            o->uncapped && o->known ? "--uncapped and --known" : o->uncapped ? "--uncapped" : "--known");
  int worst = job.worst;
  if (nok < rows.nsrc && worst < 2) {   /* where the rows stopped: the limit of the next source */
    fprintf(stderr, "fragbench: %s\n", lim_err);
    worst = 2;
  }
  free(job.lim);
  free(job.res);
  free(job.cls);
  free(job.nknown);
  if (output_finish(&out, worst == 0) && worst < 2) worst = 2;   /* --out only when every row was found */
  if (o->confirm_on) {
    char by[96] = "", floor[128] = "";
    if (job.nby_uncapped) snprintf(by, sizeof by, " (%d at the mincap by their uncapped row there)", job.nby_uncapped);
    if (job.nbelow_floor)
      snprintf(floor, sizeof floor, " (%d one step below under their peak requested, where no run fits: not replayed)", job.nbelow_floor);
    fprintf(stderr, "mincap: %d of %d found caps confirmed on %s%s%s%s\n", job.nconfirmed, job.nconfirmed + job.ndisagree, o->confirm_on,
            by, floor, job.ndisagree ? " - SEE THE ERRORS ABOVE" : "");
  }
  return worst;
}
