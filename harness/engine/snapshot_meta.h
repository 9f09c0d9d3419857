/* snapshot_meta.h - the side file scripts/capture.py writes next to a snapshot
 * (DIR/snapshot.pickle.gz -> DIR/snapshot.meta.json): what a replay needs that the
 * snapshot does not record - the exact limit the job ran under (memory fraction x the
 * device's total, as PyTorch computes it), PYTORCH_CUDA_ALLOC_CONF, the torch version, the
 * device. Read without being asked whenever a snapshot is opened where a limit matters
 * (limit.c: explain, advise, fit --trace, mincap, run of one snapshot); --limit and
 * --oom-message override it.
 *
 * The file is one flat JSON object (strings, numbers, true/false/null; no nesting):
 *   "format": "fragbench-capture 1"        required
 *   "limit_bytes": N                       required, a positive integer
 *   "limit_source": "fraction"|"reserved_plus_free"|"total"
 *   "memory_fraction": F|null              when a float: limit_bytes must equal
 *   "device_total_bytes": N                  (uint64)(F x device_total_bytes), PyTorch's formula
 *   "alloc_conf": "k:v,..."  "alloc_conf_var": "PYTORCH_CUDA_ALLOC_CONF"
 *   "torch_version", "device_name", "oom_via", "failed_request_bytes", "observer_*", ...
 * Other keys are kept out of the way (read, not used). */
#ifndef FB_SNAPSHOT_META_H
#define FB_SNAPSHOT_META_H
#include <stddef.h>
#include <stdint.h>
#include "event.h"

struct snapshot_meta {
  char path[1024];              /* the side file read */
  uint64_t limit_bytes;
  uint64_t device_total;        /* 0: not given */
  double fraction;              /* 0: none set */
  char limit_source[32];
  char alloc_conf[512];         /* "" when the job ran with none */
  char torch_version[64];
  char device_name[128];
};

/* The side file's name for a snapshot path: its stem (the name less .pickle.gz, .pkl.gz,
 * .pickle, .pkl, .gz) + ".meta.json". 0, or -1 when it does not fit in n. */
int snapshot_meta_path(const char *snapshot, char *out, size_t n);
/* Parse a side file's text (named `path` in messages). 0, or -1 with err naming the file
 * and the field (or byte offset) and what was expected. */
int snapshot_meta_parse(const char *path, const char *text, struct snapshot_meta *m, char *err /* FB_ERRLEN */);
/* Beside the snapshot: 1 read (m filled), 0 there is none, -1 one is there but bad (err). */
int snapshot_meta_find(const char *snapshot, struct snapshot_meta *m, char *err);
/* "snapshot.meta.json beside the snapshot (memory fraction 0.25 of 79.18 GiB)": what the
 * limit sentence says the limit came from */
void snapshot_meta_source(const struct snapshot_meta *m, char *buf, size_t n);

#endif
