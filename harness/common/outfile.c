/* outfile.c - see outfile.h. The temporaries of this process are remembered so that
 * SIGINT/SIGTERM/SIGHUP remove them (unlink is async-signal-safe) before the signal's
 * default action: an interrupted run leaves neither a partial file nor litter. */
#include "outfile.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIVE_MAX 16
static char live[LIVE_MAX][1100];
static volatile sig_atomic_t nlive_set[LIVE_MAX];
static int handlers_set;

static void on_signal(int sig) {
  for (int i = 0; i < LIVE_MAX; i++) if (nlive_set[i]) unlink(live[i]);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void remember(const char *tmp) {
  if (!handlers_set) {
    handlers_set = 1;
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
      struct sigaction sa, old;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_signal;
      sigemptyset(&sa.sa_mask);
      if (!sigaction(sigs[i], NULL, &old) && old.sa_handler == SIG_DFL) sigaction(sigs[i], &sa, NULL);
    }
  }
  for (int i = 0; i < LIVE_MAX; i++)
    if (!nlive_set[i]) { snprintf(live[i], sizeof live[i], "%s", tmp); nlive_set[i] = 1; return; }
}

static void forget(const char *tmp) {
  for (int i = 0; i < LIVE_MAX; i++)
    if (nlive_set[i] && !strcmp(live[i], tmp)) { nlive_set[i] = 0; return; }
}

void outfile_track(const char *path, int on) {
  if (on) remember(path); else forget(path);
}

FILE *outfile_open(struct outfile *o, const char *path, const char *what) {
  memset(o, 0, sizeof *o);
  snprintf(o->path, sizeof o->path, "%s", path);
  struct stat st;
  int exists = !stat(path, &st);
  if (exists && !S_ISREG(st.st_mode)) {   /* /dev/null, a fifo: no rename onto it */
    o->f = fopen(path, "w");
    if (!o->f) { fprintf(stderr, "fragbench: %s: cannot write %s: %s\n", path, what, strerror(errno)); return NULL; }
    o->active = 1;
    return o->f;
  }
  const char *slash = strrchr(path, '/');
  int dirlen = slash ? (int)(slash - path) + 1 : 0;
  snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp-XXXXXX", dirlen, path, slash ? slash + 1 : path);
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    fprintf(stderr, "fragbench: %s: cannot write %s: %s\n", path, what, strerror(errno));
    o->tmp[0] = 0;
    return NULL;
  }
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask));
  o->f = fdopen(fd, "w");
  if (!o->f) { close(fd); unlink(o->tmp); fprintf(stderr, "fragbench: %s: cannot write %s\n", path, what); return NULL; }
  remember(o->tmp);
  o->active = 1;
  return o->f;
}

int outfile_finish(struct outfile *o, int keep) {
  if (!o->active) return 0;
  o->active = 0;
  int bad = ferror(o->f);
  if (fclose(o->f)) bad = 1;
  o->f = NULL;
  if (!o->tmp[0]) {
    if (bad && keep) { fprintf(stderr, "fragbench: %s: write failed\n", o->path); return -1; }
    return 0;
  }
  if (keep && !bad && !rename(o->tmp, o->path)) { forget(o->tmp); return 0; }
  unlink(o->tmp);
  forget(o->tmp);
  if (keep) { fprintf(stderr, "fragbench: %s: write failed; the file is as it was\n", o->path); return -1; }
  return 0;
}

void outfile_abort(struct outfile *o) { outfile_finish(o, 0); }

int outfile_check(const char *cmd, const char *const *flags, const char *const *outs, int nout,
                  const char *const *ins, int nin) {
  for (int i = 0; i < nout; i++) {
    struct stat so, si;
    if (!outs[i] || !strcmp(outs[i], "-") || stat(outs[i], &so) || !S_ISREG(so.st_mode)) continue;
    for (int k = 0; k < nin; k++)
      if (ins[k] && strcmp(ins[k], "-") && !stat(ins[k], &si) && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
        fprintf(stderr, "fragbench %s: %s %s is the same file as the input %s: refusing to write over an input\n", cmd,
                flags[i], outs[i], ins[k]);
        return 2;
      }
    for (int k = 0; k < i; k++)
      if (outs[k] && !stat(outs[k], &si) && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
        fprintf(stderr, "fragbench %s: %s and %s name the same file (%s)\n", cmd, flags[k], flags[i], outs[i]);
        return 2;
      }
  }
  for (int i = 0; i < nout; i++)   /* two outputs that do not exist yet, same name */
    for (int k = 0; k < i; k++)
      if (outs[i] && outs[k] && strcmp(outs[i], "-") && !strcmp(outs[i], outs[k])) {
        fprintf(stderr, "fragbench %s: %s and %s name the same file (%s)\n", cmd, flags[k], flags[i], outs[i]);
        return 2;
      }
  return 0;
}
