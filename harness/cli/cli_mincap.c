/* cli_mincap.c - `fragbench mincap`: for every source (workload or device trace) x
 * allocator, the smallest cap that completes (mincap.c), one CSV row each: the surviving
 * run's metrics with cap_bytes = mincap_bytes and mincap_x = mincap_bytes / peak_requested. */
#include "cli.h"
#include "options.h"
#include <string.h>
#include <unistd.h>
#include "mincap.h"
#include "cap_infer.h"
#include "limit.h"

/* the flags it takes (flags.def) */
static const char *const mincap_opts[] = {
  FLAGS_SELECTION, FLAGS_STRATEGY, FLAGS_DEVICE, FLAGS_LIMIT, "--precision", "--confirm-on", FLAGS_CHECKS, "--out",
  "--quiet",
  NULL,
};

const struct cmd_def cmd_mincap_def = {
  "mincap", "[selection] [--precision 0.005] [--confirm-on cuda]   smallest cap that completes",
  "For every input x strategy, the smallest cap under which the replay completes (one CSV\n"
  "row each: cap_bytes = mincap_bytes, mincap_x = mincap_bytes / peak_requested). A limit\n"
  "(--limit, or the one a snapshot's OOM implies) is where each strategy's need is placed:\n"
  "below, inside or above it.\n",
  mincap_opts, cmd_mincap, NULL, NULL,
};

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
  static const char *default_alloc[] = {"raw"};
  const char **allocs = o->nallocators ? o->allocators : default_alloc;
  int nalloc = o->nallocators ? o->nallocators : 1;
  struct device_config cfg;
  if (cli_pick_device(o, &cfg)) return 1;
  struct source src[CLI_MAX * 4];
  int nsrc;
  if (cli_sources(o, src, CLI_MAX * 4, &nsrc)) return 2;

  struct device_config confirm_cfg = {0};
  int nconfirmed = 0, ndisagree = 0;
  if (o->confirm_on) {
    struct cli_opts c = *o;
    c.device = o->confirm_on;
    c.quiet = 1;
    if (cli_pick_device(&c, &confirm_cfg)) return 1;
  }
  struct output out;
  if (output_open(&out, o->out)) return 2;
  out.quiet = o->quiet;
  int progress = !o->quiet && isatty(2);
  int worst = 0;
  for (int si = 0; si < nsrc && worst < 2; si++) {
    struct run_spec s;
    cli_spec(o, &cfg, &src[si], &s);
    /* a snapshot that ended in an OOM: where each strategy's need falls against its limit */
    /* the limit each strategy's need is placed against: given, from the OOM message, or
     * inferred from a snapshot that ended in an OOM (limit.h) */
    struct limit lim;
    struct limit_ask ask = {.ngiven = o->ncaps, .given_bytes = cli_limit_on(o, &cfg), .oom_message = o->oom_message,
                            .no_infer = o->no_infer_cap, .trace = src[si].trace, .trace_device = src[si].trace_device,
                            .trust_message = o->trust_message};
    char err[FB_ERRLEN];
    if (limit_resolve(&ask, &lim, err)) { fprintf(stderr, "fragbench: %s\n", err); worst = 2; break; }
    struct cap_inference ci = lim.ci;
    if (lim.from == LIMIT_INFERRED && !o->quiet) {
      char line[1024];
      cap_infer_evidence(&ci, line, sizeof line);
      fprintf(stderr, "fragbench: %s %s\n", src[si].trace, line);
    }
    if (si == 0 || lim.from == LIMIT_INFERRED) cli_say_limit(o, &lim);
    if (lim.from == LIMIT_GIVEN || lim.from == LIMIT_OOM_MESSAGE) {   /* one limit: an interval of one byte */
      ci.has_oom = 1;
      ci.lo = lim.bytes;
      ci.hi = lim.bytes + 1;
    }
    for (int ai = 0; ai < nalloc; ai++) {
      s.allocator = allocs[ai];
      struct run_result r;
      int cls = mincap_find(&s, o->precision, progress, &r, NULL);
      if (cls == 2 && !r.allocator[0] && !r.workload[0]) {
        fprintf(stderr, "fragbench: %s\n", r.status + 7);
        worst = 2;
        break;
      }
      if (o->confirm_on && !cls && r.mincap_bytes) {
        char msg[FB_ERRLEN];
        int ok = mincap_confirm(&s, &confirm_cfg, &r, o->precision, msg, sizeof msg, NULL);
        if (ok == 1) {
          nconfirmed++;
          if (!o->quiet) fprintf(stderr, "mincap: %s x %s: confirmed on %s: %s\n", r.workload, r.allocator, o->confirm_on, msg);
        } else {
          ndisagree++;
          fprintf(stderr, "fragbench: MINCAP NOT CONFIRMED on %s: %s x %s: %s\n", o->confirm_on, r.workload, r.allocator, msg);
          snprintf(r.status, sizeof r.status, "error: not confirmed on %s: %.400s", o->confirm_on, msg);
          r.exit_class = cls = 1;
        }
      }
      if (lim.from == LIMIT_INFERRED) { r.cap_lo = ci.lo; r.cap_hi = ci.hi; }
      output_row(&out, &r);
      if (ci.has_oom && r.mincap_bytes && !o->quiet) {
        char a[32];
        const char *place = cap_infer_place(&ci, r.mincap_bytes);
        fprintf(stderr, "fragbench: %s x %s: needs %s: %s the limit%s%s\n", r.workload, r.allocator,
                fmt_bytes(r.mincap_bytes, a, sizeof a), !strcmp(place, "inside") ? "inside the interval of" : place,
                lim.from == LIMIT_INFERRED ? " the job ran under" : "",
                !strcmp(place, "below") ? " (completes under it)" : !strcmp(place, "above") ? " (fails under it)" : "");
      }
      if (cls) fprintf(stderr, "fragbench: %s x %s: %s\n", r.workload, r.allocator[0] ? r.allocator : allocs[ai], r.status);
      else if (!strncmp(r.status, "ok: ", 4) && !o->quiet)
        fprintf(stderr, "fragbench: %s x %s: %s\n", r.workload, r.allocator, r.status);
      if (cls > worst) worst = cls;
      if (cls == 2) break;
    }
  }
  if (output_finish(&out, worst == 0) && worst < 2) worst = 2;   /* --out only when every row was found */
  if (o->confirm_on)
    fprintf(stderr, "mincap: %d of %d found caps confirmed on %s%s\n", nconfirmed, nconfirmed + ndisagree, o->confirm_on,
            ndisagree ? " - SEE THE ERRORS ABOVE" : "");
  return worst;
}
