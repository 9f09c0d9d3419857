/* outfile.c - see outfile.h. The named temporaries of this process are remembered so that
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE remove them (unlink is async-signal-safe) before the
 * signal's default action: an interrupted run leaves neither a partial file nor litter. */
#include "outfile.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define LIVE_MAX 160   /* every staged input (instage.h: 64) and every output of a command */
static char live[LIVE_MAX][OUTFILE_PATH_MAX + 64];
static volatile sig_atomic_t nlive_set[LIVE_MAX];
static int handlers_set;

static void on_signal(int sig) {
  for (int i = 0; i < LIVE_MAX; i++) if (nlive_set[i]) unlink(live[i]);
  for (int i = 0; i < LIVE_MAX; i++) if (nlive_set[i]) rmdir(live[i]);   /* a staged input's directory, once empty */
  signal(sig, SIG_DFL);
  raise(sig);
}

static void remember(const char *tmp) {
  if (!handlers_set) {
    handlers_set = 1;
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (int i = 0; i < 4; i++) {
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

int outfile_is_stdout(const char *p) {
  if (!strcmp(p, "-")) return 1;
  struct stat a, b;
  if (fstat(1, &b) || stat(p, &a) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) return 0;
  return !(S_ISCHR(a.st_mode) && a.st_rdev == makedev(1, 3));
}

int outfile_pid_gone(long pid) { return pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH; }

int outfile_name_ok(const char *path, char *err, size_t errlen) {
  size_t n = strlen(path);
  if (n >= OUTFILE_PATH_MAX) {
    snprintf(err, errlen, "%.60s...: a name of %zu bytes, longer than the system takes (PATH_MAX, 4095 bytes)", path, n);
    return -1;
  }
  for (const char *p = path; *p;) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > NAME_MAX) {
      snprintf(err, errlen, "%.60s...: a component of %zu bytes (\"%.20s...\"), longer than the system takes (NAME_MAX, 255 bytes)",
               path, len, p);
      return -1;
    }
    p += len + (e ? 1 : 0);
  }
  return 0;
}

/* is this symlink on /proc (a magic link to an open file: /proc/self/fd/1)? */
static int on_proc(const struct stat *st) {
  static int have = -1;
  static dev_t proc_dev;
  if (have < 0) {
    struct stat p;
    have = !lstat("/proc/self", &p);
    if (have) proc_dev = p.st_dev;
  }
  return have && st->st_dev == proc_dev;
}

int outfile_resolve(const char *path, char *target, size_t n, char *err, size_t errlen) {
  if (!strcmp(path, "-")) { snprintf(target, n, "-"); return OUTFILE_IN_PLACE; }
  if (outfile_name_ok(path, err, errlen)) return -1;
  char cur[OUTFILE_PATH_MAX];
  snprintf(cur, sizeof cur, "%s", path);
  for (int hops = 0; hops < 40; hops++) {
    struct stat st;
    if (lstat(cur, &st)) {   /* not there yet (or unreachable: the open says why) */
      snprintf(target, n, "%s", cur);
      return OUTFILE_RENAME;
    }
    if (S_ISDIR(st.st_mode)) { snprintf(err, errlen, "%.200s: a directory, not a file name", path); return -1; }
    if (S_ISREG(st.st_mode)) { snprintf(target, n, "%s", cur); return OUTFILE_RENAME; }
    if (!S_ISLNK(st.st_mode)) { snprintf(target, n, "%s", cur); return OUTFILE_IN_PLACE; }
    if (on_proc(&st)) { snprintf(target, n, "%s", cur); return OUTFILE_IN_PLACE; }
    char link[OUTFILE_PATH_MAX];
    ssize_t k = readlink(cur, link, sizeof link - 1);
    if (k < 0) { snprintf(err, errlen, "%.200s: cannot follow the link: %s", path, strerror(errno)); return -1; }
    link[k] = 0;
    char next[OUTFILE_PATH_MAX * 2];
    const char *slash = strrchr(cur, '/');
    if (link[0] == '/' || !slash) snprintf(next, sizeof next, "%s", link);
    else snprintf(next, sizeof next, "%.*s%s", (int)(slash - cur) + 1, cur, link);
    if (outfile_name_ok(next, err, errlen)) return -1;
    memcpy(cur, next, strlen(next) + 1);   /* under OUTFILE_PATH_MAX: checked */
  }
  snprintf(err, errlen, "%.200s: too many levels of symbolic links", path);
  return -1;
}

/* the directory of a name ("." when it has none) */
static void dir_of(const char *path, char *dir, size_t n) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, n, ".");
  else if (slash == path) snprintf(dir, n, "/");
  else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

int outfile_writable(const char *path, char *err, size_t errlen) {
  char target[OUTFILE_PATH_MAX], dir[OUTFILE_PATH_MAX];
  int kind = outfile_resolve(path, target, sizeof target, err, errlen);
  if (kind < 0) return -1;
  if (kind == OUTFILE_IN_PLACE) {
    if (!strcmp(target, "-") || !access(path, W_OK)) return 0;
    snprintf(err, errlen, "%.200s: cannot write: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (!stat(target, &st)) {
    if (!(st.st_mode & 0222)) {   /* no write bit for anyone: refused for root too, who could */
      snprintf(err, errlen, "%.200s: read-only (mode %04o): not replaced (chmod u+w it, or name another file)", path,
               (unsigned)(st.st_mode & 07777));
      return -1;
    }
    if (geteuid() && access(target, W_OK)) {
      snprintf(err, errlen, "%.200s: cannot write: %s (mode %04o): not replaced", path, strerror(errno),
               (unsigned)(st.st_mode & 07777));
      return -1;
    }
  }
  dir_of(target, dir, sizeof dir);
  if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%.200s: no directory %.200s to write it in", path, dir);
    return -1;
  }
  if (access(dir, W_OK | X_OK)) {
    snprintf(err, errlen, "%.200s: cannot create files in %.200s: %s", path, dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* where a name lands, directories resolved (for names not there yet) */
static int landing(const char *path, char *out, size_t n) {
  char target[OUTFILE_PATH_MAX], dir[OUTFILE_PATH_MAX], err[256];
  if (outfile_resolve(path, target, sizeof target, err, sizeof err) < 0) return -1;
  dir_of(target, dir, sizeof dir);
  char *real = realpath(dir, NULL);
  if (!real) return -1;
  const char *slash = strrchr(target, '/');
  const char *base = slash ? slash + 1 : target;
  if (!strcmp(base, ".") || !strcmp(base, "..") || !base[0]) { free(real); return -1; }
  snprintf(out, n, "%s/%s", strcmp(real, "/") ? real : "", base);
  free(real);
  return 0;
}

int outfile_same(const char *a, const char *b) {
  struct stat sa, sb;
  int ea = !stat(a, &sa), eb = !stat(b, &sb);
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return 0;
  char la[OUTFILE_PATH_MAX * 2], lb[OUTFILE_PATH_MAX * 2];
  if (landing(a, la, sizeof la) || landing(b, lb, sizeof lb)) return !strcmp(a, b);
  return !strcmp(la, lb);
}

/* ".NAME.tmp-PID-" for a target: the prefix of its named temporaries */
static void tmp_prefix(const char *target, char *out, size_t n, long pid) {
  const char *slash = strrchr(target, '/');
  int dirlen = slash ? (int)(slash - target) + 1 : 0;
  const char *base = slash ? slash + 1 : target;
  /* the base cut so that the temporary's name stays under NAME_MAX */
  if (pid >= 0) snprintf(out, n, "%.*s.%.200s.tmp-%ld-", dirlen, target, base, pid);
  else snprintf(out, n, ".%.200s.tmp-", base);
}

/* temporaries of this target left by a process that is gone (killed with SIGKILL) */
static void sweep_leftovers(const char *target) {
  char dir[OUTFILE_PATH_MAX], prefix[400];
  dir_of(target, dir, sizeof dir);
  tmp_prefix(target, prefix, sizeof prefix, -1);
  DIR *d = opendir(dir);
  if (!d) return;
  size_t pl = strlen(prefix);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, prefix, pl)) continue;
    char *end;
    long pid = strtol(e->d_name + pl, &end, 10);
    if (end == e->d_name + pl || *end != '-' || strlen(end + 1) != 6 || !outfile_pid_gone(pid)) continue;
    char full[OUTFILE_PATH_MAX + 300];
    snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
    struct stat st;
    if (!lstat(full, &st) && S_ISREG(st.st_mode)) unlink(full);
  }
  closedir(d);
}

static int open_direct(struct outfile *o, const char *what) {
  o->direct = 1;
  o->f = fopen(o->path, "w");
  if (!o->f) { fprintf(stderr, "fragbench: %s: cannot write %s: %s\n", o->path, what, strerror(errno)); return -1; }
  o->active = 1;
  return 0;
}

FILE *outfile_open(struct outfile *o, const char *path, const char *what) {
  memset(o, 0, sizeof *o);
  char err[600];
  if (outfile_name_ok(path, err, sizeof err)) { fprintf(stderr, "fragbench: %s\n", err); return NULL; }
  snprintf(o->path, sizeof o->path, "%s", path);
  if (!strcmp(path, "-")) {
    o->is_stdout = o->direct = o->active = 1;
    o->f = stdout;
    return o->f;
  }
  int kind = outfile_resolve(path, o->target, sizeof o->target, err, sizeof err);
  if (kind < 0) { fprintf(stderr, "fragbench: %s\n", err); return NULL; }
  if (kind == OUTFILE_IN_PLACE) return open_direct(o, what) ? NULL : o->f;
  if (outfile_writable(path, err, sizeof err)) { fprintf(stderr, "fragbench: %s\n", err); return NULL; }
  struct stat st;
  int exists = !stat(o->target, &st);
  mode_t mask = umask(0);
  umask(mask);
  mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~mask);
  sweep_leftovers(o->target);
  char dir[OUTFILE_PATH_MAX];
  dir_of(o->target, dir, sizeof dir);
  int fd = -1;
#ifdef O_TMPFILE
  /* unnamed: a SIGKILL leaves nothing (FB_OUTFILE_NAMED=1: the named fallback, for tests) */
  const char *named = getenv("FB_OUTFILE_NAMED");
  if (!named || strcmp(named, "1")) fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
  if (fd >= 0) o->anon = 1;
#endif
  if (fd < 0) {
    char prefix[OUTFILE_PATH_MAX + 40];
    tmp_prefix(o->target, prefix, sizeof prefix, (long)getpid());
    snprintf(o->tmp, sizeof o->tmp, "%sXXXXXX", prefix);
    fd = mkstemp(o->tmp);
    if (fd < 0) {
      fprintf(stderr, "fragbench: %s: cannot write %s: %s\n", path, what, strerror(errno));
      o->tmp[0] = 0;
      return NULL;
    }
    remember(o->tmp);
  }
  fchmod(fd, mode);
  o->f = fdopen(fd, "w");
  if (!o->f) {
    close(fd);
    if (o->tmp[0]) { unlink(o->tmp); forget(o->tmp); }
    fprintf(stderr, "fragbench: %s: cannot write %s\n", path, what);
    return NULL;
  }
  o->active = 1;
  return o->f;
}

/* the unnamed temporary given a name beside the target (for the rename, or for gnuplot) */
static int name_it(struct outfile *o) {
  if (!o->anon) return 0;
  if (fflush(o->f)) return -1;
  char prefix[OUTFILE_PATH_MAX + 40], fdpath[64];
  tmp_prefix(o->target, prefix, sizeof prefix, (long)getpid());
  snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fileno(o->f));
  static unsigned counter;
  for (int tries = 0; tries < 100; tries++) {
    unsigned r = (unsigned)time(NULL) ^ ((unsigned)getpid() << 8) ^ (++counter * 2654435761u);
    snprintf(o->tmp, sizeof o->tmp, "%s%06u", prefix, r % 1000000);
    remember(o->tmp);
    if (!linkat(AT_FDCWD, fdpath, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) ||
        (errno != EEXIST && !linkat(fileno(o->f), "", AT_FDCWD, o->tmp, AT_EMPTY_PATH))) {
      o->anon = 0;
      return 0;
    }
    forget(o->tmp);
    if (errno != EEXIST) break;
  }
  o->tmp[0] = 0;
  return -1;
}

const char *outfile_name(struct outfile *o) {
  if (o->direct) return o->path;
  if (name_it(o)) { fprintf(stderr, "fragbench: %s: cannot name its temporary: %s\n", o->path, strerror(errno)); return NULL; }
  return o->tmp;
}

int outfile_finish(struct outfile *o, int keep) {
  if (!o->active) return 0;
  o->active = 0;
  int bad = ferror(o->f) || fflush(o->f);
  int why = bad ? errno : 0;
  if (o->is_stdout) {
    o->f = NULL;
    if (bad && keep) { fprintf(stderr, "fragbench: standard output: write failed: %s\n", strerror(why ? why : EIO)); return -1; }
    return 0;
  }
  if (o->direct) {
    if (fclose(o->f) && !bad) { bad = 1; why = errno; }
    o->f = NULL;
    if (bad && keep) { fprintf(stderr, "fragbench: %s: write failed: %s\n", o->path, strerror(why ? why : EIO)); return -1; }
    return 0;
  }
  if (keep && !bad && name_it(o)) { bad = 1; why = errno; }
  if (fclose(o->f) && !bad) { bad = 1; why = errno; }
  o->f = NULL;
  if (keep && !bad && !rename(o->tmp, o->target)) { forget(o->tmp); return 0; }
  if (keep && !bad) why = errno;
  if (o->tmp[0]) { unlink(o->tmp); forget(o->tmp); }
  if (keep) {
    fprintf(stderr, "fragbench: %s: write failed (%s); the file is as it was\n", o->path, strerror(why ? why : EIO));
    return -1;
  }
  return 0;
}

void outfile_abort(struct outfile *o) { outfile_finish(o, 0); }
