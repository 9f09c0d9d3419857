/* cli_percall.c - `fragbench percall`: host ns per allocator call, measured the way
 * PyTorch's own allocators are in tests/probes/torch_percall.sh: each input x strategy
 * replayed --passes times in this one process (the trace read once, held in memory), the
 * fastest pass counts - a warm process on both sides, its first pass paying for the pages
 * and caches it touches first. The figure is run's ns_per_op (the strategy's call with the
 * harness's bookkeeping around it; on cuda, driver time excluded). One line per input x
 * strategy on stdout (every pass's figure), the fastest pass's row in the run CSV format
 * with --out. Passes run one after another: nothing else is timed beside them. */
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
  "Each input x strategy replayed --passes times in this one process; the fastest pass's\n"
  "ns_per_op counts, as PyTorch's own allocators are timed (tests/probes/torch_percall.sh:\n"
  "best of 5 passes in one process). On cuda the driver's time is left out.\n",
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
  printf("%-34s %-12s %-5s %10s  %s\n", "input", "allocator", "dev", "best ns/op", "every pass (ns/op)");
  for (int si = 0; si < rows.nsrc && worst < 2; si++)
    for (int ai = 0; ai < rows.nalloc && worst < 2; ai++) {
      struct run_spec s;
      cli_spec(o, &rows.cfg, &rows.src[si], &s);
      s.allocator = rows.allocs[ai];
      s.quiet = 1;
      s.progress = 0;
      struct run_result best, r;
      char passes[512] = "";
      size_t k = 0;
      int got = 0;
      for (int p = 0; p < o->passes; p++) {
        run_result_init(&r);
        int cls = replay_run(&s, &r);
        if (cls || strncmp(r.status, "ok", 2) || isnan(r.ns_per_op)) {
          fprintf(stderr, "fragbench percall: %s x %s: pass %d: %s\n", r.workload[0] ? r.workload : "?", rows.allocs[ai], p + 1, r.status);
          if (cls > worst) worst = cls;
          if (!cls && worst < 1) worst = 1;
          break;
        }
        if (k < sizeof passes) k += (size_t)snprintf(passes + k, sizeof passes - k, "%s%.1f", p ? " " : "", r.ns_per_op);
        if (!got || r.ns_per_op < best.ns_per_op) best = r;
        got = 1;
      }
      if (!got) continue;
      output_row(&out, &best);
      printf("%-34s %-12s %-5s %10.1f  %s\n", best.workload, best.allocator, best.device, best.ns_per_op, passes);
    }
  if (output_finish(&out, worst == 0) && worst < 2) worst = 2;
  return worst;
}
