/* cli_side_file.c - the job's PYTORCH_CUDA_ALLOC_CONF read from capture.py's side file
 * beside a snapshot (snapshot_meta.h), for the commands that replay "the current
 * setting": explain replays it when no --allocator is given, advise marks its row. The
 * limit in the same file is limit.c's. */
#include "cli.h"
#include <string.h>
#include "alloc_conf.h"
#include "snapshot_meta.h"

int cli_side_file_spec(const char *trace, char *conf, size_t cn, char *spec, size_t sn, char *err) {
  struct snapshot_meta m;
  conf[0] = spec[0] = 0;
  int found = snapshot_meta_find(trace, &m, err);
  if (found <= 0) return found;
  if (!m.alloc_conf[0]) return 0;
  snprintf(conf, cn, "%s", m.alloc_conf);
  char e[FB_ERRLEN];
  if (alloc_conf_to_spec(m.alloc_conf, spec, sn, NULL, 0, e)) {
    snprintf(err, FB_ERRLEN, "%.250s: field \"alloc_conf\": %.200s", m.path, e);
    return -1;
  }
  return 1;
}

int cli_side_file_conf(struct cli_opts *o, const char *cmd) {
  if (o->ntraces != 1) return 0;
  char conf[512], spec[640], err[FB_ERRLEN];
  int found = cli_side_file_spec(o->traces[0], conf, sizeof conf, spec, sizeof spec, err);
  if (found < 0) { fprintf(stderr, "fragbench %s: %s\n", cmd, err); return 2; }
  if (!found) return 0;
  if (cli_add_alloc_conf(o, conf)) return 2;
  if (!o->quiet)
    fprintf(stderr, "fragbench %s: replaying the job's PYTORCH_CUDA_ALLOC_CONF=%s (%s), read from the side file beside the "
            "snapshot (--allocator or --alloc-conf overrides)\n", cmd, conf, o->allocators[o->nallocators - 1]);
  return 0;
}
