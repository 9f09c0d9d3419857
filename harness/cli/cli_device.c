/* cli_device.c - `fragbench device`: the device a run with these options would use, in
 * key: value lines (kind, name, total, free): scripts/bench.sh asks it which device it is
 * on and, on a GPU, how much memory the simulated device of its searches must have. */
#include "cli.h"
#include "options.h"
#include <string.h>

/* the flags it takes (flags.def) */
static const char *const device_opts[] = {
  FLAGS_DEVICE,
  NULL,
};

const struct cmd_def cmd_device_def = {
  "device", "[--device auto|sim|cuda]   the device a run would use: kind, name, total, free", "",
  device_opts, cmd_device, NULL, NULL,
};

int cmd_device(struct cli_opts *o) {
  struct device_config cfg;
  o->quiet = 1;
  if (cli_pick_device(o, &cfg)) return 1;
  struct device d;
  char err[FB_ERRLEN];
  if (device_open(&d, &cfg, err)) {
    fprintf(stderr, "fragbench device: %s\n", err);
    return 1;
  }
  printf("kind: %s\nname: %s\ntotal: %llu\nfree: %llu\n", cfg.kind, d.name, (unsigned long long)d.total,
         (unsigned long long)(d.free_at_open ? d.free_at_open : d.usable ? d.usable : d.total));
  device_close(&d);
  return 0;
}
