/* test_cli_overwrites.c - outputs land exactly where they are named, and nothing the user
 * did not name is written (issue 40): a device, fifo or magic link (/dev/stdout) is
 * written in place, never renamed over; a symlink writes its target; a long name is
 * written whole or refused, never cut; every input of every command is checked against
 * every output, and two outputs of one name are refused even before they exist; "-" is
 * standard output for every output flag; a failed write or close exits non-zero; a
 * read-only output is refused; a fifo input waits (bounded) for its writer; stdin is
 * read once; temporaries left by a killed process are swept. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"   /* test paths are short: tmpdir + a name */

#define WL "script:events=a1=1K/f1"
#define OOM_TEXT "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of " \
  "79.18 GiB of which 62.10 GiB is free. Including non-PyTorch memory, this process has 17.07 GiB memory in use. 19.79 GiB " \
  "allowed; Of the allocated memory 12.81 GiB is allocated by PyTorch, and 3.52 GiB is reserved by PyTorch but unallocated.\n"
#define FIT_WL "train_loop:iters=2,layers=2,hidden=256,heads=4,ffn=1024,vocab=4096,seq=128"

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/w_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/w_err.txt", test_tmpdir());
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) { fputs(text, f); fclose(f); }
}

static void tmp(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", test_tmpdir(), name); }

static int err_has(const char *s) { return test_file_has(errp, s); }

/* the count a shell command prints (its last word a number), or -1 */
static int count_from(const char *cmd) {
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p && fscanf(p, "%d", &n) != 1) n = -1;
  if (p) pclose(p);
  return n;
}


static int file_is(const char *path, const char *text) {
  char *t = test_read_file(path);
  int ok = t && !strcmp(t, text);
  free(t);
  return ok;
}

TEST(overwrites_a_magic_link_device_or_fifo_is_written_in_place) {
  paths();
  /* /dev/stdout is a link to /proc/self/fd/1: one in the tmpdir, the same kind */
  char link_path[512], fifo[512], got[512], cmd[1600];
  tmp(link_path, sizeof link_path, "my_stdout");
  unlink(link_path);
  CHECK_EQ(symlink("/proc/self/fd/1", link_path), 0);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", link_path, NULL), 0);
  struct stat st;
  CHECK(!lstat(link_path, &st) && S_ISLNK(st.st_mode));   /* still the link */
  char *t = test_read_file(outp);                        /* the CSV went through it */
  CHECK(t && !strncmp(t, "run_id,", 7));
  free(t);
  /* a fifo: written in place to its reader, still a fifo afterwards */
  tmp(fifo, sizeof fifo, "out.fifo");
  tmp(got, sizeof got, "fifo_got.csv");
  unlink(fifo);
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  snprintf(cmd, sizeof cmd, "cat '%s' > '%s' & build/fragbench run --workload '%s' --device sim --quiet --out '%s' 2>'%s'; rc=$?; wait; exit $rc",
           fifo, got, WL, fifo, errp);
  CHECK_EQ(system(cmd), 0);
  CHECK(!lstat(fifo, &st) && S_ISFIFO(st.st_mode));
  t = test_read_file(got);
  CHECK(t && !strncmp(t, "run_id,", 7));
  free(t);
  /* a device: /dev/null stays the device */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", "/dev/null", "--timeline",
                    "/dev/null", NULL), 0);
  CHECK(!stat("/dev/null", &st) && S_ISCHR(st.st_mode));
}

TEST(overwrites_a_symlink_writes_its_target) {
  paths();
  char target[512], link_path[512], dangling[512], dtarget[512];
  tmp(target, sizeof target, "sl_target.csv");
  tmp(link_path, sizeof link_path, "sl_link.csv");
  put(target, "old\n");
  unlink(link_path);
  CHECK_EQ(symlink("sl_target.csv", link_path), 0);   /* relative, as ln -s makes them */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", link_path, NULL), 0);
  struct stat st;
  CHECK(!lstat(link_path, &st) && S_ISLNK(st.st_mode));
  char *t = test_read_file(target);
  CHECK(t && !strncmp(t, "run_id,", 7));
  free(t);
  /* a link to a file not there yet: the file appears, as `>` makes it */
  tmp(dangling, sizeof dangling, "sl_dangling.csv");
  tmp(dtarget, sizeof dtarget, "sl_new_target.csv");
  unlink(dangling);
  unlink(dtarget);
  CHECK_EQ(symlink(dtarget, dangling), 0);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--timeline", dangling, "--out", "/dev/null", NULL), 0);
  CHECK(!lstat(dangling, &st) && S_ISLNK(st.st_mode));
  t = test_read_file(dtarget);
  CHECK(t && !strncmp(t, "allocator,event,", 16));
  free(t);
}

TEST(overwrites_a_long_name_is_written_whole_or_refused) {
  paths();
  /* 1,040 characters: the whole name is written; the first 1,023 characters name another
   * file, which stays as it was */
  char dir[2048], path[2048], prefix[2048];
  tmp(dir, sizeof dir, "");
  size_t n = strlen(dir);
  for (int i = 0; i < 4; i++) {
    memset(dir + n, 'd', 200);
    n += 200;
    dir[n] = 0;
    mkdir(dir, 0777);
    dir[n++] = '/';
    dir[n] = 0;
  }
  snprintf(path, sizeof path, "%s", dir);
  while (strlen(path) < 1036) strcat(path, "x");
  strcat(path, ".csv");
  CHECK_EQ((int)strlen(path), 1040);
  snprintf(prefix, sizeof prefix, "%.1023s", path);
  put(prefix, "another file\n");
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", path, NULL), 0);
  char *t = test_read_file(path);
  CHECK(t && !strncmp(t, "run_id,", 7));
  free(t);
  CHECK(file_is(prefix, "another file\n"));
  /* a component past NAME_MAX, a name past PATH_MAX: refused, saying which bound */
  char comp[600];
  tmp(comp, sizeof comp, "");
  for (int i = 0; i < 300; i++) strcat(comp, "c");
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", comp, NULL), 2);
  CHECK(err_has("NAME_MAX, 255 bytes"));
  char *huge = malloc(5000);
  memset(huge, 'a', 4999);
  huge[0] = '/';
  for (int i = 100; i < 4999; i += 100) huge[i] = '/';
  huge[4999] = 0;
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--timeline", huge, NULL), 2);
  CHECK(err_has("PATH_MAX"));
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", test_data("leaky_losses.pickle.gz"), "--plot", comp, NULL), 2);
  free(huge);
}

TEST(overwrites_every_input_is_checked_against_every_output) {
  paths();
  char msg[512], png[512], dat[512], tol[512], a[512];
  tmp(msg, sizeof msg, "ow_oom.txt");
  put(msg, OOM_TEXT);
  /* mincap, fit, run, advise, explain: --oom-message M --out M (and every other output) */
  CHECK_EQ(test_cli(outp, errp, "mincap", "--workload", WL, "--device", "sim", "--oom-message", msg, "--out", msg, NULL), 2);
  CHECK(err_has("same file as the input --oom-message"));
  CHECK(file_is(msg, OOM_TEXT));
  CHECK_EQ(test_cli(outp, errp, "fit", "--workload", FIT_WL, "--vary", "batch", "--oom-message", msg, "--out", msg, NULL), 2);
  CHECK(file_is(msg, OOM_TEXT));
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--oom-message", msg, "--breakdown", msg, NULL), 2);
  CHECK(file_is(msg, OOM_TEXT));
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", test_data("leaky_losses.pickle.gz"), "--oom-message", msg, "--out", msg, NULL), 2);
  CHECK(file_is(msg, OOM_TEXT));
  /* fit --oom-message X.png.dat --plot X.png: the plot's data file is the message */
  tmp(png, sizeof png, "ow_x.png");
  snprintf(dat, sizeof dat, "%s.dat", png);
  put(dat, OOM_TEXT);
  CHECK_EQ(test_cli(outp, errp, "fit", "--workload", FIT_WL, "--vary", "batch", "--oom-message", dat, "--plot", png, NULL), 2);
  CHECK(err_has("--plot's data"));
  CHECK(file_is(dat, OOM_TEXT));
  /* explain --plot X.png: its X.dat and X.gp are outputs too */
  snprintf(dat, sizeof dat, "%s/ow_x.gp", test_tmpdir());
  put(dat, OOM_TEXT);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", test_data("leaky_losses.pickle.gz"), "--oom-message", dat, "--plot", png, NULL), 2);
  CHECK(file_is(dat, OOM_TEXT));
  /* compare: a report over the tolerance file or a CSV */
  tmp(tol, sizeof tol, "ow_tol.csv");
  put(tol, "column,mode,abs,rel,factor\n");
  tmp(a, sizeof a, "ow_a.csv");
  put(a, "x\n");
  CHECK_EQ(test_cli(outp, errp, "compare", a, a, "--tolerance", tol, "--junit", tol, NULL), 2);
  CHECK(file_is(tol, "column,mode,abs,rel,factor\n"));
  CHECK_EQ(test_cli(outp, errp, "compare", a, a, "--json", a, NULL), 2);
  CHECK(file_is(a, "x\n"));
}

TEST(overwrites_two_outputs_of_one_name_refused_before_they_exist) {
  paths();
  char f[512], dotf[512], via[512], sub[512];
  tmp(f, sizeof f, "ow_same.csv");
  unlink(f);
  snprintf(dotf, sizeof dotf, "%s/./ow_same.csv", test_tmpdir());
  tmp(sub, sizeof sub, "ow_sub");
  mkdir(sub, 0777);
  snprintf(via, sizeof via, "%s/ow_sub/../ow_same.csv", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", f, "--timeline", dotf, NULL), 2);
  CHECK(err_has("--out and --timeline name the same file"));
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", f, "--breakdown", via, NULL), 2);
  struct stat st;
  CHECK(stat(f, &st) != 0);   /* nothing written */
  /* the form, relative to the working directory */
  char cmd[1400];
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  snprintf(cmd, sizeof cmd, "B=$PWD/build/fragbench; cd '%s' && $B run --workload '%s' --device sim --quiet --out f.csv --timeline ./f.csv 2>/dev/null",
           test_tmpdir(), WL);
  CHECK_EQ(WEXITSTATUS(system(cmd)), 2);
}

TEST(overwrites_a_failed_write_exits_non_zero) {
  paths();
  if (access("/dev/full", W_OK)) SKIP("no /dev/full");
  /* standard output is /dev/full: every command that writes there fails, saying so */
  CHECK_EQ(test_cli("/dev/full", errp, "run", "--workload", WL, "--device", "sim", "--quiet", NULL), 2);
  CHECK(err_has("No space left on device"));
  CHECK_EQ(test_cli("/dev/full", errp, "mincap", "--workload", WL, "--device", "sim", "--quiet", NULL), 2);
  CHECK_EQ(test_cli("/dev/full", errp, "fit", "--workload", FIT_WL, "--vary", "batch", "--limit", "0.5", "--allocator", "caching",
                    "--to", "4", "--quiet", NULL), 2);
  CHECK_EQ(test_cli("/dev/full", errp, "advise", "--trace", test_data("leaky_losses.pickle.gz"), "--variations", "1", "--quiet", NULL), 2);
  CHECK_EQ(test_cli("/dev/full", errp, "explain", "--trace", test_data("leaky_losses.pickle.gz"), NULL), 2);
  /* and an output flag naming it */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", "/dev/full", NULL), 2);
  CHECK(err_has("write failed"));
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", "/dev/null", "--timeline", "/dev/full", NULL), 2);
}

TEST(overwrites_dash_is_stdout_for_every_output_flag) {
  paths();
  char csv[512];
  tmp(csv, sizeof csv, "dash.csv");
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", csv, "--timeline", "-", NULL), 0);
  char *t = test_read_file(outp);
  CHECK(t && !strncmp(t, "allocator,event,", 16));   /* the timeline's header */
  free(t);
  struct stat st;
  CHECK(stat("-", &st) != 0);   /* no file named "-" */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", csv, "--breakdown", "-", NULL), 0);
  t = test_read_file(outp);
  CHECK(t && strstr(t, "stream") != NULL);
  free(t);
  CHECK_EQ(test_cli(outp, errp, "export", "--trace", test_data("leaky_losses.pickle.gz"), "--out", "-", NULL), 0);
  t = test_read_file(outp);
  CHECK(t && !strncmp(t, "# fragbench-trace", 17));
  free(t);
  /* two things on stdout: refused */
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--timeline", "-", NULL), 2);
  CHECK(err_has("standard output already carries the CSV"));
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", "-", "--breakdown", "-", NULL), 2);
  const char *base = "results/baseline-sim.csv";
  if (access(base, R_OK)) SKIP("no baseline");
  CHECK_EQ(test_cli(outp, errp, "compare", base, base, "--junit", "-", NULL), 0);
  t = test_read_file(outp);
  CHECK(t && strstr(t, "<testsuite") != NULL);   /* the XML alone on stdout, the text on stderr */
  free(t);
  CHECK_EQ(test_cli(outp, errp, "compare", base, base, "--junit", "-", "--json", "-", NULL), 2);
  /* standard output under another name is standard output too */
  char link_path[512];
  tmp(link_path, sizeof link_path, "dash_stdout");
  unlink(link_path);
  CHECK_EQ(symlink("/proc/self/fd/1", link_path), 0);
  CHECK_EQ(test_cli(outp, errp, "compare", base, base, "--junit", link_path, NULL), 0);
  t = test_read_file(outp);
  CHECK(t && !strncmp(t, "<?xml", 5));   /* the XML alone */
  free(t);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--timeline", link_path, NULL), 2);
  CHECK(err_has("standard output already carries the CSV"));
}

TEST(overwrites_a_read_only_output_is_refused_before_the_work) {
  paths();
  char ro[512];
  tmp(ro, sizeof ro, "ro.csv");
  unlink(ro);
  put(ro, "keep\n");
  CHECK_EQ(chmod(ro, 0444), 0);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", ro, NULL), 2);
  CHECK(err_has("read-only (mode 0444)"));
  CHECK(file_is(ro, "keep\n"));
  struct stat st;
  CHECK(!stat(ro, &st) && (st.st_mode & 07777) == 0444);
  /* advise says an output it cannot write before its search, not after */
  char nodir[512];
  tmp(nodir, sizeof nodir, "no/such/dir/advise.csv");
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", test_data("leaky_losses.pickle.gz"), "--out", nodir, NULL), 2);
  CHECK(err_has("no directory"));
  char *e = test_read_file(errp);
  CHECK(e && !strstr(e, "replayed") && !strstr(e, "limit"));   /* nothing of the search was said */
  free(e);
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", test_data("leaky_losses.pickle.gz"), "--out", ro, NULL), 2);
  CHECK(file_is(ro, "keep\n"));
}

LONG_TEST(overwrites_stdin_is_read_once_and_a_fifo_waits_for_its_writer) {
  paths();
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  char msg[512], fifo[512], cmd[2000], out[512];
  tmp(msg, sizeof msg, "fifo_oom.txt");
  put(msg, OOM_TEXT);
  /* --oom-message - --trace -: both would read stdin */
  snprintf(cmd, sizeof cmd, "build/fragbench run --trace - --oom-message - --device sim < '%s' 2>'%s'", msg, errp);
  CHECK_EQ(WEXITSTATUS(system(cmd)), 2);
  CHECK(err_has("both read standard input"));
  /* a fifo whose writer starts a second late: waited for, read whole */
  tmp(fifo, sizeof fifo, "oom.fifo");
  tmp(out, sizeof out, "fifo_fit.csv");
  unlink(fifo);
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  snprintf(cmd, sizeof cmd, "(sleep 1; cat '%s' > '%s') & build/fragbench fit --workload '%s' --vary batch --allocator caching "
           "--to 4 --quiet --oom-message '%s' --out '%s' 2>'%s'; rc=$?; wait; exit $rc", msg, fifo, FIT_WL, fifo, out, errp);
  CHECK_EQ(WEXITSTATUS(system(cmd)), 0);
  char *t = test_read_file(out);
  CHECK(t && strstr(t, "21243981988"));   /* 19.785 GiB, the message's limit */
  free(t);
  /* no writer at all: refused after the bound, never a hang */
  snprintf(cmd, sizeof cmd, "FB_FIFO_WAIT_S=0.5 timeout 20 build/fragbench fit --workload '%s' --vary batch --oom-message '%s' 2>'%s'",
           FIT_WL, fifo, errp);
  CHECK_EQ(WEXITSTATUS(system(cmd)), 2);
  CHECK(err_has("no process wrote to within 0.5 s"));
  /* a late writer of a trace too (it read as empty before) */
  snprintf(cmd, sizeof cmd, "(sleep 1; cat '%s' > '%s') & build/fragbench run --trace '%s' --device sim --quiet >/dev/null 2>'%s'; rc=$?; wait; exit $rc",
           test_data("leaky_losses.pickle.gz"), fifo, fifo, errp);
  CHECK_EQ(WEXITSTATUS(system(cmd)), 0);
}

LONG_TEST(overwrites_temporaries_of_a_killed_process_do_not_stay) {
  paths();
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  char dir[512], out[600], cmd[1600], left[700];
  tmp(dir, sizeof dir, "killed");
  mkdir(dir, 0777);
  snprintf(out, sizeof out, "%s/r.csv", dir);
  put(out, "old\n");
  /* one named after a process that is gone (as a SIGKILL leaves on a file system without
   * unnamed temporaries): swept by the next write of that target */
  pid_t pid = fork();
  if (!pid) _exit(0);
  waitpid(pid, NULL, 0);
  snprintf(left, sizeof left, "%s/.r.csv.tmp-%ld-abcdef", dir, (long)pid);
  put(left, "partial");
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", WL, "--device", "sim", "--quiet", "--out", out, NULL), 0);
  CHECK(access(left, F_OK) != 0);
  /* SIGKILL mid-run and SIGPIPE: nothing beside the target, the old file as it was */
  put(out, "old\n");
  snprintf(cmd, sizeof cmd, "timeout -s KILL 1 build/fragbench run --workload train_loop:iters=400000 --device sim --quiet "
           "--out '%s' --timeline '%s/t.csv' 2>/dev/null; ls -A '%s' | grep -c tmp", out, dir, dir);
  CHECK_EQ(count_from(cmd), 0);
  CHECK(file_is(out, "old\n"));
  /* a staged stdin copy of a killed command: swept by the next command that stages one */
  char tdir[512];
  tmp(tdir, sizeof tdir, "stage_tmp");
  mkdir(tdir, 0777);
  snprintf(cmd, sizeof cmd, "(cat '%s'; sleep 3) | TMPDIR='%s' timeout -s KILL 1 build/fragbench run --trace - --device sim --quiet "
           ">/dev/null 2>&1; ls '%s' | grep -c fragbench-input", test_data("leaky_losses.pickle.gz"), tdir, tdir);
  CHECK_EQ(count_from(cmd), 1);   /* the killed one's */
  snprintf(cmd, sizeof cmd, "cat '%s' | TMPDIR='%s' build/fragbench run --trace - --device sim --quiet >/dev/null 2>&1; "
           "ls '%s' | grep -c fragbench-input", test_data("leaky_losses.pickle.gz"), tdir, tdir);
  CHECK_EQ(count_from(cmd), 0);
}

/* the named temporaries (file systems without O_TMPFILE): SIGTERM and SIGPIPE remove them */
TEST(overwrites_named_temporaries_go_on_sigterm_and_sigpipe) {
  paths();
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  char dir[512], out[600], cmd[1600];
  tmp(dir, sizeof dir, "named");
  mkdir(dir, 0777);
  snprintf(out, sizeof out, "%s/r.csv", dir);
  put(out, "old\n");
  snprintf(cmd, sizeof cmd, "FB_OUTFILE_NAMED=1 timeout -s TERM 1 build/fragbench run --workload train_loop:iters=400000 --device sim "
           "--quiet --out '%s' 2>/dev/null; ls -A '%s' | grep -c tmp", out, dir);
  CHECK_EQ(count_from(cmd), 0);
  CHECK(file_is(out, "old\n"));
  /* the timeline on a pipe whose reader goes away: SIGPIPE, the CSV's temporary removed */
  snprintf(cmd, sizeof cmd, "FB_OUTFILE_NAMED=1 build/fragbench run --workload train_loop:iters=2000 --device sim --quiet "
           "--out '%s' --timeline - 2>/dev/null | head -c 10 >/dev/null; ls -A '%s' | grep -c tmp", out, dir);
  CHECK_EQ(count_from(cmd), 0);
  CHECK(file_is(out, "old\n"));
  /* and a whole run with them still lands */
  snprintf(cmd, sizeof cmd, "FB_OUTFILE_NAMED=1 build/fragbench run --workload '%s' --device sim --quiet --out '%s' 2>/dev/null", WL, out);
  CHECK_EQ(system(cmd), 0);
  char *t = test_read_file(out);
  CHECK(t && !strncmp(t, "run_id,", 7));
  free(t);
}
