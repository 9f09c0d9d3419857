/* cli_percall.c - `fragbench percall`: host ns per allocator call, measured the way
 * PyTorch's own allocators are in tests/probes/torch_percall.sh, each input x strategy
 * replayed --passes times in this one process (the trace read once, held in memory), two
 * ways, the fastest pass of each counting:
 *   fresh  each pass a new strategy, its pool grown from empty: run's ns_per_op;
 *   warm   every pass on one strategy, its cache kept from the pass before (what the last
 *          pass left live freed untimed): what torch_percall.cpp measures of PyTorch,
 *          whose best pass is one that finds its cache already grown.
 * The figure is run's ns_per_op (the strategy's call with the harness's bookkeeping around
 * it; on cuda, driver time excluded). One line per input x strategy on stdout (both
 * figures, then every pass's), the fastest fresh pass's row in the run CSV format with
 * --out. Passes run one after another: nothing else is timed beside them. */
#include "cli.h"
#include "options.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the flags it takes (flags.def) */
static const char *const percall_opts[] = {
  FLAGS_SELECTION,
  "--allocator", "--alloc-conf",
  "--device", "--sim-total", "--sim-usable",
  "--passes",
  "--out", "--quiet",
  NULL,
};

const struct cmd_def cmd_percall_def = {
  "percall", "[selection] [--passes 5]   host ns per allocator call, fastest of N passes in one process",
  "Each input x strategy replayed --passes times in this one process, the fastest pass's\n"
  "ns_per_op counting, two ways: fresh (a new strategy each pass, its pool grown from empty:\n"
  "run's figure) and warm (every pass on one strategy, its cache kept from the pass before,\n"
  "as tests/probes/torch_percall.sh times PyTorch's own allocators: best of 5 passes in one\n"
  "process). On cuda the driver's time is left out.\n",
  percall_opts, cmd_percall,
  "Exit status: 0 every pass completed; 1 a pass did not (its status named); 2 bad usage.\n", NULL,
};

int cmd_percall(struct cli_opts *o) {
  if (!o->nworkloads && !o->ntraces) {
    fprintf(stderr, "fragbench percall: nothing to replay: give --trace FILE or --workload NAME\n");
    return 2;
  }
  struct cli_rows rows;
  int rc = cli_rows(o, &rows);
  if (rc) return rc;
  struct output out;
  if (output_open(&out, o->out ? o->out : "/dev/null")) return 2;
  out.quiet = 1;
  int worst = 0;
  printf("%-34s %-12s %-5s %10s %10s  %s\n", "input", "allocator", "dev", "fresh", "warm", "every pass, ns/op (fresh | warm)");
  double *warm = calloc((size_t)o->passes, sizeof *warm);
  if (!warm) { fprintf(stderr, "fragbench percall: out of host memory\n"); output_finish(&out, 0); return 1; }
  for (int si = 0; si < rows.nsrc && worst < 2; si++)
    for (int ai = 0; ai < rows.nalloc && worst < 2; ai++) {
      struct run_spec s;
      cli_spec(o, &rows.cfg, &rows.src[si], &s);
      s.allocator = rows.allocs[ai];
      s.quiet = 1;
      s.progress = 0;
      struct run_result best, r;
      char passes[1024] = "";
      size_t k = 0;
      int got = 0, failed = 0;
      for (int p = 0; p <= o->passes && !failed; p++) {   /* o->passes fresh ones, then one with the warm passes after it */
        int warm_run = p == o->passes;
        s.warm_passes = warm_run ? o->passes - 1 : 0;
        s.warm_ns = warm_run ? warm : NULL;
        run_result_init(&r);
        int cls = replay_run(&s, &r);
        if (cls || strncmp(r.status, "ok", 2) || isnan(r.ns_per_op)) {
          fprintf(stderr, "fragbench percall: %s x %s: pass %d: %s\n", r.workload[0] ? r.workload : "?", rows.allocs[ai], p + 1, r.status);
          if (cls > worst) worst = cls;
          if (!cls && worst < 1) worst = 1;
          failed = 1;
          break;
        }
        if (warm_run) {
          double wbest = r.ns_per_op;
          if (k < sizeof passes) k += (size_t)snprintf(passes + k, sizeof passes - k, " | %.1f", r.ns_per_op);
          for (int w = 0; w < o->passes - 1; w++) {
            if (isnan(warm[w])) {   /* a warm pass that did not complete: said, and no warm figure */
              fprintf(stderr, "fragbench percall: %s x %s: warm pass %d did not complete\n", r.workload, rows.allocs[ai], w + 2);
              if (worst < 1) worst = 1;
              wbest = NAN;
              break;
            }
            if (warm[w] < wbest) wbest = warm[w];
            if (k < sizeof passes) k += (size_t)snprintf(passes + k, sizeof passes - k, " %.1f", warm[w]);
          }
          output_row(&out, &best);
          printf("%-34s %-12s %-5s %10.1f %10.1f  %s\n", best.workload, best.allocator, best.device, best.ns_per_op, wbest, passes);
          break;
        }
        if (k < sizeof passes) k += (size_t)snprintf(passes + k, sizeof passes - k, "%s%.1f", p ? " " : "", r.ns_per_op);
        if (!got || r.ns_per_op < best.ns_per_op) best = r;
        got = 1;
      }
    }
  free(warm);
  if (output_finish(&out, worst == 0) && worst < 2) worst = 2;
  return worst;
}
