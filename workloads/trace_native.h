/* trace_native.h - fragbench's own trace format, written by `fragbench export` and read
 * back as the `native` trace reader:
 *
 *   # fragbench-trace v1
 *   op,id,size,stream,device
 *   alloc,140481030070272,16384,0,0
 *   free,140481030070272,,,0
 *   free,140481030070272,,recorded,0
 *   empty_cache,,,,0
 *   iter,,,,0
 *   alloc,140481030070784,4096,7,0,1
 *   empty_cache,,,,0,1
 *   pool_release,,,,0,1
 *
 * One row per event, in replay order; a field that does not apply to the op is empty. A
 * free's stream is empty, or `recorded` where the block was also used on other streams
 * (PyTorch's record_stream) and its free waited for them (EV_FREE_RECORDED).
 * An optional sixth field is the event's memory pool (event.h; rows without it are pool
 * 0, the general pool, so files without pools have 5 fields): an alloc served by private
 * pool 1, emptyCache(pool 1), and pool 1's release (its graph or MemPool went away).
 * Lines starting with '#' after the first are comments. */
#ifndef FB_TRACE_NATIVE_H
#define FB_TRACE_NATIVE_H
#include <stdio.h>
#include "event.h"

#define NATIVE_TRACE_MAGIC "# fragbench-trace v1"
#define NATIVE_TRACE_COLUMNS "op,id,size,stream,device"

/* 0, or -1 on a write error */
int native_trace_write_header(FILE *f);
int native_trace_write_event(FILE *f, const struct event *ev);

#endif
