/* test_report_summary.c - report.md's Summary and tables as a team reads them: it leads
 * with what a PyTorch user can set, other frameworks' allocators and research designs
 * (stitch) sit in their own labelled sections, a run that ran out of memory shows where
 * it died (event, share of the run, the request) and is never best, and a model error
 * (runs.csv column model_err) makes a figure a range that is not ranked against another
 * inside it. */
#include <stdlib.h>
#include <sys/stat.h>
#include "test.h"

#define HDR "run_id,version,workload,trace,allocator,params,device,device_name,cap_bytes,cap_x,seed,status,completed,events,allocs,frees,skipped_events,oom_count,first_oom_event,peak_requested,peak_allocated,peak_reserved,overhead,frag,ext_frag,internal_frag,trace_peak_reserved,device_allocs,device_frees,maps,unmaps,cache_flushes,modeled_driver_ns,wall_ns,ns_per_op,p50_ns,p99_ns,max_ns,leak_bytes_per_iter,mincap_bytes,mincap_x,imbalance"
/* a row: workload, trace, allocator, status, events, first_oom_event, peak_reserved, overhead */
#define ROW(w, t, a, st, ev, oomev, res, ov) \
  "1,0.1.0," w "," t "," a ",,sim,simdev,,,1," st ",1," ev ",500,500,0,0," oomev ",1073741824,1073741824," res "," ov ",0.1,0.1,0,,10,0,0,0,0,2000000,1,60,50,90,99,,,,\n"

TEST(report_summary_leads_with_pytorch_settings_and_keeps_stitch_and_others_apart) {
  char *md = test_report_of("lead", HDR "\n"
                       ROW("w", "", "stitch", "ok", "1000", "", "1095216660", "1.02")
                       ROW("w", "", "caching", "ok", "1000", "", "1610612736", "1.50")
                       ROW("w", "", "expandable", "ok", "1000", "", "1181116006", "1.10")
                       ROW("w", "", "bfc", "ok", "1000", "", "1503238553", "1.40")
                       ROW("w", "", "oracle", "ok", "1000", "", "1073741824", "1.00"));
  CHECK(md);
  char *sum = strstr(md, "## Summary\n\n");
  CHECK(sum);
  sum = strstr(sum, "\n\n### What you can set in PyTorch today\n\n- **w**");
  CHECK(sum);
  char *other = strstr(sum, "### Other frameworks' allocators"), *research = strstr(sum, "### Research designs"),
       *refs = strstr(sum, "### References");
  CHECK(other && research && refs && other < research && research < refs);
  /* the lead: PyTorch's least, never stitch, which reserves less */
  char *lead = strndup(sum, (size_t)(other - sum));
  CHECK_CONTAINS(lead, "of PyTorch's settings, `expandable_segments:True` reserves the least: 1.10x (1.10 GiB), 26.7% less than the default (caching)");
  CHECK(!strstr(lead, "stitch"));
  CHECK(!strstr(lead, "oracle"));
  free(lead);
  CHECK_CONTAINS(research, "GMLake");
  CHECK_CONTAINS(research, "| w | 1.020x (1.02 GiB), driver time 2.0 ms (1.0x expandable's) |");
  free(md);
}

TEST(report_oom_rows_show_where_they_died_and_are_never_best) {
  /* caching died halfway, holding less than the others when it did; its request is read
   * from the trace itself (event 6 of oom_fraction.pickle asks for 480 MiB) */
  char *md = test_report_of("oomrows", HDR "\n"
                       ROW("oom_fraction.pickle", "tests/variants/oom_fraction.pickle", "caching", "oom", "6", "6", "500000000", "0.47")
                       ROW("oom_fraction.pickle", "tests/variants/oom_fraction.pickle", "expandable", "ok", "12", "", "1181116006", "1.10")
                       ROW("oom_fraction.pickle", "tests/variants/oom_fraction.pickle", "bfc", "ok", "12", "", "1503238553", "1.40"));
  CHECK(md);
  CHECK_CONTAINS(md, "| caching (PyTorch's default) | **OOM at event 6 (");
  CHECK_CONTAINS(md, "of the run), a 480.0 MiB request** | - | - | - | - | - |");
  CHECK(!strstr(md, "0.47"));           /* no overhead of the part that ran */
  CHECK(!strstr(md, "476.8 MiB"));      /* nor its peak reserved */
  CHECK_CONTAINS(md, "| expandable (PyTorch, expandable_segments:True) | ok | 1.00 GiB | **1.10 GiB** | **1.10x** |");
  CHECK_CONTAINS(md, "out of memory: the default (caching): OOM at event 6");
  free(md);
}

TEST(report_model_error_makes_a_range_and_no_ranking_inside_it) {
  const char *h = HDR ",model_err\n";
  char runs[4096];
  /* async 5% below expandable, but its model carries +/-20%: no best between them */
  snprintf(runs, sizeof runs, "%s%s%s", h,
           "1,0.1.0,w,,async,,sim,simdev,,,1,ok,1,1000,500,500,0,0,,1073741824,1073741824,1127428915,1.05,0.1,0.1,0,,10,0,0,0,0,2000000,1,60,50,90,99,,,,,0.2\n",
           "2,0.1.0,w,,expandable,,sim,simdev,,,1,ok,1,1000,500,500,0,0,,1073741824,1073741824,1181116006,1.10,0.1,0.1,0,,10,0,0,0,0,2000000,1,60,50,90,99,,,,,\n");
  char *md = test_report_of("modelerr", runs);
  CHECK(md);
  /* the exact setting is ranked; the model's range is beside it, clamped at peak requested */
  CHECK_CONTAINS(md, "of PyTorch's settings, `expandable_segments:True` reserves the least: 1.10x (1.10 GiB); `backend:cudaMallocAsync` is a model: "
                     "1.000x-1.26x (1.00 GiB-1.26 GiB; model ±20%), a range holding the least exact figure (1.10 GiB), not ranked against it");
  CHECK(!strstr(md, "neither is ranked first"));
  CHECK(!strstr(md, "0.840x"));   /* never below what is requested */
  CHECK_CONTAINS(md, "| async (PyTorch, backend:cudaMallocAsync) | ok | 1.00 GiB | 1.00 GiB-1.26 GiB (±20%) | 1.000x-1.26x |");
  CHECK_CONTAINS(md, "| expandable (PyTorch, expandable_segments:True) | ok | 1.00 GiB | **1.10 GiB** | **1.10x** |");
  free(md);
  /* the same rows without the column: ranked */
  snprintf(runs, sizeof runs, "%s%s%s", HDR "\n",
           "1,0.1.0,w,,async,,sim,simdev,,,1,ok,1,1000,500,500,0,0,,1073741824,1073741824,1127428915,1.05,0.1,0.1,0,,10,0,0,0,0,2000000,1,60,50,90,99,,,,\n",
           "2,0.1.0,w,,expandable,,sim,simdev,,,1,ok,1,1000,500,500,0,0,,1073741824,1073741824,1181116006,1.10,0.1,0.1,0,,10,0,0,0,0,2000000,1,60,50,90,99,,,,\n");
  md = test_report_of("exact", runs);
  CHECK(md);
  CHECK_CONTAINS(md, "`backend:cudaMallocAsync` reserves the least: 1.050x (1.05 GiB)");
  free(md);
}

static char *data_of(const char *name, const char *file) {
  char path[700];
  snprintf(path, sizeof path, "%s/%s/plots/data/%s", test_tmpdir(), name, file);
  return test_read_file(path);
}

TEST(plot_data_latency_counts_each_strategys_workloads_and_leaves_out_a_mean_that_includes_other_work) {
  const char *h = HDR ",ns_per_op_includes\n";
  char runs[4096];
  /* caching on two workloads (its loop also wrote the timeline), cupy on one (its own time only) */
  snprintf(runs, sizeof runs, "%s%s%s%s", h,
           "1,0.1.0,a,,caching,,sim,simdev,,,1,ok,1,1000,500,500,0,0,,100,100,150,1.5,0.1,0.1,0,,10,0,0,0,0,2000000,1,900,50,90,99,,,,,timeline\n",
           "2,0.1.0,b,,caching,,sim,simdev,,,1,ok,1,1000,500,500,0,0,,100,100,150,1.5,0.1,0.1,0,,10,0,0,0,0,2000000,1,800,50,90,99,,,,,timeline\n",
           "3,0.1.0,a,,cupy,,sim,simdev,,,1,ok,1,1000,500,500,0,0,,100,100,150,1.5,0.1,0.1,0,,10,0,0,0,0,2000000,1,70,60,95,99,,,,,\n");
  char *md = test_report_of("latency", runs);
  CHECK(md);
  free(md);
  char *dat = data_of("latency", "latency.dat"), *meta = data_of("latency", "latency.meta.gp");
  CHECK(dat && meta);
  CHECK_CONTAINS(dat, "caching\t-\t-\t-\t50\t50\t50\t90\t90\t90\t2\n");   /* its mean (900, 800) is not drawn */
  CHECK_CONTAINS(dat, "cupy\t70\t70\t70\t60\t60\t60\t95\t95\t95\t1\n");
  CHECK_CONTAINS(meta, "nwlo = 1\nnwhi = 2\n");
  CHECK_CONTAINS(meta, "hasmean = 1\nsomemean = 1\n");
  free(dat);
  free(meta);
}

TEST(plot_data_overhead_draws_a_failed_run_and_says_the_limit) {
  char *md = test_report_of("ovfail", HDR ",cap_source\n"
                       "1,0.1.0,w,,caching,,sim,simdev,4294967296,,1,oom,0,5,3,2,0,1,5,1073741824,1073741824,1610612736,1.5,0.3,0.1,0,,1,0,0,0,1,1000,1,60,50,90,99,,,,,inferred\n"
                       "2,0.1.0,w,,expandable,,sim,simdev,4294967296,,1,ok,1,10,5,5,0,0,,1073741824,1073741824,1181116006,1.1,0.1,0.1,0,,1,0,0,0,1,1000,1,60,50,90,99,,,,,inferred\n");
  CHECK(md);
  free(md);
  char *dat = data_of("ovfail", "overhead.dat"), *meta = data_of("ovfail", "overhead.meta.gp");
  CHECK(dat && meta);
  CHECK_CONTAINS(dat, "# workload\tcaching\texpandable\nw (limit 4.00 GiB)\t-\t1.1\n");   /* caching is a column, not dropped */
  CHECK_CONTAINS(dat, "# failed: row, strategy column\n1\t1\n");
  CHECK_CONTAINS(meta, "nfail = 1\n");
  CHECK_CONTAINS(meta, "(each workload under its job's limit)");
  CHECK(!strstr(meta, "uncapped"));
  free(dat);
  free(meta);
}

TEST(plot_data_timeline_and_capsweep_carry_the_limit_and_where_a_run_died) {
  char *md = test_report_of("limits", HDR ",cap_source,cap_lo,cap_hi\n"
                       "1,0.1.0,s.pickle,x/s.pickle,caching,,sim,simdev,3000,,1,oom,0,2,1,0,0,1,1,1000,1000,2900,2.9,0.6,0.1,0,,1,0,0,0,0,1000,1,60,50,90,99,,,,,inferred,2500,4000\n"
                       "2,0.1.0,s.pickle,x/s.pickle,expandable,,sim,simdev,3000,,1,ok,1,4,2,2,0,0,,1000,1000,2000,2.0,0.5,0.1,0,,1,0,0,0,0,1000,1,60,50,90,99,,,,,inferred,2500,4000\n");
  CHECK(md);
  free(md);
  char path[700];
  snprintf(path, sizeof path, "%s/limits/timeline-s.pickle.csv", test_tmpdir());
  FILE *f = fopen(path, "w");
  fputs("allocator,event,iter,requested,allocated,reserved\ncaching,0,0,500,500,2000\ncaching,1,0,1000,1000,2900\n"
        "expandable,0,0,500,500,1000\nexpandable,3,0,1000,1000,2000\n", f);
  fclose(f);
  snprintf(path, sizeof path, "%s/limits/capsweep.csv", test_tmpdir());
  f = fopen(path, "w");
  fputs(HDR "\n1,0.1.0,s.pickle,x/s.pickle,caching,,sim,simdev,4000,4.0,1,ok,1,4,2,2,0,0,,1000,1000,3500,3.5,,,0,,0,0,0,0,1,0,1,60,50,90,99,,,,\n", f);
  fclose(f);
  snprintf(path, sizeof path, "%s/limits", test_tmpdir());
  CHECK_EQ(test_cli(NULL, NULL, "report", path, NULL), 0);
  char *tl = data_of("limits", "timeline-s.pickle.meta.gp"), *cs = data_of("limits", "capsweep-s.pickle.meta.gp");
  CHECK(tl && cs);
  CHECK_CONTAINS(tl, "cap = 3000\ncaplo = 2500\ncaphi = 4000\n");
  CHECK_CONTAINS(tl, "captext = \"job's limit: inferred 2.44 KiB-3.91 KiB (band), replayed at 2.93 KiB\"");
  CHECK_CONTAINS(tl, "oomev[1] = 1\noomres[1] = 2900\n");   /* caching died at event 1 */
  CHECK_CONTAINS(tl, "oomev[2] = -1\n");                    /* expandable completed */
  CHECK_CONTAINS(cs, "cap = 3000\ncaplo = 2500\ncaphi = 4000\n");
  free(tl);
  free(cs);
}
