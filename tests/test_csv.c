/* test_csv.c - the results CSV contract: version line, header in order, quoting, empty
 * figures that do not apply, one row per run. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "csv.h"

static const char *expected_header =
  "run_id,version,workload,trace,allocator,params,device,device_name,cap_bytes,cap_x,seed,"
  "status,completed,events,allocs,frees,skipped_events,oom_count,first_oom_event,"
  "peak_requested,peak_allocated,peak_reserved,overhead,frag,ext_frag,internal_frag,"
  "trace_peak_reserved,device_allocs,device_frees,maps,unmaps,cache_flushes,"
  "modeled_driver_ns,wall_ns,ns_per_op,p50_ns,p99_ns,max_ns,leak_bytes_per_iter,"
  "mincap_bytes,mincap_x,imbalance,alloc_conf,cap_source,cap_lo,cap_hi,ns_per_op_includes,model_err\n";

static int count_fields(const char *line) {
  int n = 1, q = 0;
  for (; *line && *line != '\n'; line++) {
    if (*line == '"') q = !q;
    else if (*line == ',' && !q) n++;
  }
  return n;
}

TEST(csv_header_is_the_contract) {
  char path[512];
  snprintf(path, sizeof path, "%s/h.csv", test_tmpdir());
  FILE *f = fopen(path, "w");
  csv_write_header(f);
  fclose(f);
  char *t = test_read_file(path);
  CHECK_STR(t, expected_header);   /* the header first: pandas.read_csv and csv.DictReader need no options */
  free(t);
}

TEST(csv_row_quotes_and_empties) {
  char path[512];
  snprintf(path, sizeof path, "%s/r.csv", test_tmpdir());
  FILE *f = fopen(path, "w");
  struct run_result r;
  run_result_init(&r);
  snprintf(r.workload, sizeof r.workload, "train_loop:layers=4,batch=2");
  snprintf(r.allocator, sizeof r.allocator, "caching");
  snprintf(r.params, sizeof r.params, "roundup_power2_divisions=[256:1,>:8]");
  snprintf(r.device, sizeof r.device, "sim");
  snprintf(r.device_name, sizeof r.device_name, "say \"hi\"");
  r.completed = 1;
  r.events = 10;
  r.peak_requested = 100;
  r.peak_reserved = 200;
  r.overhead = 2.0;
  csv_write_row(f, "7", &r);
  run_result_init(&r);
  snprintf(r.status, sizeof r.status, "skipped: needs a GPU");
  csv_write_row(f, "8", &r);
  fclose(f);
  char *t = test_read_file(path);
  CHECK(!strncmp(t, "7,0.1.0,\"train_loop:layers=4,batch=2\",,caching,\"roundup_power2_divisions=[256:1,>:8]\",sim,\"say \"\"hi\"\"\",,,0,ok,1,10,", 104));
  CHECK_CONTAINS(t, ",2.000000,");
  char *second = strchr(t, '\n') + 1;
  CHECK(!strncmp(second, "8,0.1.0,", 8));
  CHECK_CONTAINS(second, ",skipped: needs a GPU,0,,,");
  CHECK_EQ(count_fields(t), 48);
  CHECK_EQ(count_fields(second), 48);
  CHECK(strstr(t, ",0\n") != NULL);                /* model_err last: 0, caching is exact */
  CHECK(second[strlen(second) - 2] == ',');         /* a row that did not run: empty */
  free(t);
}
