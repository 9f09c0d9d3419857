/* test.h - the unit-test framework: self-registering TEST()s, CHECK macros, and the
 * runner's summary line "N passed, N failed, N skipped". Each tests/test_*.c file adds
 * its own tests; nothing else needs editing. */
#ifndef FB_TEST_H
#define FB_TEST_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*test_fn)(void);
#define TEST_GPU  1   /* needs a GPU: run after the others, in the runner's own process */
#define TEST_LONG 2   /* takes seconds (waits on processes, or replays much): started first */
void test_register(const char *name, test_fn fn, const char *file, int flags);
void test_fail(const char *file, int line, const char *fmt, ...);
void test_skip(const char *why);
int test_failed_now(void);
/* a fresh scratch directory for this test run (removed at exit unless FB_KEEP_TMP is set) */
const char *test_tmpdir(void);
/* path of a bundled data file: tests/data/NAME (works from the repository root) */
const char *test_data(const char *name);
/* the fragbench binary beside the test binary, or NULL (then the caller skips) */
const char *test_fragbench_bin(void);
/* the value of "key" in one JSON line (a quoted string without its quotes, or the text of
 * a number up to the next , or }) into out; 0, or -1 when the key is not there */
int test_json_field(const char *line, const char *key, char *out, size_t len);
/* the value of column col in the first row of a CSV text (quoted fields skipped whole), into out */
int test_csv_cell(const char *text, const char *col, char *out, size_t len);
/* a results CSV text with its timing columns (wall_ns, ns_per_op, p50_ns, p99_ns, max_ns)
 * emptied in place: what two runs of the same rows must agree on */
void test_csv_drop_timed(char *text);
/* a results CSV file's text (malloc'd) with test_csv_drop_timed applied; NULL when unreadable */
char *test_read_untimed(const char *path);
/* `fragbench report` on test_tmpdir()/name holding runs.csv = runs: report.md's text
 * (malloc'd), NULL when report failed */
char *test_report_of(const char *name, const char *runs);
/* run the CLI in-process with argv; stdout/stderr captured to files under tmpdir; returns exit code */
int test_cli(const char *out_path, const char *err_path, const char *argv0, ...);
/* is a GPU visible? probed in a child process, so this process never initializes CUDA
 * (CUDA must not be used in a child forked after the parent initialized it) */
int test_gpu_visible(char *why);
/* does the file at path hold s? 1, or 0 with what it holds on stderr (the test's log) */
int test_file_has(const char *path, const char *s);
/* whole file into a malloc'd NUL-terminated buffer (NULL if missing) */
char *test_read_file(const char *path);
/* write text to test_tmpdir()/name; the path (the last 4 stay valid) */
const char *test_write_tmp(const char *name, const char *text);

#define TEST_(name, flags)                                                      \
  static void name(void);                                                       \
  __attribute__((constructor)) static void reg_##name(void) {                   \
    test_register(#name, name, __FILE__, flags);                                \
  }                                                                             \
  static void name(void)
#define TEST(name) TEST_(name, 0)
#define GPU_TEST(name) TEST_(name, TEST_GPU)
/* a test of several seconds: the workers take these first, so that none is left running
 * alone at the end (the output keeps the tests' own order) */
#define LONG_TEST(name) TEST_(name, TEST_LONG)

#define CHECK(cond)                                                             \
  do { if (!(cond)) { test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); return; } } while (0)
#define CHECK_MSG(cond, ...)                                                    \
  do { if (!(cond)) { test_fail(__FILE__, __LINE__, __VA_ARGS__); return; } } while (0)
#define CHECK_EQ(a, b)                                                          \
  do { unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
    if (a_ != b_) { test_fail(__FILE__, __LINE__, "%s == %s: %llu != %llu", #a, #b, a_, b_); return; } } while (0)
#define CHECK_STR(a, b)                                                         \
  do { const char *a_ = (a), *b_ = (b);                                         \
    if (!a_ || !b_ || strcmp(a_, b_)) { test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); return; } } while (0)
#define CHECK_CONTAINS(hay, needle)                                             \
  do { const char *h_ = (hay), *n_ = (needle);                                  \
    if (!h_ || !strstr(h_, n_)) { test_fail(__FILE__, __LINE__, "\"%s\" not found in: %.400s", n_, h_ ? h_ : "(null)"); return; } } while (0)
#define SKIP(why) do { test_skip(why); return; } while (0)

#endif
