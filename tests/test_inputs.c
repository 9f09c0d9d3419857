/* test_inputs.c - each trace read once per command (harness/engine/inputs.h): one buffer
 * per input while the scope is open, none outside it, a rewritten file read again, the
 * rows replayed from memory equal to the rows read from the file, and a warning's
 * "file:line" from memory equal to the reader's own. */
#include "test.h"
#include <stdlib.h>
#include <unistd.h>
#include "inputs.h"
#include "replay.h"

TEST(inputs_one_buffer_per_input_in_scope_none_outside) {
  const char *t = test_data("gpt_train.pickle.gz");
  CHECK(inputs_get(t, -1) == NULL);                 /* no scope: the rows read the file themselves */
  inputs_begin();
  const struct event_buffer *a = inputs_get(t, -1), *b = inputs_get(t, -1);
  CHECK(a && a == b);
  CHECK(a->n > 1000);
  CHECK(inputs_get(test_data("no_such_trace.pickle"), -1) == NULL);   /* unreadable: its rows say why */
  size_t n = a ? a->n : 0;
  inputs_forget(t);                                 /* a is gone with it */
  const struct event_buffer *c = inputs_get(t, -1);
  CHECK(c && c->n == n);
  inputs_end();
  CHECK(inputs_get(t, -1) == NULL);
}

TEST(inputs_rewritten_file_read_again) {
  const char *p = test_write_tmp("inputs_rewrite.csv", "# fragbench-trace v1\nop,id,size,stream,device\n"
                                                       "alloc,1,4096,0,0\nfree,1,,,0\n");
  inputs_begin();
  const struct event_buffer *a = inputs_get(p, -1);
  CHECK(a && a->n == 2);
  usleep(20000);   /* a new mtime even on coarse clocks */
  test_write_tmp("inputs_rewrite.csv", "# fragbench-trace v1\nop,id,size,stream,device\n"
                                       "alloc,1,4096,0,0\nalloc,2,8192,0,0\nfree,1,,,0\nfree,2,,,0\n");
  const struct event_buffer *b = inputs_get(p, -1);
  int n = b ? (int)b->n : -1;
  inputs_end();
  CHECK_EQ(n, 4);
  struct event_buffer big;   /* past the most a command holds: not held, its rows read the file */
  char err[FB_ERRLEN];
  CHECK(event_buffer_load_max(&big, p, -1, 3, err) < 0);
  CHECK_CONTAINS(err, "more than 3 events");
  CHECK(event_buffer_load_max(&big, p, -1, 4, err) == 0 && big.n == 4);
  event_buffer_free(&big);
}

static void row(const char *trace, const char *alloc, uint64_t cap, struct run_result *r) {
  struct run_spec s;
  memset(&s, 0, sizeof s);
  s.trace = trace;
  s.trace_device = -1;
  s.world = 1;
  s.seed = 1;
  s.allocator = alloc;
  s.device.kind = "sim";
  s.cap_bytes = cap;
  s.quiet = 1;
  run_result_init(r);
  replay_run(&s, r);
}

/* every figure of a row (async: its second bound too) the same from memory as from the file */
TEST(inputs_rows_from_memory_equal_rows_from_file) {
  const char *t = test_data("gpt_train.pickle.gz");
  const char *allocs[] = {"caching", "expandable", "async", "recorded"};
  uint64_t caps[] = {0, 10ull << 30};
  for (int a = 0; a < 4; a++)
    for (int c = 0; c < 2; c++) {
      struct run_result f, m;
      row(t, allocs[a], caps[c], &f);
      inputs_begin();
      row(t, allocs[a], caps[c], &m);
      inputs_end();
      CHECK_STR(m.status, f.status);
      CHECK_EQ(m.events, f.events);
      CHECK_EQ(m.allocs, f.allocs);
      CHECK_EQ(m.first_oom_event, f.first_oom_event);
      CHECK_EQ(m.peak_requested, f.peak_requested);
      CHECK_EQ(m.peak_reserved, f.peak_reserved);
      CHECK_EQ(m.trace_peak_reserved, f.trace_peak_reserved);
      CHECK_EQ(m.device_allocs, f.device_allocs);
      CHECK(m.model_err == f.model_err);
      CHECK_STR(m.params, f.params);
    }
}

/* a bad event's warning names the reader's line, read from memory as from the file */
TEST(inputs_where_from_memory_is_the_readers) {
  char text[8192] = "# fragbench-trace v1\nop,id,size,stream,device\n";
  for (int i = 0; i < 300; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "alloc,%d,4096,0,0\n", i + 1);
  strcat(text, "free,99999,,,0\nfree,1,,,0\n");
  const char *p = test_write_tmp("inputs_where.csv", text);
  char err[FB_ERRLEN];
  struct event_buffer b;
  CHECK_MSG(event_buffer_load(&b, p, -1, err) == 0, "%s", err);
  const struct workload_ops *rd = trace_detect(p, err);
  CHECK(rd && rd->where);
  struct workload fw, mw;
  struct workload_ctx fc = {.world = 1, .path = p, .trace_device = -1}, mc = {.world = 1, .events = &b};
  CHECK(workload_open(&fw, rd, NULL, &fc, 0, err) == 0);
  CHECK(workload_open(&mw, &trace_mem_workload, NULL, &mc, 0, err) == 0);
  struct event e1, e2;
  int checked = 0;
  for (int k = 0; k < 302; k++) {
    CHECK(workload_next(&fw, &e1, err) == 1 && workload_next(&mw, &e2, err) == 1);
    if (k == 0 || k == 256 || k == 300 || k == 301) {
      char want[400];
      snprintf(want, sizeof want, "%s", rd->where(fw.st));
      CHECK_STR(mw.ops->where(mw.st), want);
      checked++;
    }
  }
  workload_close(&fw);
  workload_close(&mw);
  event_buffer_free(&b);
  CHECK_EQ(checked, 4);
}

/* each input read once per command (strace counts the opens of the file itself): a 4-row
 * run of a snapshot, mincap of two strategies (async's second bound included), advise over
 * 3 variations, an RMM log's rows. Skipped where strace is missing or cannot trace. */
/* how often `fragbench ARGS` opens file (strace), or -1 where it fails */
static int opens_in(const char *file, const char *args) {
  char cmd[2048], out[512];
  snprintf(out, sizeof out, "%s/strace.txt", test_tmpdir());
  snprintf(cmd, sizeof cmd, "strace -f -qq -e trace=openat -o '%s' build/fragbench %s >/dev/null 2>&1", out, args);
  if (system(cmd) != 0) return -1;
  char *t = test_read_file(out);
  if (!t) return -1;
  char needle[600];
  snprintf(needle, sizeof needle, "\"%s\"", file);
  int n = 0;
  for (char *p = t; (p = strstr(p, needle)); p++) n++;
  free(t);
  return n;
}

/* the same, the command's rows to a file and nothing on stderr */
static int opens_of(const char *file, const char *args) {
  char full[1600];
  snprintf(full, sizeof full, "%s --quiet --out '%s/o.csv'", args, test_tmpdir());
  return opens_in(file, full);
}

LONG_TEST(inputs_each_trace_opened_once_per_command) {
  if (system("strace -f -qq -e trace=openat -o /dev/null true >/dev/null 2>&1")) SKIP("strace missing or not allowed to trace (apt-get install strace)");
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  const char *snap = "tests/data/gpt_train.pickle.gz", *rmm = "tests/data/leaky_losses.rmm.csv";
  CHECK_EQ(opens_of(snap, "run --trace tests/data/gpt_train.pickle.gz --allocator caching --allocator expandable --allocator bfc --allocator raw"), 1);
  CHECK_EQ(opens_of(snap, "mincap --trace tests/data/gpt_train.pickle.gz --allocator async --allocator caching"), 1);
  CHECK_EQ(opens_of("tests/data/resnet_varsize.pickle.gz", "advise --trace tests/data/resnet_varsize.pickle.gz --variations 3"), 1);
  CHECK_EQ(opens_of(rmm, "run --trace tests/data/leaky_losses.rmm.csv --allocator caching --allocator pool --cap-x 1.1,1.5"), 1);
  CHECK_EQ(opens_in(snap, "stress --trace tests/data/gpt_train.pickle.gz --allocator caching --threads 3 --quiet"), 1);   /* every thread */
  CHECK_EQ(opens_of(snap, "percall --trace tests/data/gpt_train.pickle.gz --allocator caching --passes 2"), 1);
  CHECK_EQ(opens_in(snap, "explain --trace tests/data/gpt_train.pickle.gz"), 1);
  CHECK_EQ(opens_of(snap, "export --trace tests/data/gpt_train.pickle.gz"), 1);
}

/* report DIR reads each CSV of the folder once (run_folder.c, run_folder_advise.c):
 * runs.csv, mincap.csv, capsweep.csv and the snapshot's advise CSV, which the summary and
 * the snapshot's notes both quote (each was opened 2 and 5 times before) */
TEST(inputs_report_opens_each_csv_of_the_folder_once) {
  if (system("strace -f -qq -e trace=openat -o /dev/null true >/dev/null 2>&1")) SKIP("strace missing or not allowed to trace (apt-get install strace)");
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  char d[400], cmd[3600];
  snprintf(d, sizeof d, "%s/folder", test_tmpdir());
  snprintf(cmd, sizeof cmd,
           "mkdir -p %s && T=tests/data/leaky_losses.pickle.gz && build/fragbench run --trace $T --allocator caching --allocator expandable "
           "--quiet --out %s/runs.csv && build/fragbench run --trace $T --allocator caching --cap-x 1.1,1.5 --quiet --out %s/capsweep.csv "
           "&& build/fragbench mincap --trace $T --allocator caching --quiet --out %s/mincap.csv && build/fragbench advise --trace $T "
           "--variations 2 --quiet --out %s/advise-leaky_losses.pickle.gz.csv >/dev/null 2>&1",
           d, d, d, d, d);
  CHECK_EQ(system(cmd), 0);
  const char *files[] = {"runs.csv", "capsweep.csv", "mincap.csv", "advise-leaky_losses.pickle.gz.csv"};
  snprintf(cmd, sizeof cmd, "report %s", d);
  for (int i = 0; i < 4; i++) {
    char path[900];
    snprintf(path, sizeof path, "%s/%s", d, files[i]);
    CHECK_EQ(opens_in(path, cmd), 1);
  }
  char md[700];
  snprintf(md, sizeof md, "%s/report.md", d);
  char *t = test_read_file(md);
  CHECK(t && strstr(t, "advise-leaky_losses.pickle.gz.csv"));   /* the advice quoted, from the one read */
  free(t);
}

/* explain reads the snapshot's frames in a second pass where asked (the OOM's largest
 * blocks, --html, --blocks-csv): from the bytes read once (trace_hold.c), not the file again */
TEST(inputs_explain_opens_the_snapshot_once_with_its_frames) {
  if (system("strace -f -qq -e trace=openat -o /dev/null true >/dev/null 2>&1")) SKIP("strace missing or not allowed to trace (apt-get install strace)");
  if (access("build/fragbench", X_OK)) SKIP("build/fragbench not built");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "explain --trace tests/data/gpt_train.pickle.gz --html %s/e.html --blocks-csv %s/e.csv", test_tmpdir(),
           test_tmpdir());
  CHECK_EQ(opens_in("tests/data/gpt_train.pickle.gz", cmd), 1);
  snprintf(cmd, sizeof cmd, "explain --trace tests/data/gpt_train_short_frames.pickle --html %s/f.html --blocks-csv %s/f.csv",
           test_tmpdir(), test_tmpdir());
  CHECK_EQ(opens_in("tests/data/gpt_train_short_frames.pickle", cmd), 1);
  char p[600];
  snprintf(p, sizeof p, "%s/f.csv", test_tmpdir());
  char *t = test_read_file(p);
  CHECK(t && strstr(t, ".py"));   /* the frames were read, from the bytes held: the blocks' call sites */
  free(t);
}
