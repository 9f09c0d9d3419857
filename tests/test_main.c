/* test_main.c - the test runner: runs every registered test (or those whose name
 * contains argv[1]), prints one line per failure and the closing summary. GPU tests
 * run only when a GPU is visible; otherwise they are reported as skipped, or as failed
 * with the reason when FB_GPU_REQUIRED=1 (`make test-gpu`). CUDA must not be used in a
 * child forked after the parent initialized it, and test_cli forks: so the GPU is probed
 * in a child of its own, and the GPU tests run after all the others, in this process.
 *
 * The other tests run on two worker processes per core (many wait on a child, a pipe or
 * a signal: one per core left a core idle a quarter of the time; FB_JOBS=N to choose;
 * 1 = here, one after another), each taking the next test not yet taken, those marked
 * LONG_TEST first; every test's stdout and
 * failure lines are kept apart and printed in the tests' own order once all are done, so
 * the output does not depend on the number of workers. A worker that dies inside a test
 * fails that test (and a fresh worker goes on with the rest). Each worker has its own
 * scratch directory. What the tests write to stderr (the messages of the bad-input cases,
 * warnings of the code under test) goes to the test log, the binary's path + ".log"
 * (build/fragbench-tests.log), one "== name" section per test, so that the terminal shows
 * test lines only; a failing test's section is shown under its FAIL line. */
#include <time.h>
#include "test.h"
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/mman.h>
#include "device.h"

int cli_main(int argc, char **argv);

struct test { const char *name, *file; test_fn fn; int gpu, long_; };
static struct test tests[2048];
static int ntests;
static int cur_failed, cur_skipped;
static char skip_reason[256];
static char tmpdir[256];
static FILE *term_err;   /* the terminal's stderr while a test's stderr goes to the log */

void test_register(const char *name, test_fn fn, const char *file, int flags) {
  if (ntests < (int)(sizeof tests / sizeof tests[0]))
    tests[ntests++] = (struct test){name, file, fn, !!(flags & TEST_GPU), !!(flags & TEST_LONG)};
}

/* the order the workers take the tests in: the long ones first, each part in the tests'
 * own order */
static int take_order[sizeof tests / sizeof tests[0]];
static void order_takes(void) {
  int k = 0;
  for (int pass = 1; pass >= 0; pass--)
    for (int i = 0; i < ntests; i++)
      if (tests[i].long_ == pass) take_order[k++] = i;
}

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  FILE *e = term_err ? term_err : stderr;
  fflush(stdout);
  va_start(ap, fmt);
  fprintf(e, "  FAIL %s:%d: ", file, line);
  vfprintf(e, fmt, ap);
  fputc('\n', e);
  fflush(e);
  va_end(ap);
  cur_failed = 1;
}

void test_skip(const char *why) {
  cur_skipped = 1;
  snprintf(skip_reason, sizeof skip_reason, "%s", why);
}

int test_failed_now(void) { return cur_failed; }

const char *test_tmpdir(void) {
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fbtest.XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); exit(2); }
  }
  return tmpdir;
}

const char *test_data(const char *name) {
  static char buf[8][512];
  static int k;
  char *b = buf[k++ & 7];
  snprintf(b, 512, "tests/data/%s", name);
  return b;
}

const char *test_fragbench_bin(void) {
  static char bin[600];
  char exe[512] = "";
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0;
  snprintf(bin, sizeof bin, "%s/fragbench", slash ? exe : ".");
  return access(bin, X_OK) ? NULL : bin;
}

int test_json_field(const char *line, const char *key, char *out, size_t len) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(line, pat);
  if (!p) return -1;
  p += strlen(pat);
  while (*p == ' ') p++;
  int quoted = *p == '"';
  p += quoted;
  size_t n = 0;
  while (*p && (quoted ? *p != '"' : *p != ',' && *p != '}') && n + 1 < len) out[n++] = *p++;
  out[n] = 0;
  return 0;
}

const char *test_write_tmp(const char *name, const char *text) {
  static char path[4][512];
  static int k;
  char *p = path[k++ % 4];
  snprintf(p, 512, "%s/%s", test_tmpdir(), name);
  FILE *f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return p;
}

char *test_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  size_t got = fread(b, 1, (size_t)n, f);
  b[got] = 0;
  fclose(f);
  return b;
}

/* Runs the CLI in a child process (so exit() paths and leaks stay contained). */
int test_cli(const char *out_path, const char *err_path, const char *argv0, ...) {
  char *argv[64];
  int argc = 0;
  va_list ap;
  va_start(ap, argv0);
  argv[argc++] = (char *)"fragbench";
  for (const char *a = argv0; a && argc < 63; a = va_arg(ap, const char *)) argv[argc++] = (char *)a;
  va_end(ap);
  argv[argc] = NULL;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int fo = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* cached probe for tests that behave differently with a GPU (never initializes CUDA here) */
static int probe_gpu(char *err);
int test_gpu_visible(char *why) {
  static int cached = -2;
  static char msg[FB_ERRLEN];
  if (cached == -2) cached = probe_gpu(msg);
  if (why) snprintf(why, FB_ERRLEN, "%s", msg);
  return cached > 0;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb; (void)flag; (void)ftw;
  return remove(p);
}

/* cuda_device_count() in a child process, so that this process does not initialize CUDA */
static int probe_gpu(char *err) {
  int fd[2];
  fflush(stdout);
  fflush(stderr);
  if (pipe(fd)) return cuda_device_count(err);
  pid_t pid = fork();
  if (pid < 0) { close(fd[0]); close(fd[1]); return cuda_device_count(err); }
  if (pid == 0) {
    close(fd[0]);
    char msg[FB_ERRLEN];
    msg[0] = 0;
    int n = cuda_device_count(msg);
    if (write(fd[1], &n, sizeof n) != (ssize_t)sizeof n || write(fd[1], msg, sizeof msg) != (ssize_t)sizeof msg) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  int n = -1;
  size_t got = 0;
  char msg[FB_ERRLEN];
  ssize_t k = read(fd[0], &n, sizeof n);
  if (k == (ssize_t)sizeof n)
    while (got < sizeof msg && (k = read(fd[0], msg + got, sizeof msg - got)) > 0) got += (size_t)k;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof msg) {
    snprintf(err, FB_ERRLEN, "GPU probe process failed (status %d)", status);
    return -1;
  }
  msg[FB_ERRLEN - 1] = 0;
  snprintf(err, FB_ERRLEN, "%s", msg);
  return n;
}

/* the log's tail from offset `from`, at most 20 lines, to f */
static void show_log(FILE *out, const char *path, long from) {
  FILE *f = fopen(path, "r");
  if (!f || fseek(f, from, SEEK_SET)) { if (f) fclose(f); return; }
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof line, f) && n < 20) { if (n++ == 0) fprintf(out, "  its stderr (%s):\n", path); fprintf(out, "    %s", line); }
  if (n == 20) fprintf(out, "    ... (the rest in %s)\n", path);
  fclose(f);
}

/* one test's outcome, in memory shared with the workers */
enum { T_PENDING, T_TAKEN, T_DONE };
struct outcome {
  int state, failed, skipped;
  pid_t holder;                   /* the worker that took it */
  double sec;
  char skip_reason[256];
};
struct shared {
  int next;                       /* the next test to take (atomic) */
  struct outcome o[sizeof tests / sizeof tests[0]];
};

/* run test i here: its stderr into the log (logfd), its stdout and failure lines into the
 * files out/err when given (a worker), else straight to the terminal */
static void run_one(int i, int logfd, int saved_err, const char *logpath, const char *out, const char *err, struct outcome *res) {
  struct test *t = &tests[i];
  cur_failed = cur_skipped = 0;
  skip_reason[0] = 0;
  struct timespec t0, t1;
  long logat = 0;
  int saved_out = -1;
  FILE *errf = NULL, *term = term_err;
  if (out) {   /* a worker: this test's stdout and failure lines kept apart */
    fflush(stdout);
    saved_out = dup(1);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { dup2(fd, 1); close(fd); }
    errf = fopen(err, "w");
    if (errf) { setvbuf(errf, NULL, _IONBF, 0); term_err = errf; }
  }
  if (logfd >= 0) {   /* this test's stderr: its section of the log */
    fflush(stderr);
    dprintf(logfd, "== %s (%s)\n", t->name, t->file);
    logat = lseek(logfd, 0, SEEK_END);
    dup2(logfd, 2);
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  t->fn();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (logfd >= 0) { fflush(stderr); dup2(saved_err, 2); }
  res->sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  res->failed = cur_failed;
  res->skipped = !cur_failed && cur_skipped;
  snprintf(res->skip_reason, sizeof res->skip_reason, "%s", skip_reason);
  if (cur_failed && logfd >= 0) show_log(term_err ? term_err : stderr, logpath, logat);
  if (out) {
    fflush(stdout);
    if (saved_out >= 0) { dup2(saved_out, 1); close(saved_out); }
    if (errf) fclose(errf);
    term_err = term;
  }
}

/* a file's whole content to f (and the file removed) */
static void drain(const char *path, FILE *f) {
  FILE *in = fopen(path, "r");
  if (!in) return;
  char buf[4096];
  size_t n;
  fflush(stdout);
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, f);
  fclose(in);
  fflush(f);
  remove(path);
}

static int selected(const struct test *t, const char *filter, int gpu) { return t->gpu == gpu && (!filter || strstr(t->name, filter)); }

/* worker w: takes tests until none is left; exits */
static void worker(struct shared *sh, const char *filter, const char *spool, const char *logbase, int w) {
  char logpath[1300];
  snprintf(logpath, sizeof logpath, "%s.%d", logbase, w);
  int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644), saved = logfd >= 0 ? dup(2) : -1;
  for (int k; (k = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED)) < ntests;) {
    int i = take_order[k];
    if (!selected(&tests[i], filter, 0)) continue;
    sh->o[i].holder = getpid();
    __atomic_store_n(&sh->o[i].state, T_TAKEN, __ATOMIC_RELEASE);
    char out[1400], err[1400];
    snprintf(out, sizeof out, "%s/%d.out", spool, i);
    snprintf(err, sizeof err, "%s/%d.err", spool, i);
    struct outcome res;
    memset(&res, 0, sizeof res);
    run_one(i, logfd, saved, logpath, out, err, &res);
    res.state = T_DONE;
    sh->o[i] = res;
  }
  if (tmpdir[0] && !getenv("FB_KEEP_TMP")) nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  fflush(stdout);
  _exit(0);
}

/* every non-GPU test on jobs workers; a worker that dies fails the test it held, and
 * another is started for the rest. *nlogs: how many worker logs (logbase.0 ..) were
 * started. 0, or -1 when no worker could be started */
static int run_workers(struct shared *sh, int jobs, const char *filter, const char *spool, const char *logbase, int *nlogs) {
  pid_t pid[64];
  int alive = 0, started = 0;
  *nlogs = 0;
  for (int w = 0; w < jobs; w++) {
    fflush(stdout); fflush(stderr);
    int log = (*nlogs)++;
    pid_t p = fork();
    if (p == 0) worker(sh, filter, spool, logbase, log);
    if (p < 0) break;
    pid[w] = p;
    alive++;
  }
  started = alive;
  if (!alive) return -1;
  while (alive > 0) {
    int status;
    pid_t p = wait(&status);
    if (p < 0) break;
    int w = -1;
    for (int k = 0; k < started; k++) if (pid[k] == p) w = k;
    if (w < 0) continue;
    alive--;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    for (int i = 0; i < ntests; i++)   /* the test it held: taken by it, never done */
      if (sh->o[i].state == T_TAKEN && sh->o[i].holder == p) {
        sh->o[i].state = T_DONE;
        sh->o[i].failed = 1;
        char err[1400];
        snprintf(err, sizeof err, "%s/%d.err", spool, i);
        FILE *f = fopen(err, "a");
        if (f) { fprintf(f, "  the test's process died (%s %d)\n", WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)); fclose(f); }
        break;
      }
    fflush(stdout); fflush(stderr);
    int log = (*nlogs)++;
    pid_t q = fork();   /* the rest: a fresh worker, with a log of its own */
    if (q == 0) worker(sh, filter, spool, logbase, log);
    if (q > 0) { pid[w] = q; alive++; }
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  char logpath[1200];
  snprintf(logpath, sizeof logpath, "%s.log", argv[0]);
  int logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644), saved = logfd >= 0 ? dup(2) : -1;
  if (saved >= 0) { term_err = fdopen(saved, "w"); setvbuf(term_err, NULL, _IONBF, 0); }
  else if (logfd >= 0) { close(logfd); logfd = -1; }
  const char *req = getenv("FB_GPU_REQUIRED");
  int gpu_required = req && strcmp(req, "") && strcmp(req, "0");
  const char *jobs_env = getenv("FB_JOBS");
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = jobs_env && atoi(jobs_env) > 0 ? atoi(jobs_env) : cores > 0 ? 2 * (int)cores : 1;
  if (jobs > 64) jobs = 64;
  int nsel = 0;
  for (int i = 0; i < ntests; i++) nsel += selected(&tests[i], filter, 0);
  if (jobs > nsel) jobs = nsel > 0 ? nsel : 1;
  char err[FB_ERRLEN] = "";
  int have_gpu = -1;   /* probed when the first GPU test is reached */
  int passed = 0, failed = 0, skipped = 0;
  double gpu_s = 0, slow_s[3] = {0, 0, 0}, all_s = 0;   /* GPU tests' wall time, and the three slowest */
  const char *slow_name[3] = {NULL, NULL, NULL};
  struct timespec w0, w1;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) { perror("mmap"); return 2; }
  char spool[1300] = "";
  int nlogs = 0;                  /* the workers' logs, logpath.0 .. */
  order_takes();
  if (jobs > 1) {   /* the workers' outputs, kept apart until printed in order */
    snprintf(spool, sizeof spool, "/tmp/fbspool.XXXXXX");
    if (!mkdtemp(spool) || run_workers(sh, jobs, filter, spool, logpath, &nlogs)) jobs = 1;
  }
  for (int pass = 0; pass < 2; pass++)   /* pass 0: the other tests; pass 1: GPU tests */
  for (int i = 0; i < ntests; i++) {
    struct test *t = &tests[i];
    if (!selected(t, filter, pass)) continue;
    struct outcome *res = &sh->o[i];
    if (t->gpu && have_gpu < 0) have_gpu = probe_gpu(err) > 0;
    if (t->gpu && !have_gpu) {
      if (gpu_required) { failed++; printf("FAIL %s (no GPU, and FB_GPU_REQUIRED is set: %s)\n", t->name, err); }
      else { skipped++; printf("skip %s (no GPU: %s)\n", t->name, err); }
      fflush(stdout);
      continue;
    }
    if (pass || jobs == 1) run_one(i, logfd, saved, logpath, NULL, NULL, res);
    else {   /* a worker ran it: what it printed, in this order */
      char path[1400];
      snprintf(path, sizeof path, "%s/%d.out", spool, i);
      drain(path, stdout);
      snprintf(path, sizeof path, "%s/%d.err", spool, i);
      drain(path, term_err ? term_err : stderr);
      if (res->state != T_DONE) { res->failed = 1; fprintf(term_err ? term_err : stderr, "  never run: its worker stopped\n"); }
    }
    double sec = res->sec;
    all_s += sec;
    if (t->gpu) gpu_s += sec;
    for (int k = 0; k < 3; k++)
      if (sec > slow_s[k]) {
        for (int j = 2; j > k; j--) { slow_s[j] = slow_s[j - 1]; slow_name[j] = slow_name[j - 1]; }
        slow_s[k] = sec; slow_name[k] = t->name;
        break;
      }
    if (res->failed) { failed++; printf("FAIL %s (%s)\n", t->name, t->file); }
    else if (res->skipped) { skipped++; printf("skip %s (%s)\n", t->name, res->skip_reason); }
    else { passed++; if (getenv("FB_VERBOSE")) printf("ok   %s (%.2f s)\n", t->name, sec); }
    fflush(stdout);
  }
  if (spool[0]) {   /* the workers' logs into the one log, in worker order */
    for (int w = 0; w < nlogs; w++) {
      char p[1300];
      snprintf(p, sizeof p, "%s.%d", logpath, w);
      if (logfd >= 0 && !access(p, F_OK)) { FILE *f = fdopen(dup(logfd), "a"); if (f) { drain(p, f); fclose(f); } }
      else remove(p);
    }
    rmdir(spool);
  }
  if (tmpdir[0] && !getenv("FB_KEEP_TMP")) nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  clock_gettime(CLOCK_MONOTONIC, &w1);
  double wall = (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec);
  if (gpu_s > 0) printf("GPU tests: %.1f s in all\n", gpu_s);
  printf("%.1f s (the tests' own times add up to %.1f s; %d worker%s); slowest:", wall, all_s, jobs, jobs == 1 ? "" : "s");
  for (int k = 0; k < 3 && slow_name[k]; k++) printf(" %s %.1f s%s", slow_name[k], slow_s[k], k < 2 && slow_name[k + 1] ? "," : "");
  printf("\n");
  if (logfd >= 0) { close(logfd); printf("the tests' stderr (bad-input messages, warnings): %s\n", logpath); }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}

/* a column of the first row of a CSV text: 0, or -1 when the text has no such column (test.h) */
int test_csv_cell(const char *text, const char *col, char *out, size_t len) {
  const char *nl = strchr(text, '\n');
  if (!nl) return -1;
  int idx = -1, k = 0;
  for (const char *p = text; p < nl; k++) {
    const char *e = p;
    while (e < nl && *e != ',') e++;
    if ((size_t)(e - p) == strlen(col) && !strncmp(p, col, (size_t)(e - p))) idx = k;
    p = e + 1;
  }
  if (idx < 0) return -1;
  const char *p = nl + 1;
  for (k = 0; k < idx && *p && *p != '\n'; k++) {   /* row 1; fields before idx unquoted or quoted */
    if (*p == '"') { p++; while (*p && !(*p == '"' && p[1] != '"')) p += *p == '"' ? 2 : 1; p++; }
    else while (*p && *p != ',' && *p != '\n') p++;
    if (*p == ',') p++;
  }
  size_t n = 0;
  while (*p && *p != ',' && *p != '\n' && n + 1 < len) out[n++] = *p++;
  out[n] = 0;
  return 0;
}

/* a results CSV text with its timing columns emptied in place (test.h) */
void test_csv_drop_timed(char *t) {
  static const char *const timed[] = {"wall_ns", "ns_per_op", "p50_ns", "p99_ns", "max_ns"};
  char *nl = strchr(t, '\n');
  if (!nl) return;
  int skip[128] = {0}, k = 0;
  for (char *p = t; p < nl && k < 128; k++) {
    char *e = memchr(p, ',', (size_t)(nl - p));
    size_t len = e ? (size_t)(e - p) : (size_t)(nl - p);
    for (size_t j = 0; j < sizeof timed / sizeof timed[0]; j++) if (strlen(timed[j]) == len && !strncmp(p, timed[j], len)) skip[k] = 1;
    p += len + 1;
  }
  char *w = t;
  int col = 0;
  for (char *p = t; *p; p++) {
    if (*p == '\n') { *w++ = '\n'; col = 0; continue; }
    if (*p == ',') { col++; *w++ = ','; continue; }
    if (p < nl || col >= 128 || !skip[col]) *w++ = *p;
  }
  *w = 0;
}

/* a results CSV file's text with its timing columns emptied (test.h) */
char *test_read_untimed(const char *path) {
  char *t = test_read_file(path);
  if (t) test_csv_drop_timed(t);
  return t;
}

/* `fragbench report` on a folder holding runs.csv = runs (test.h) */
char *test_report_of(const char *name, const char *runs) {
  static char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/%s", test_tmpdir(), name);
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/runs.csv", dir);
  FILE *f = fopen(path, "w");
  fputs(runs, f);
  fclose(f);
  if (test_cli(NULL, NULL, "report", dir, NULL) != 0) return NULL;
  snprintf(path, sizeof path, "%s/report.md", dir);
  return test_read_file(path);
}

/* does the file at path hold s? (test.h) */
int test_file_has(const char *path, const char *s) {
  char *e = test_read_file(path);
  int ok = e && strstr(e, s);
  if (!ok) fprintf(stderr, "%s lacks \"%s\": %s\n", path, s, e ? e : "(none)");
  free(e);
  return ok;
}
