/* test_report_verdict.c - the report's first line (report_verdict.c), from rows with a
 * known answer: which of PyTorch's settings to set, weighed against the default on each
 * workload; ties; a modelled range (cudaMallocAsync) shown beside the exact settings and
 * never erasing their ranking; rows that ran out of memory weighed by whether they
 * completed, never by their figures; a setting that wins on few workloads not
 * recommended. */
#include <stdlib.h>
#include <sys/stat.h>
#include "test.h"

#define HDR "run_id,version,workload,trace,allocator,params,device,device_name,cap_bytes,cap_x,seed,status,completed,events,allocs,frees,skipped_events,oom_count,first_oom_event,peak_requested,peak_allocated,peak_reserved,overhead,frag,ext_frag,internal_frag,trace_peak_reserved,device_allocs,device_frees,maps,unmaps,cache_flushes,modeled_driver_ns,wall_ns,ns_per_op,p50_ns,p99_ns,max_ns,leak_bytes_per_iter,mincap_bytes,mincap_x,imbalance,model_err\n"
/* a row: workload, allocator, params, status, peak_reserved (GiB x 100, peak requested 1 GiB), model_err */
#define ROW(...) ROW_(__VA_ARGS__)
#define ROW_(w, a, p, st, res, ov, err)                                                                                           \
  "1,0.1.0," w ",," a "," p ",sim,simdev,,,1," st ",1,1000,500,500,0,0,,1073741824,1073741824," res "," ov ",0.1,0.1,0,,10,0,0,0,0," \
  "2000000,1,60,50,90,99,,,,," err "\n"
#define OOM(w, a, p) "1,0.1.0," w ",," a "," p ",sim,simdev,2147483648,,1,oom,0,400,200,100,0,1,400,900000000,900000000,1000000000,1.11,0.1,0.1,0,,10,0,0,0,0,2000000,1,60,50,90,99,,,,,\n"
#define G150 "1610612736", "1.50"
#define G110 "1181116006", "1.10"
#define G120 "1288490189", "1.20"
#define G105 "1127428915", "1.05"

static char *first_line(char *md) {
  if (md) md[strcspn(md, "\n")] = 0;
  return md;
}

TEST(report_verdict_first_line_sets_what_reserves_less_than_the_default_on_most_workloads) {
  /* expandable below caching on a, b, c, above on d; async's range (+/-20%) holds both figures */
  char *md = test_report_of("v_most", HDR
                       ROW("a", "caching", "", "ok", G150, "") ROW("a", "expandable", "", "ok", G110, "") ROW("a", "async", "", "ok", G120, "0.2")
                       ROW("b", "caching", "", "ok", G150, "") ROW("b", "expandable", "", "ok", G110, "") ROW("b", "async", "", "ok", G120, "0.2")
                       ROW("c", "caching", "", "ok", G150, "") ROW("c", "expandable", "", "ok", G110, "") ROW("c", "async", "", "ok", G120, "0.2")
                       ROW("d", "caching", "", "ok", G110, "") ROW("d", "expandable", "", "ok", G150, "") ROW("d", "async", "", "ok", G120, "0.2"));
  CHECK(md);
  char *copy = strdup(md);
  CHECK_STR(first_line(copy), "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`: it reserves less than PyTorch's default on 3 of 4 "
                              "workloads (more on 1), replayed exactly. `backend:cudaMallocAsync` is a model (±20%), not ranked against "
                              "the settings measured exactly: its range holds `expandable_segments:True`'s figure on 3 of 4 workloads, lies "
                              "below it on 1.");
  free(copy);
  /* each workload ranks the exact settings; the range sits beside them, bold stays on the least exact */
  CHECK_CONTAINS(md, "- **a** (peak requested 1.00 GiB): of PyTorch's settings, `expandable_segments:True` reserves the least: 1.10x (1.10 GiB), "
                     "26.7% less than the default (caching); `backend:cudaMallocAsync` is a model: 1.000x-1.44x");
  CHECK_CONTAINS(md, "| a | 1.50x (1.50 GiB) | **1.10x (1.10 GiB)** | 1.000x-1.44x (1.00 GiB-1.44 GiB; model ±20%) |");
  CHECK(!strstr(md, "neither is ranked first"));
  free(md);
}

TEST(report_verdict_keeps_the_default_on_a_tie_and_bolds_both) {
  char *md = test_report_of("v_tie", HDR
                       ROW("a", "caching", "", "ok", G110, "") ROW("a", "expandable", "", "ok", G110, "")
                       ROW("b", "caching", "", "ok", G110, "") ROW("b", "expandable", "", "ok", G110, ""));
  CHECK(md);
  char *copy = strdup(md);
  CHECK_STR(first_line(copy), "Keep PyTorch's default (`PYTORCH_CUDA_ALLOC_CONF` unset): no setting measured exactly reserves less on most "
                              "workloads; the nearest, `expandable_segments:True`, reserves less on 0 of 2 (the same on 2).");
  free(copy);
  CHECK_CONTAINS(md, "the default (caching) and `expandable_segments:True` reserve the same, the least: 1.10x (1.10 GiB).");
  CHECK_CONTAINS(md, "| a | **1.10x (1.10 GiB)** | **1.10x (1.10 GiB)** |");
  free(md);
}

TEST(report_verdict_weighs_a_row_that_died_by_whether_it_completed_never_by_its_figures) {
  /* a: the default died at the cap (its figure, 0.93 GiB, is where it stopped), expandable
   * completed; b: both died; c: expandable died where the default completed; d, e: expandable less */
  char *md = test_report_of("v_died", HDR
                       OOM("a", "caching", "") ROW("a", "expandable", "", "ok", G150, "")
                       OOM("b", "caching", "") OOM("b", "expandable", "")
                       ROW("c", "caching", "", "ok", G110, "") OOM("c", "expandable", "")
                       ROW("d", "caching", "", "ok", G150, "") ROW("d", "expandable", "", "ok", G110, "")
                       ROW("e", "caching", "", "ok", G150, "") ROW("e", "expandable", "", "ok", G110, ""));
  CHECK(md);
  char *copy = strdup(md);
  CHECK_STR(first_line(copy), "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`: it reserves less than PyTorch's default on 3 of 5 "
                              "workloads (on 1 of them the default ran out of memory and it completed; runs out of memory on 1 where the "
                              "default completes, both run out of memory on 1), replayed exactly.");
  free(copy);
  /* a's line: the figure of the dead default is not ranked, expandable is the one that completed */
  CHECK_CONTAINS(md, "- **a** (peak requested 1.00 GiB; replayed under a limit of 2.00 GiB): of PyTorch's settings, `expandable_segments:True` "
                     "reserves the least: 1.50x (1.50 GiB); out of memory: the default (caching): OOM at event 400");
  CHECK(!strstr(md, "953.7 MiB"));   /* the dead row's peak reserved is no figure of the report */
  free(md);
}

TEST(report_verdict_does_not_set_a_setting_that_wins_on_few_workloads) {
  /* caching with max_split_size_mb below the default on 1 of 4, above on 2 */
  char *md = test_report_of("v_few", HDR
                       ROW("a", "caching", "", "ok", G150, "") ROW("a", "caching", "max_split_size_mb=256", "ok", G110, "")
                       ROW("b", "caching", "", "ok", G110, "") ROW("b", "caching", "max_split_size_mb=256", "ok", G150, "")
                       ROW("c", "caching", "", "ok", G110, "") ROW("c", "caching", "max_split_size_mb=256", "ok", G120, "")
                       ROW("d", "caching", "", "ok", G110, "") ROW("d", "caching", "max_split_size_mb=256", "ok", G110, ""));
  CHECK(md);
  CHECK_STR(first_line(md), "Keep PyTorch's default (`PYTORCH_CUDA_ALLOC_CONF` unset): no setting measured exactly reserves less on most "
                            "workloads; the nearest, `max_split_size_mb:256`, reserves less on 1 of 4 (the same on 1, more on 2).");
  free(md);
}

TEST(report_verdict_says_when_there_is_nothing_to_weigh) {
  char *md = test_report_of("v_none", HDR ROW("a", "bfc", "", "ok", G110, "") ROW("a", "cupy", "", "ok", G150, ""));
  CHECK(md);
  CHECK_STR(first_line(md), "No PyTorch setting was replayed here: nothing to set (the tables compare other allocators).");
  free(md);
  md = test_report_of("v_nodefault", HDR ROW("a", "expandable", "", "ok", G110, "") ROW("a", "async", "", "ok", G105, "0.2"));
  CHECK(md);
  CHECK_STR(first_line(md), "No row of PyTorch's default (caching) here: no setting is weighed against it (the tables rank what was "
                            "replayed). `backend:cudaMallocAsync` is a model (±20%), not ranked against the settings measured exactly.");
  free(md);
}

TEST(report_verdict_says_up_to_when_the_models_error_varies_by_workload) {
  char *md = test_report_of("v_upto", HDR
                       ROW("a", "caching", "", "ok", G150, "") ROW("a", "expandable", "", "ok", G110, "") ROW("a", "async", "", "ok", G120, "0.1")
                       ROW("b", "caching", "", "ok", G150, "") ROW("b", "expandable", "", "ok", G110, "") ROW("b", "async", "", "ok", G105, "0.3"));
  CHECK(md);
  /* a: 1.20 GiB +/-10% (1.08-1.32) and b: 1.05 GiB +/-30% (clamped: 1.00-1.37) both hold 1.10 GiB */
  CHECK_STR(first_line(md), "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`: it reserves less than PyTorch's default on 2 of 2 "
                            "workloads, replayed exactly. `backend:cudaMallocAsync` is a model (up to ±30%), not ranked against the "
                            "settings measured exactly: its range holds `expandable_segments:True`'s figure on 2 of 2 workloads.");
  free(md);
}
