/* test_report.c - `fragbench report DIR` on small hand-made run folders: the tables and
 * their bold best, what PyTorch itself reserved beside a snapshot's rows, the limit
 * inferred from an OOM, advise's recommendation and explain's picture when their files
 * are there, where the figures came from, memory against driver time, and the plot data
 * (cap sweep lines through completed runs only, timeline panels named as runs.csv names
 * the strategy). Bad input: the file and line, exit 2. */
#include <stdlib.h>
#include <sys/stat.h>
#include "test.h"
#include "allocator.h"

#define HDR "run_id,version,workload,trace,allocator,params,device,device_name,cap_bytes,cap_x,seed,status,completed,events,allocs,frees,skipped_events,oom_count,first_oom_event,peak_requested,peak_allocated,peak_reserved,overhead,frag,ext_frag,internal_frag,trace_peak_reserved,device_allocs,device_frees,maps,unmaps,cache_flushes,modeled_driver_ns,wall_ns,ns_per_op,p50_ns,p99_ns,max_ns,leak_bytes_per_iter,mincap_bytes,mincap_x,imbalance"

/* a fresh folder under the test tmpdir */
static const char *folder(const char *name) {
  static char dir[512];
  snprintf(dir, sizeof dir, "%s/%s", test_tmpdir(), name);
  mkdir(dir, 0755);
  return dir;
}

static void put(const char *dir, const char *file, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static char *get(const char *dir, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  return test_read_file(path);
}

/* report DIR; returns the exit status, stderr in *err (malloc'd) */
static int report(const char *dir, char **err) {
  char e[1024];
  snprintf(e, sizeof e, "%s.err", dir);
  int rc = test_cli(NULL, e, "report", dir, NULL);
  if (err) *err = test_read_file(e);
  return rc;
}

/* one workload w, three strategies: raw 1.0x, caching 1.5x (cheap driver), stitch 1.1x (dear driver) */
#define ROWS(w, trace, tpr)                                                                                          \
  "1,0.1.0," w "," trace ",raw,,sim,simdev,,,1,ok,1,2000,1000,1000,0,0,,1073741824,1073741824,1073741824,1.000000,0.000000,0.000000,0," tpr ",1000,1000,0,0,0,40000000,1,30,30,31,99,,,,\n" \
  "2,0.1.0," w "," trace ",caching,,sim,simdev,,,1,ok,1,2000,1000,1000,0,0,,1073741824,1073741824,1610612736,1.500000,0.333333,0.100000,0," tpr ",10,0,0,0,0,2000000,1,60,50,90,99,,,,\n" \
  "3,0.1.0," w "," trace ",stitch,,sim,simdev,,,1,ok,1,2000,1000,1000,0,0,,1073741824,1073741824,1181116006,1.100000,0.090909,0.500000,0," tpr ",10,0,50,50,0,20000000,1,90,80,120,99,,,,\n"

TEST(report_tables_bold_the_best_and_summarise_each_workload) {
  const char *d = folder("basic");
  put(d, "runs.csv", HDR "\n" ROWS("train_loop", "", ""));
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK(md);
  CHECK_CONTAINS(md, "# fragbench report: basic\n");
  CHECK_CONTAINS(md, "Device: **simdev**");
  CHECK_CONTAINS(md, "- **train_loop** (peak requested 1.00 GiB): of PyTorch's settings, the default (caching) reserves the least: 1.50x (1.50 GiB).");
  CHECK_CONTAINS(md, "| raw (one cudaMalloc per request) | ok | 1.00 GiB | 1.00 GiB | 1.000x |");   /* a reference is never bold */
  CHECK_CONTAINS(md, "| stitch (GMLake's stitching, research) | ok | 1.00 GiB | 1.10 GiB | 1.10x |");   /* nor a research design */
  CHECK_CONTAINS(md, "| caching (PyTorch's default) | ok | 1.00 GiB | **1.50 GiB** | **1.50x** |");
  CHECK(!strstr(md, "vs PyTorch"));   /* not a snapshot */
  free(md);
}

TEST(report_shows_what_pytorch_reserved_beside_a_snapshots_rows) {
  const char *d = folder("snapshot");
  put(d, "runs.csv", HDR "\n" ROWS("snap.pickle", "data/snap.pickle.gz", "1610612736"));
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK_CONTAINS(md, "## snap.pickle\n\nPyTorch itself reserved **1.50 GiB** at its peak in this snapshot");
  CHECK_CONTAINS(md, "| peak reserved | vs PyTorch | overhead |");
  CHECK_CONTAINS(md, "| caching (PyTorch's default) | ok | 1.00 GiB | **1.50 GiB** | = |");
  CHECK_CONTAINS(md, "| stitch (GMLake's stitching, research) | ok | 1.00 GiB | 1.10 GiB | -26.7% |");
  free(md);
}

TEST(report_says_the_limit_inferred_from_a_snapshot_that_ended_in_an_oom) {
  const char *d = folder("inferred");
  put(d, "runs.csv", HDR ",cap_source,cap_lo,cap_hi\n"
      "1,0.1.0,oom.pickle,x/oom.pickle,caching,,sim,simdev,42949672960,,1,oom,0,10,5,4,0,1,9,1073741824,1073741824,1610612736,1.5,0.3,0.1,0,,1,0,0,0,1,1000,1,60,50,90,99,,,,,inferred,40000000000,42949672960\n");
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK_CONTAINS(md, "The snapshot ended in an out-of-memory error: the device limit was between **37.25 GiB** and **40.00 GiB**; its rows were replayed under **40.00 GiB**.");
  CHECK_CONTAINS(md, "| caching (PyTorch's default) | **OOM at event 9** | - | - | - |");   /* no figures of the part that ran */
  CHECK(!strstr(md, "1.50x"));
  free(md);
}

TEST(report_shows_advise_recommendation_and_explain_picture_when_present) {
  const char *d = folder("advised");
  put(d, "runs.csv", HDR "\n" ROWS("snap.pickle", "data/snap.pickle.gz", "1610612736"));
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK(!strstr(md, "Recommendation"));   /* optional: nothing when the files are absent */
  CHECK(!strstr(md, "explain"));
  free(md);
  put(d, "advise-snap.pickle.gz.csv", HDR ",alloc_conf\n"
      "1,0.1.0,snap.pickle,data/snap.pickle.gz,expandable,,sim,simdev,,,1,ok,1,2000,1000,1000,0,0,,1073741824,1073741824,1127428915,1.050000,0.05,0.1,0,,1,0,0,0,0,1000,1,60,50,90,99,,,,,expandable_segments:True\n"
      "2,0.1.0,snap.pickle,data/snap.pickle.gz,caching,max_split_size_mb=64,sim,simdev,,,1,ok,1,2000,1000,1000,0,0,,1073741824,1073741824,1288490188,1.2,0.1,0.1,0,,1,0,0,0,0,1000,1,60,50,90,99,,,,,max_split_size_mb:64\n");
  mkdir(strcat(strcpy((char[600]){0}, d), "/plots"), 0755);
  put(d, "plots/explain-snap.pickle.gz.png", "not empty");
  CHECK_EQ(report(d, NULL), 0);
  md = get(d, "report.md");
  CHECK_CONTAINS(md, "Recommendation (`fragbench advise`, 2 settings tried, `advise-snap.pickle.gz.csv`): **expandable**, peak reserved 1.05 GiB (1.050x its peak requested); run with `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.");
  CHECK_CONTAINS(md, "![snap.pickle.gz: explain](plots/explain-snap.pickle.gz.png)");
  free(md);
}

TEST(report_says_no_setting_fits_when_advise_found_none) {
  const char *d = folder("nofit");
  put(d, "runs.csv", HDR "\n" ROWS("snap.pickle", "data/snap.pickle", "1610612736"));
  put(d, "advise-snap.pickle.csv", HDR ",alloc_conf\n"
      "1,0.1.0,snap.pickle,data/snap.pickle,caching,,sim,simdev,,,1,oom,0,2000,1000,1000,0,1,900,1073741824,1073741824,1127428915,1.050000,0.05,0.1,0,,1,0,0,0,0,1000,1,60,50,90,99,,,,,expandable_segments:False\n");
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK_CONTAINS(md, "No PyTorch allocator setting fits (`fragbench advise`, 1 setting tried, `advise-snap.pickle.csv`); the nearest: **caching**");
  CHECK(!strstr(md, "run with `PYTORCH_CUDA_ALLOC_CONF"));
  CHECK_CONTAINS(md, "status oom at event 900");           /* where the nearest died ... */
  CHECK_CONTAINS(md, "which still runs out of memory at event 900");
  CHECK(!strstr(md, "1.050x its peak requested"));       /* ... not figures of the part that ran */
  free(md);
}

TEST(report_lists_what_each_strategy_was_validated_against_and_how_to_switch_it_on) {
  const char *d = folder("strategies");
  put(d, "runs.csv", HDR "\n" ROWS("train_loop", "", ""));
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK_CONTAINS(md, "## Strategies\n\n| strategy | validated against the real allocator (`make validate`) | in stock PyTorch |");
  const struct allocator_ops *c = allocator_find("caching");
  if (c && c->validated) CHECK_CONTAINS(md, c->validated);
  CHECK_CONTAINS(md, "| stitch | ");
  free(md);
}

TEST(report_says_where_the_figures_came_from) {
  const char *d = folder("sources");
  put(d, "runs.csv", HDR "\n" ROWS("train_loop", "", ""));
  put(d, "capsweep.csv", HDR "\n1,0.1.0,train_loop,,caching,,sim,simdev,1073741824,1.0,1,oom,0,10,5,4,0,1,9,1073741824,1073741824,0,,,,0,,0,0,0,0,1,0,1,60,50,90,99,,,,\n");
  put(d, "env.txt", "device: cuda\ndevice_name: NVIDIA H100\nfigures_uncapped: cuda\nfigures_capsweep: sim\nfigures_mincap: sim, confirmed on cuda\n");
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK_CONTAINS(md, "Device: **NVIDIA H100**");   /* env.txt's name wins */
  CHECK_CONTAINS(md, "| figures_capsweep | sim |");
  CHECK_CONTAINS(md, "- uncapped rows (runs.csv: the tables, overhead, latency, timelines): **cuda**\n");
  CHECK_CONTAINS(md, "- cap sweep (capsweep.csv): **sim**\n");
  CHECK_CONTAINS(md, "- smallest caps (mincap.csv): **sim, confirmed on cuda**\n");
  CHECK_CONTAINS(md, "- devices in the files: runs.csv sim; capsweep.csv sim\n");
  free(md);
}

TEST(report_and_plot_data_put_memory_against_driver_time) {
  const char *d = folder("tradeoff");
  put(d, "runs.csv", HDR "\n" ROWS("train_loop", "", "") ROWS("amp", "", ""));
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  /* caching: 2 ms over 2000 calls = 1.0 ms per 1000 calls; stitch 10 ms */
  CHECK_CONTAINS(md, "| caching | 2 | 1.50x | 1.50x - 1.50x | 1.0 ms | 1.0 ms - 1.0 ms |");
  CHECK_CONTAINS(md, "| stitch | 2 | 1.10x | 1.10x - 1.10x | 10.0 ms | 10.0 ms - 10.0 ms |");
  /* the ends among allocators one can use: stitch (research) is not one */
  CHECK_CONTAINS(md, "caching holds the least memory (median 1.50x) and spends the least driver time (1.0 ms per 1000 calls).");
  free(md);
  char *dat = get(d, "plots/data/tradeoff.dat");
  CHECK_CONTAINS(dat, "# caching\n1e+06\t1.5\ttrain_loop\t1\n1e+06\t1.5\tamp\t2\n");   /* the workload index: its marker shape */
  free(dat);
  char *dots = get(d, "plots/data/overhead.dat");   /* a row per workload, a column per strategy */
  CHECK_CONTAINS(dots, "# workload\traw\tcaching\tstitch\ntrain_loop\t1.000000\t1.500000\t1.100000\namp\t");
  free(dots);
  char *list = get(d, "plots/data/plots.txt");
  CHECK_CONTAINS(list, "dots overhead\n");
  CHECK_CONTAINS(list, "tradeoff tradeoff\n");
  free(list);
}

TEST(plot_data_capsweep_lines_hold_only_runs_that_completed) {
  const char *d = folder("capsweep");
  put(d, "runs.csv", HDR "\n" ROWS("train_loop", "", ""));
  put(d, "capsweep.csv", HDR "\n"
      "1,0.1.0,train_loop,,caching,,sim,simdev,1073741824,1.0,1,oom,0,10,5,4,0,1,9,1073741824,1073741824,0,,,,0,,0,0,0,0,1,0,1,60,50,90,99,,,,\n"
      "2,0.1.0,train_loop,,caching,,sim,simdev,1610612736,1.5,1,ok,1,10,5,5,0,0,,1073741824,1073741824,1610612736,1.5,,,0,,0,0,0,0,1,0,1,60,50,90,99,,,,\n");
  CHECK_EQ(report(d, NULL), 0);
  char *dat = get(d, "plots/data/capsweep-train_loop.dat");
  CHECK_CONTAINS(dat, "1\t0\t0\n1.5\t1610612736\t1\n");   /* the strip: both caps */
  CHECK_CONTAINS(dat, "(cap_x, peak_reserved)\n1.5\t1610612736\n\n");   /* the line: the completed run only */
  free(dat);
  char *md = get(d, "report.md");
  CHECK_CONTAINS(md, "| caching (PyTorch's default) | ok | 1.00 GiB | **1.50 GiB** | **1.50x** | **0.333** | **0.100** | 1.50x |");   /* sweep: completes from 1.5x */
  free(md);
}

TEST(plot_data_timeline_panels_are_named_as_runs_csv_names_the_strategy) {
  const char *d = folder("timeline");
  put(d, "runs.csv", HDR "\n"
      "1,0.1.0,snap.pickle,x/snap.pickle,caching,max_split_size_mb=64,sim,simdev,,,1,ok,1,2000,1000,1000,0,0,,1000,1000,3000,3.0,0.6,0.1,0,,1,0,0,0,0,1000,1,60,50,90,99,2052.0,,,\n");
  put(d, "timeline-snap.pickle.csv", "allocator,event,iter,requested,allocated,reserved,max_requested,max_reserved,params\n"
      "caching,1,0,500,500,2000,500,2000,max_split_size_mb=64\ncaching,2,0,1000,1000,3000,1000,3000,max_split_size_mb=64\n");
  put(d, "timeline-old.csv", "allocator,event,iter,requested,allocated,reserved\nraw,1000,0,5,5,5\n");
  CHECK_EQ(report(d, NULL), 0);
  char *meta = get(d, "plots/data/timeline-snap.pickle.meta.gp");
  CHECK_CONTAINS(meta, "names[1] = \"caching:max_split_size_mb=64\"");
  CHECK_CONTAINS(meta, "peakres[1] = 3000");   /* the peak lines found their runs.csv row */
  CHECK_CONTAINS(meta, "notes[1] = \"leaks 2.0 KiB per iteration\"");
  free(meta);
  char *old = get(d, "plots/data/timeline-old.dat");
  CHECK_CONTAINS(old, "1000\t5\t5\t5\t5\t5\n");   /* an old timeline: the levels stand in for the highs */
  free(old);
}

TEST(report_reads_any_folder_of_results_csvs_without_runs_csv) {
  const char *d = folder("loose");
  put(d, "a.csv", HDR "\n" ROWS("train_loop", "", ""));
  put(d, "b.csv", "run_id,workload,allocator,status,peak_requested,peak_reserved,overhead,extra\n1,amp,caching,ok,100,150,1.5,x\n");
  put(d, "timeline-amp.csv", "allocator,event,iter,requested,allocated,reserved\ncaching,1,0,100,100,150\n");
  CHECK_EQ(report(d, NULL), 0);
  char *md = get(d, "report.md");
  CHECK_CONTAINS(md, "## train_loop\n");
  CHECK_CONTAINS(md, "## amp\n");
  CHECK_CONTAINS(md, "| caching (PyTorch's default) | ok | 100 B | **150 B** | **1.50x** |");
  free(md);
}

TEST(report_bad_input_names_the_file_and_line) {
  char *err = NULL;
  const char *d = folder("empty");
  CHECK_EQ(report(d, &err), 2);
  CHECK_CONTAINS(err, "empty: no results CSV");
  free(err);
  d = folder("bad");
  put(d, "runs.csv", HDR "\n" ROWS("w", "", ""));
  put(d, "mincap.csv", HDR "\n1,2,3,\"unclosed\n");
  CHECK_EQ(report(d, &err), 2);
  CHECK_CONTAINS(err, "mincap.csv:2: unclosed quote");
  free(err);
  put(d, "mincap.csv", HDR "\n");
  put(d, "timeline-w.csv", "event,requested\n1,2\n");
  CHECK_EQ(report(d, &err), 2);
  CHECK_CONTAINS(err, "timeline-w.csv:1: expected a header with a column 'allocator'");
  free(err);
  CHECK_EQ(test_cli(NULL, NULL, "report", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "report", d, "--format", "gif", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "report", "--help", NULL), 0);
}
