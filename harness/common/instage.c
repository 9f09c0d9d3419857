/* instage.c - see instage.h. */
#include "instage.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "outfile.h"

#define STAGED_MAX 64
static char staged_dir[STAGED_MAX][512], staged_file[STAGED_MAX][1024];
static int nstaged;

static void cleanup(void) {
  for (int i = 0; i < nstaged; i++) {
    unlink(staged_file[i]);
    rmdir(staged_dir[i]);
  }
  nstaged = 0;
}

const char *instage(const char *path, char *err, size_t errlen) {
  int dash = !strcmp(path, "-");
  struct stat st;
  if (!dash && (stat(path, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return path;
  if (nstaged >= STAGED_MAX) { snprintf(err, errlen, "%s: at most %d inputs that are pipes", path, STAGED_MAX); return NULL; }
  /* O_NONBLOCK: opening a fifo with no writer must not wait; reads block again after */
  int in = dash ? 0 : open(path, O_RDONLY | O_NONBLOCK);
  if (in < 0) { snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno)); return NULL; }
  if (!dash) fcntl(in, F_SETFL, fcntl(in, F_GETFL) & ~O_NONBLOCK);
  const char *tmp = getenv("TMPDIR");
  char *dir = staged_dir[nstaged], *file = staged_file[nstaged];
  snprintf(dir, sizeof staged_dir[0], "%s/fragbench-input-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) { snprintf(err, errlen, "%s: cannot copy the input (%s): %s", path, dir, strerror(errno)); if (!dash) close(in); return NULL; }
  const char *base = dash ? "stdin" : strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  snprintf(file, sizeof staged_file[0], "%s/%s", dir, base[0] ? base : "input");
  int out = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (out < 0) { snprintf(err, errlen, "%s: cannot copy the input: %s", path, strerror(errno)); rmdir(dir); if (!dash) close(in); return NULL; }
  if (!nstaged) atexit(cleanup);
  nstaged++;
  outfile_track(file, 1);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) { snprintf(err, errlen, "%s: read failed: %s", path, strerror(errno)); break; }
    if (n == 0) { err[0] = 0; break; }
    for (ssize_t w = 0; w < n;) {
      ssize_t k = write(out, buf + w, (size_t)(n - w));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) { snprintf(err, errlen, "%s: cannot copy the input: %s", path, strerror(errno)); n = -1; break; }
      w += k;
    }
    if (n < 0) break;
  }
  if (!dash) close(in);
  if (close(out) || err[0]) return NULL;
  return file;
}
