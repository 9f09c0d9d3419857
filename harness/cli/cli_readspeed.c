/* cli_readspeed.c - `fragbench readspeed [FILE...]`: the snapshot reader's MB/s (the
 * reading itself is workloads/trace_bench.c); its flag list and positional arguments
 * FILE... (readspeed_args), read by options.c as every subcommand's. */
#include "cli.h"
#include "options.h"
#include "trace_bench.h"

/* the flags it takes (flags.def) */
static const char *const readspeed_opts[] = {
  "--events", "--frames",
  NULL,
};
static const struct arg_def readspeed_args[] = {
  {"FILE", 1, "a PyTorch snapshot (.pickle, .pickle.gz) to read; none: tests/data's\n"
   "snapshots and a synthetic one of --events x --frames"},
  {NULL, 0, NULL},
};

const struct cmd_def cmd_readspeed_def = {
  "readspeed", "[--events N] [--frames K] [FILE...]   snapshot reading MB/s",
  "Times the snapshot reader on the whole job a replay asks of it (open with its pre-scan\n"
  "pass, then every event): one line per input with its MB/s of uncompressed pickle and how\n"
  "much the process grew while reading it, then the slowest input's figure.\n",
  readspeed_opts, cmd_readspeed,
  "Exit status: 0 every input read; 1 an input could not be read (named on stderr); 2 bad usage.\n",
  .args = readspeed_args,
};

int cmd_readspeed(struct cli_opts *o) {
  return trace_bench(o->args, o->nargs, o->events, o->frames);
}
