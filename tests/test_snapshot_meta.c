/* test_snapshot_meta.c - capture.py's side file beside a snapshot (snapshot_meta.h): its
 * name from the snapshot's, the fields read and checked (the limit must be PyTorch's
 * fraction x total), a bad file refused naming the file and the field, and the commands
 * that open a snapshot reading the exact limit from it without a flag, saying so, with
 * --limit and --oom-message overriding it. */
#include <stdlib.h>
#include <unistd.h>
#include "test.h"
#include "snapshot_meta.h"

#define GOOD "{\"format\": \"fragbench-capture 1\", \"torch_version\": \"2.11.0+cu128\", \"device_name\": \"NVIDIA H100 80GB HBM3\",\n" \
             " \"device_total_bytes\": 85017493504, \"memory_fraction\": 0.0125, \"limit_bytes\": 1062718668,\n" \
             " \"limit_source\": \"fraction\", \"alloc_conf\": \"expandable_segments:True\", \"oom_via\": \"observer\",\n" \
             " \"observer_device_free\": 75000000000, \"note\": \"caf\\u00e9 \\\"q\\\"\", \"caught\": true, \"x\": null}\n"

TEST(snapshot_meta_path_is_the_stem_plus_meta_json) {
  char p[256];
  CHECK(!snapshot_meta_path("out/snapshot.pickle.gz", p, sizeof p));
  CHECK_STR(p, "out/snapshot.meta.json");
  CHECK(!snapshot_meta_path("a.b/job.pickle", p, sizeof p));
  CHECK_STR(p, "a.b/job.meta.json");
  CHECK(!snapshot_meta_path("job.pkl.gz", p, sizeof p));
  CHECK_STR(p, "job.meta.json");
  CHECK(!snapshot_meta_path("d/trace.csv", p, sizeof p));   /* not a snapshot suffix: kept */
  CHECK_STR(p, "d/trace.csv.meta.json");
  CHECK(!snapshot_meta_path("d/.pickle", p, sizeof p));     /* nothing before the suffix: kept */
  CHECK_STR(p, "d/.pickle.meta.json");
  CHECK(snapshot_meta_path("out/snapshot.pickle.gz", p, 10) == -1);
}

TEST(snapshot_meta_reads_the_fields_and_checks_the_fraction) {
  struct snapshot_meta m;
  char err[FB_ERRLEN];
  CHECK_MSG(!snapshot_meta_parse("s.meta.json", GOOD, &m, err), "%s", err);
  CHECK_EQ(m.limit_bytes, 1062718668ull);
  CHECK_EQ(m.limit_bytes, (uint64_t)(0.0125 * 85017493504.0));   /* PyTorch's (size_t)(fraction * total) */
  CHECK_EQ(m.device_total, 85017493504ull);
  CHECK(m.fraction == 0.0125);
  CHECK_STR(m.alloc_conf, "expandable_segments:True");
  CHECK_STR(m.torch_version, "2.11.0+cu128");
  CHECK_STR(m.limit_source, "fraction");
  char src[128];
  snapshot_meta_source(&m, src, sizeof src);
  CHECK_STR(src, "s.meta.json beside the snapshot (memory fraction 0.0125 of 79.18 GiB)");
  /* no fraction: the limit as written (reserved + free at the OOM) */
  CHECK_MSG(!snapshot_meta_parse("d/s.meta.json", "{\"format\":\"fragbench-capture 1\",\"limit_bytes\":1048576000,"
                                 "\"memory_fraction\":null,\"limit_source\":\"reserved_plus_free\",\"alloc_conf\":\"\"}", &m, err), "%s", err);
  CHECK_EQ(m.limit_bytes, 1048576000ull);
  CHECK(m.fraction == 0);
  CHECK_STR(m.alloc_conf, "");
  snapshot_meta_source(&m, src, sizeof src);
  CHECK_STR(src, "s.meta.json beside the snapshot (reserved_plus_free)");
}

static void bad(const char *text, const char *want) {
  struct snapshot_meta m;
  char err[FB_ERRLEN];
  CHECK_MSG(snapshot_meta_parse("d/s.meta.json", text, &m, err) == -1, "accepted: %s", text);
  CHECK_CONTAINS(err, "d/s.meta.json");
  CHECK_CONTAINS(err, want);
}

TEST(snapshot_meta_bad_fields_name_the_file_and_the_field) {
  bad("{\"format\":\"fragbench-capture 1\",\"device_total_bytes\":85017493504,\"memory_fraction\":0.0125,\"limit_bytes\":1062718669}",
      "field \"limit_bytes\": expected memory_fraction x device_total_bytes = 1062718668, got 1062718669");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":\"1G\"}", "field \"limit_bytes\": expected a positive integer (bytes), got 1G");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":0}", "field \"limit_bytes\": expected a positive integer");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":-5}", "field \"limit_bytes\": expected a positive integer");
  bad("{\"format\":\"fragbench-capture 1\"}", "field \"limit_bytes\": missing");
  bad("{\"limit_bytes\":5}", "field \"format\": missing");
  bad("{\"format\":\"fragbench-capture 2\",\"limit_bytes\":5}", "field \"format\": expected \"fragbench-capture 1\"");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":5,\"memory_fraction\":1.5}", "field \"memory_fraction\": expected a number in (0, 1]");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":500,\"device_total_bytes\":400}", "expected at most device_total_bytes");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":5,\"alloc_conf\":7}", "field \"alloc_conf\": expected a string");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":5,\"o\":{\"a\":1}}", "a nested object or list");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":5", "expected ',' or '}'");
  bad("{\"format\":\"fragbench-capture 1\",\"limit_bytes\":5} x", "text after the object");
  bad("not json", "byte 0: expected '{'");
}

/* a snapshot that ended in an OOM, linked into the scratch folder with a side file beside it */
static char snap[600], meta[600], outp[600], errp[600];
static void setup(const char *meta_text) {
  char cwd[400];
  CHECK(getcwd(cwd, sizeof cwd));
  snprintf(snap, sizeof snap, "%s/job.pickle", test_tmpdir());
  snprintf(meta, sizeof meta, "%s/job.meta.json", test_tmpdir());
  snprintf(outp, sizeof outp, "%s/meta.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/meta.err", test_tmpdir());
  unlink(snap);
  char target[600];
  snprintf(target, sizeof target, "%s/tests/variants/oom_fraction.pickle", cwd);
  CHECK(!symlink(target, snap));
  unlink(meta);
  if (meta_text) {
    FILE *f = fopen(meta, "w");
    CHECK(f);
    fputs(meta_text, f);
    fclose(f);
  }
}

#define META_1000M "{\"format\": \"fragbench-capture 1\", \"limit_bytes\": 1048576000, \"limit_source\": \"reserved_plus_free\"}"

TEST(snapshot_meta_explain_reads_the_limit_beside_the_snapshot_and_says_so) {
  setup(META_1000M);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, NULL), 0);
  char *o = test_read_file(outp), *e = test_read_file(errp);
  CHECK_CONTAINS(e, "limit 1000.00 MiB (1048576000 bytes): from job.meta.json beside the snapshot (reserved_plus_free)");
  CHECK_CONTAINS(o, "cap 1000.00 MiB");
  free(o); free(e);
  /* without it: the inference (an interval), as before */
  setup(NULL);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, NULL), 0);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "inferred from the snapshot's OOM");
  free(e);
}

TEST(snapshot_meta_explicit_flags_override_it) {
  setup(META_1000M);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, "--limit", "900M", NULL), 0);
  char *e = test_read_file(errp);
  CHECK(!strstr(e, "meta.json"));
  CHECK_CONTAINS(e, "given (--limit 900M");
  free(e);
  const char *msg = test_write_tmp("oom.txt", "CUDA out of memory. Tried to allocate 480.00 MiB. GPU 0 has a total capacity of "
                                   "79.18 GiB of which 70.00 GiB is free. Including non-PyTorch memory, this process has 1.00 GiB "
                                   "memory in use. 1.05 GiB allowed; Of the allocated memory 650.00 MiB is allocated by PyTorch, "
                                   "and 300.00 MiB is reserved by PyTorch but unallocated.");
  CHECK_EQ(test_cli(outp, errp, "mincap", "--trace", snap, "--allocator", "caching", "--oom-message", msg, NULL), 0);
  e = test_read_file(errp);
  CHECK(!strstr(e, "meta.json"));
  CHECK_CONTAINS(e, "from PyTorch's OOM message");
  free(e);
}

TEST(snapshot_meta_mincap_run_and_fit_read_it) {
  setup(META_1000M);
  CHECK_EQ(test_cli(outp, errp, "mincap", "--trace", snap, "--allocator", "caching", NULL), 0);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "limit 1000.00 MiB (1048576000 bytes): from job.meta.json beside the snapshot");
  CHECK_CONTAINS(e, "needs 1.10 GiB: above the limit (fails under it)");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "run", "--trace", snap, "--allocator", "caching", "--device", "sim", NULL), 0);
  char *o = test_read_file(outp);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "from job.meta.json beside the snapshot");
  CHECK_CONTAINS(o, ",1048576000,");   /* cap_bytes */
  CHECK_CONTAINS(o, ",side_file,");    /* cap_source */
  free(o); free(e);
  CHECK_EQ(test_cli(outp, errp, "fit", "--workload", "train_loop:arch=gpt,iters=2", "--vary", "batch", "--to", "4",
                    "--trace", snap, "--allocator", "caching", NULL), 0);
  o = test_read_file(outp);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "limit 1000.00 MiB (1048576000 bytes): from job.meta.json beside the snapshot");
  CHECK_CONTAINS(o, ",1048576000,");   /* limit_bytes */
  free(o); free(e);
}

TEST(snapshot_meta_bad_side_file_is_exit_2_naming_it) {
  setup("{\"format\": \"fragbench-capture 1\", \"limit_bytes\": \"lots\"}");
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "job.meta.json: field \"limit_bytes\": expected a positive integer (bytes), got lots");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "mincap", "--trace", snap, "--allocator", "caching", NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "job.meta.json: field \"limit_bytes\"");
  free(e);
}

TEST(snapshot_meta_explain_replays_the_jobs_alloc_conf) {
  setup("{\"format\": \"fragbench-capture 1\", \"limit_bytes\": 1048576000, \"alloc_conf\": \"expandable_segments:True\"}");
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, NULL), 0);
  char *o = test_read_file(outp), *e = test_read_file(errp);
  CHECK_CONTAINS(e, "replaying the job's PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (expandable)");
  CHECK_CONTAINS(o, ", expandable (");
  free(o); free(e);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, "--allocator", "caching", NULL), 0);
  o = test_read_file(outp);
  CHECK_CONTAINS(o, ", caching (");
  free(o);
  setup("{\"format\": \"fragbench-capture 1\", \"limit_bytes\": 1048576000, \"alloc_conf\": \"bogus_knob:3\"}");
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "bogus_knob");
  free(e);
}
