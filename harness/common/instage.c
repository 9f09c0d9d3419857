/* instage.c - see instage.h. */
#include "instage.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "outfile.h"

#define STAGED_MAX 64
static char staged_dir[STAGED_MAX][OUTFILE_PATH_MAX], staged_file[STAGED_MAX][OUTFILE_PATH_MAX + 256],
    staged_from[STAGED_MAX][256];
static int nstaged;

static void cleanup(void) {
  for (int i = 0; i < nstaged; i++) {
    unlink(staged_file[i]);
    rmdir(staged_dir[i]);
    outfile_track(staged_file[i], 0);
    outfile_track(staged_dir[i], 0);
  }
  nstaged = 0;
}

/* copies left under tmp by a command that was killed (SIGKILL): its PID is gone */
static void sweep(const char *tmp) {
  DIR *d = opendir(tmp);
  if (!d) return;
  struct dirent *e;
  const char *prefix = "fragbench-input-";
  size_t pl = strlen(prefix);
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, prefix, pl)) continue;
    char *end;
    long pid = strtol(e->d_name + pl, &end, 10);
    if (end == e->d_name + pl || *end != '-' || !outfile_pid_gone(pid)) continue;
    char dir[OUTFILE_PATH_MAX + 300];
    snprintf(dir, sizeof dir, "%s/%s", tmp, e->d_name);
    struct stat st;
    if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    DIR *in = opendir(dir);
    if (!in) continue;
    struct dirent *f;
    while ((f = readdir(in))) {
      if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, "..")) continue;
      char file[OUTFILE_PATH_MAX + 600];
      snprintf(file, sizeof file, "%s/%s", dir, f->d_name);
      unlink(file);
    }
    closedir(in);
    rmdir(dir);
  }
  closedir(d);
}

/* a fifo: wait for its writer's first byte or end, at most the bound. 0, or -1 with err. */
static int wait_writer(int fd, const char *path, char *err, size_t errlen) {
  double wait = INSTAGE_WAIT_S;
  const char *env = getenv("FB_FIFO_WAIT_S");
  if (env && *env) wait = atof(env);
  struct pollfd p = {.fd = fd, .events = POLLIN};
  for (;;) {
    int r = poll(&p, 1, (int)(wait * 1000));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) { snprintf(err, errlen, "%s: cannot wait for its writer: %s", path, strerror(errno)); return -1; }
    if (r == 0) {
      snprintf(err, errlen, "%s: a fifo no process wrote to within %g s: start its writer first (or give a file)", path, wait);
      return -1;
    }
    return 0;
  }
}

const char *instage(const char *path, char *err, size_t errlen) {
  int dash = !strcmp(path, "-");
  struct stat st;
  if (!dash && (stat(path, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return path;
  if (nstaged >= STAGED_MAX) { snprintf(err, errlen, "%s: at most %d inputs that are pipes", path, STAGED_MAX); return NULL; }
  int fifo = !dash && S_ISFIFO(st.st_mode);
  /* O_NONBLOCK: opening a fifo with no writer must not wait; reads block again after */
  int in = dash ? 0 : open(path, O_RDONLY | O_NONBLOCK);
  if (in < 0) { snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno)); return NULL; }
  if (fifo) {
    int fl = fcntl(in, F_GETFL);
    /* a fifo opened without a writer reads as ended: wait (bounded) for one to write */
    if (wait_writer(in, path, err, errlen)) { close(in); return NULL; }
    fcntl(in, F_SETFL, fl & ~O_NONBLOCK);
  } else if (!dash) {
    fcntl(in, F_SETFL, fcntl(in, F_GETFL) & ~O_NONBLOCK);
  }
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0]) tmp = "/tmp";
  if (!nstaged) sweep(tmp);
  if (strlen(tmp) > OUTFILE_PATH_MAX - 64) {   /* never a cut name */
    snprintf(err, errlen, "%s: cannot copy the input: $TMPDIR is longer than %d bytes", path, OUTFILE_PATH_MAX - 64);
    if (!dash) close(in);
    return NULL;
  }
  char *dir = staged_dir[nstaged], *file = staged_file[nstaged];
  snprintf(dir, sizeof staged_dir[0], "%s/fragbench-input-%ld-XXXXXX", tmp, (long)getpid());
  if (!mkdtemp(dir)) { snprintf(err, errlen, "%s: cannot copy the input (%s): %s", path, dir, strerror(errno)); if (!dash) close(in); return NULL; }
  const char *base = dash ? "stdin" : strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  snprintf(file, sizeof staged_file[0], "%s/%.200s", dir, base[0] ? base : "input");
  snprintf(staged_from[nstaged], sizeof staged_from[0], "%s", dash ? "<stdin>" : path);
  outfile_track(dir, 1);   /* the directory first: a signal removes the file, then it */
  int out = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (out < 0) {
    snprintf(err, errlen, "%s: cannot copy the input: %s", path, strerror(errno));
    rmdir(dir);
    outfile_track(dir, 0);
    if (!dash) close(in);
    return NULL;
  }
  if (!nstaged) atexit(cleanup);
  nstaged++;
  outfile_track(file, 1);
  err[0] = 0;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {   /* stdin left non-blocking by its writer: wait for it */
      struct pollfd p = {.fd = in, .events = POLLIN};
      poll(&p, 1, -1);
      continue;
    }
    if (n < 0) { snprintf(err, errlen, "%s: read failed: %s", path, strerror(errno)); break; }
    if (n == 0) break;
    for (ssize_t w = 0; w < n;) {
      ssize_t k = write(out, buf + w, (size_t)(n - w));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) { snprintf(err, errlen, "%s: cannot copy the input: %s", path, strerror(errno)); n = -1; break; }
      w += k;
    }
    if (n < 0) break;
  }
  if (!dash) close(in);
  if (close(out) && !err[0]) snprintf(err, errlen, "%s: cannot copy the input: %s", path, strerror(errno));
  if (err[0]) return NULL;
  return file;
}

const char *instage_shown(const char *path) {
  for (int i = 0; i < nstaged; i++)
    if (!strcmp(path, staged_file[i])) return staged_from[i];
  return path;
}
