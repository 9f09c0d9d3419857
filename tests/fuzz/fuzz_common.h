/* fuzz_common.h - the body every reader's libFuzzer target shares: open the reader over
 * the input (from memory; through a temporary file in /dev/shm, else /tmp, when the input
 * is gzip'd, to exercise zlib), read every event, rewind, read a few again, ask info() and
 * where(). Any error must come back as a status with a message; the sanitizers catch the
 * rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../workloads/trace_src.h"

typedef int (*open_src_fn)(void **, struct trace_src *, const struct workload_ctx *, char *);

static void check_message(const char *err) {
  if (!err[0] || strlen(err) >= FB_ERRLEN) abort();     /* an error always says something */
}

static int fuzz_reader(const struct workload_ops *ops, open_src_fn open_src, const uint8_t *data, size_t size) {
  char err[FB_ERRLEN] = "";
  struct workload_ctx ctx = {.world = 1, .trace_device = size ? (int)(data[size - 1] % 4) - 1 : -1};
  void *st = NULL;
  int rc;
  char path[64] = "";
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    /* in memory (tmpfs) where there is one: creating and removing a file on a disk's file
     * system is a fifth of a small gzip'd input's time */
    static const char *dir;
    if (!dir) dir = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/fragbench-fuzz-%d.gz", dir, (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    ctx.path = path;
    rc = ops->open(&st, NULL, &ctx, err);
  } else {
    struct trace_src src;
    src_open_mem(&src, data, size, "fuzz-input");
    rc = open_src(&st, &src, &ctx, err);
  }
  if (rc) {
    check_message(err);
  } else {
    struct event ev;
    struct workload_info info;
    if (ops->info) ops->info(st, &info);
    uint64_t n = 0;
    err[0] = 0;
    while ((rc = ops->next(st, &ev, err)) > 0 && n < 10000000) n++;
    if (rc < 0) check_message(err);
    if (ops->where) (void)ops->where(st);
    if (ops->rewind(st, err) == 0)
      for (int i = 0; i < 64 && ops->next(st, &ev, err) > 0; i++) {}
    ops->close(st);
  }
  if (path[0]) unlink(path);
  return 0;
}
