/* test_run_terminal.c - `run` without --out: on a terminal (a pseudo-terminal here) the
 * table only, no CSV rows between its lines, and a sentence saying how to get the CSV;
 * into a pipe or file the CSV, as before. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test.h"

int cli_main(int argc, char **argv);

/* run argv with stdout on a pseudo-terminal: what the terminal showed into *tty, stderr into err_path */
static int run_on_tty(char **tty, const char *err_path, char **argv, int argc) {
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) || unlockpt(m)) return -1;
  const char *name = ptsname(m);
  if (!name) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int s = open(name, O_RDWR | O_NOCTTY);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(s, 1);
    dup2(fe, 2);
    close(m);
    int rc = cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {   /* the terminal's output until the child closes its end (EIO) */
    if (n + 1 >= cap) buf = realloc(buf, cap *= 2);
    ssize_t k = read(m, buf + n, cap - n - 1);
    if (k <= 0) break;
    n += (size_t)k;
  }
  buf[n] = 0;
  close(m);
  int status = 0;
  waitpid(pid, &status, 0);
  *tty = buf;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(run_on_a_terminal_prints_the_table_only_and_says_how_to_get_the_csv) {
  char err[512], *tty = NULL;
  snprintf(err, sizeof err, "%s/tty_err.txt", test_tmpdir());
  char *argv[] = {"fragbench", "run", "--workload", "train_loop:iters=2", "--allocator", "caching", "--device", "sim", NULL};
  int rc = run_on_tty(&tty, err, argv, 8);
  if (rc < 0) SKIP("no pseudo-terminal here");
  CHECK_EQ(rc, 0);
  CHECK(tty && !strstr(tty, "run_id,"));   /* no CSV header or rows on the terminal */
  CHECK(!strstr(tty, ",caching,"));
  char *e = test_read_file(err);
  CHECK_CONTAINS(e, "workload                       allocator");   /* the table */
  CHECK_CONTAINS(e, "train_loop:iters=2");
  CHECK_CONTAINS(e, "the table only, stdout being a terminal; for the CSV give --out FILE.csv (or --out -), or pipe it");
  free(e);
  free(tty);
  /* --out - on a terminal: asked for, written */
  char *argv2[] = {"fragbench", "run", "--workload", "train_loop:iters=2", "--allocator", "caching", "--device", "sim", "--out", "-", NULL};
  CHECK_EQ(run_on_tty(&tty, err, argv2, 10), 0);
  CHECK_CONTAINS(tty, "run_id,");
  free(tty);
  /* into a file: the CSV, as before */
  char out[512];
  snprintf(out, sizeof out, "%s/tty_out.csv", test_tmpdir());
  CHECK_EQ(test_cli(out, err, "run", "--workload", "train_loop:iters=2", "--allocator", "caching", "--device", "sim", NULL), 0);
  char *csv = test_read_file(out);
  CHECK(csv && !strncmp(csv, "run_id,", 7));
  CHECK_CONTAINS(csv, ",caching,");
  free(csv);
  e = test_read_file(err);
  CHECK(!strstr(e, "stdout being a terminal"));
  free(e);
}
