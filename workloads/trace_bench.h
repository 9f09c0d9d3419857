/* trace_bench.h - reading speed of the snapshot reader (trace_bench.c), for
 * `fragbench readspeed` (harness/cli/cli_readspeed.c holds its options). */
#ifndef FB_TRACE_BENCH_H
#define FB_TRACE_BENCH_H
#include <stdint.h>

/* Time reading each of files (none: tests/data's snapshots and a synthetic snapshot of
 * nevents events x nframes stack frames). Prints one line per input and a closing
 * "pickle reading: X MB/s (target >= 50)" line with the slowest input's figure.
 * 0, or 1 if an input could not be read (its name on stderr). */
int trace_bench(const char *const *files, int nfiles, uint64_t nevents, int nframes);

#endif
