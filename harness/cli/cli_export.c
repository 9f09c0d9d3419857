/* cli_export.c - `fragbench export`: any workload or trace written as the native trace
 * CSV (`# fragbench-trace v1`, then op,id,size,stream,device rows). */
#include "cli.h"
#include "options.h"
#include <string.h>
#include "trace_native.h"
#include "replay_open.h"
#include "trace_src.h"

/* the flags it takes (flags.def) */
static const char *const export_opts[] = {
  FLAGS_SELECTION, "--seed", "--out", "--quiet",
  NULL,
};

const struct cmd_def cmd_export_def = {
  "export", "(--workload W | --trace FILE) --out FILE   write the native trace CSV",
  "Writes any workload or trace as the native trace CSV (`# fragbench-trace v1`, then\n"
  "op,id,size,stream,device rows). The file appears under its name only when complete.\n",
  export_opts, cmd_export, NULL, NULL,
};

int cmd_export(struct cli_opts *o) {
  if (o->nworkloads + o->ntraces != 1 || !o->out) {
    fprintf(stderr, "fragbench export: give exactly one --workload W or --trace FILE, and --out FILE\n");
    return 2;
  }
  struct source src = {.workload = o->nworkloads ? o->workloads[0] : NULL, .trace = o->ntraces ? o->traces[0] : NULL,
                       .trace_device = o->trace_device};
  char err[FB_ERRLEN];
  struct workload w;
  struct workload_ctx ctx = {.world = 1, .seed = o->seed, .path = src.trace, .trace_device = src.trace_device};
  const struct workload_ops *ops;
  const char *params = NULL;
  struct trace_src tsrc;   /* the trace opened once: its format told from its first bytes, then read by that reader */
  if (src.trace) {
    ops = NULL;
    if (!src_open_path(&tsrc, src.trace, err)) {
      ops = trace_detect_src(&tsrc, src.trace, err);
      if (ops) ctx.src = &tsrc;   /* the reader owns it from here, failing or not */
      else src_close(&tsrc);
    }
  } else {
    char name[64];
    struct params tmp;
    ops = NULL;
    if (!params_parse_spec(src.workload, name, sizeof name, &tmp, err)) {
      ops = workload_find(name);
      if (!ops) replay_unknown_workload(name, err);
    }
    params = src.workload;
  }
  if (!ops || workload_open(&w, ops, params, &ctx, SIM_TOTAL_DEFAULT, err)) {
    fprintf(stderr, "fragbench export: %s\n", err);
    return 2;
  }
  /* the trace appears under its name only when complete: never a valid-looking part */
  struct outfile of;
  FILE *f = outfile_open(&of, o->out, "the trace");
  if (!f) { workload_close(&w); return 2; }
  native_trace_write_header(f);
  struct event ev;
  int rc;
  uint64_t n = 0;
  while ((rc = workload_next(&w, &ev, err)) == 1) { native_trace_write_event(f, &ev); n++; }
  workload_close(&w);
  if (rc < 0) {
    outfile_abort(&of);
    fprintf(stderr, "fragbench export: %s\n", err);
    return 2;
  }
  if (outfile_finish(&of, 1)) return 2;
  if (!o->quiet) fprintf(stderr, "fragbench export: %llu events to %s\n", (unsigned long long)n, o->out);
  return 0;
}
