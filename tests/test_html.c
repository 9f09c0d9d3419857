/* test_html.c - the HTML pages: explain --html draws every block of every segment once
 * (as many <rect>s as the snapshot's state has blocks, one row per segment, side by side
 * the sum), hover data from the block (the allocating stack of the block live at the
 * moment, none for a free one), the request's verdict sentence, --blocks-csv's rows; the
 * Markdown report.md is written in as HTML; the plot data as JSON; report.html beside
 * report.md with a chart per plot that has data (where report.md embeds its picture, or
 * after the text) and the other pictures inline. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "test.h"
#include "explain.h"
#include "html_explain.h"
#include "html_md.h"
#include "html_page.h"
#include "html_plots.h"

#define MIB (1ULL << 20)

static size_t count(const char *s, const char *what) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* the page (and the blocks CSV) of these panels, as strings */
static char *page_of(struct explain_state *st, int n, const char **texts, char **csv) {
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  struct html_explain_panel p[4];
  for (int k = 0; k < n; k++) p[k] = (struct html_explain_panel){&st[k], texts ? texts[k] : "the text"};
  html_explain_write(o, "tests/x.pickle", p, n);
  fclose(o);
  if (csv) {
    size_t l2 = 0;
    o = open_memstream(csv, &l2);
    explain_blocks_csv(o, st, n);
    fclose(o);
  }
  return buf;
}

static int run(const char *trace, const char *at, const char *alloc, int frames, struct explain_state *st) {
  struct explain_opts o = {.trace = trace, .trace_device = -1, .at = at, .allocator = alloc, .block_frames = frames};
  char err[FB_ERRLEN];
  return explain_run(&o, st, err);
}

TEST(html_explain_draws_every_block_of_every_segment_once) {
  struct explain_state st;
  CHECK_EQ(run("tests/variants/oom_fragmented.pickle", "oom", NULL, 1, &st), 0);
  CHECK_EQ(st.nsegments, 20);
  CHECK_EQ(st.nblocks, 40);
  char *csv = NULL, *h = page_of(&st, 1, NULL, &csv);
  CHECK_EQ(count(h, "<rect"), st.nblocks);                 /* the only rects on the page are the blocks */
  CHECK_EQ(count(h, "<rect class=\"block"), st.nblocks);
  CHECK_EQ(count(h, "<div class=\"seg segment\""), st.nsegments);
  CHECK_CONTAINS(h, "data-nsegments=\"20\" data-nblocks=\"40\"");
  CHECK_EQ(count(h, "<rect class=\"block s-allocated"), 20);
  CHECK_EQ(count(h, "<rect class=\"block s-inactive"), 20);
  CHECK_EQ(count(csv, "\n"), st.nblocks + 1);               /* --blocks-csv: a header and a row per block */
  CHECK_CONTAINS(csv, "caching,140,1,");
  CHECK(!strstr(h, "http://") && !strstr(h, "https://") && !strstr(h, "<script src"));   /* nothing fetched */
  free(h);
  free(csv);
  explain_free(&st);
}

TEST(html_explain_side_by_side_draws_each_strategys_blocks) {
  struct explain_state st[2];
  CHECK_EQ(run("tests/variants/oom_fragmented.pickle", "oom", "caching", 0, &st[0]), 0);
  CHECK_EQ(run("tests/variants/oom_fragmented.pickle", "oom", "expandable", 0, &st[1]), 0);
  char *csv = NULL, *h = page_of(st, 2, (const char *[]){"caching's words", "expandable's words"}, &csv);
  CHECK_EQ(count(h, "<section class=\"panel\""), 2);
  CHECK_EQ(count(h, "<rect"), st[0].nblocks + st[1].nblocks);
  CHECK_EQ(count(h, "<div class=\"seg segment\""), st[0].nsegments + st[1].nsegments);
  CHECK_EQ(count(h, "data-p=\"1\""), st[1].nblocks);
  CHECK_CONTAINS(h, "expandable&#39;s words");               /* each strategy's text beside it, escaped */
  CHECK_CONTAINS(h, "one per strategy");                       /* the per-strategy scale is offered */
  CHECK_EQ(count(csv, "\nexpandable,"), st[1].nblocks);
  free(h);
  free(csv);
  explain_free(&st[0]);
  explain_free(&st[1]);
}

TEST(html_explain_block_stacks_are_those_of_the_allocation_live_at_the_moment) {
  /* oom_frames: the 200 MiB block (fn_0) lives at event 1 and is freed before the OOM,
   * where the 300 MiB one (fn_3) lives */
  struct explain_state st;
  CHECK_EQ(run("tests/variants/oom_frames.pickle", "1", NULL, 1, &st), 0);
  CHECK_EQ(st.nblocks, 1);
  CHECK(st.block_frames && st.block_frames[0]);
  CHECK(!strncmp(st.block_frames[0], "fn_0 (/very/long/path/to/the/module/number/0/mod.py:0); fn_1 (", 62));
  explain_free(&st);
  CHECK_EQ(run("tests/variants/oom_frames.pickle", "oom", NULL, 1, &st), 0);
  CHECK_EQ(st.nblocks, 2);
  CHECK_EQ(st.blocks[0].size, 300 * MIB);
  CHECK(st.block_frames && st.block_frames[0] && !strncmp(st.block_frames[0], "fn_3 (", 6));
  CHECK(!st.block_frames[1]);                                  /* the free 200 MiB block: no allocation, no stack */
  CHECK_EQ(st.blocks_with_frames, 1);
  char *h = page_of(&st, 1, NULL, NULL);
  CHECK_CONTAINS(h, "<script type=\"application/json\" id=\"fb-stacks\">[\"fn_3 (/very/long/path/to/the/module/number/3/mod.py:3); fn_1");
  CHECK_CONTAINS(h, "data-f=\"0\"");
  CHECK_CONTAINS(h, "data-f=\"-1\"");
  free(h);
  explain_free(&st);
  /* without --html or --blocks-csv no stacks pass runs */
  CHECK_EQ(run("tests/variants/oom_frames.pickle", "oom", NULL, 0, &st), 0);
  CHECK(!st.block_frames);
  explain_free(&st);
}

TEST(html_explain_stacks_of_a_recorded_snapshot_reach_its_python_frames) {
  /* gpt_train_short_frames: frame dicts first read in the segments list, C++ frames first */
  struct explain_state st;
  CHECK_EQ(run("tests/data/gpt_train_short_frames.pickle", "peak", NULL, 1, &st), 0);
  CHECK(st.blocks_with_frames > 200);                  /* 214 of 232: live blocks' lists of the segments list too */
  size_t py = 0, engine = 0, unknown = 0;
  for (size_t i = 0; i < st.nblocks; i++) {
    if (!st.block_frames[i]) continue;
    py += strstr(st.block_frames[i], "torch_workloads.py:") != NULL;
    /* backward's allocations made on the autograd engine's own thread: C++ frames only */
    engine += !strstr(st.block_frames[i], "torch_workloads.py:") && strstr(st.block_frames[i], "PythonEngine::thread_init");
    unknown += strstr(st.block_frames[i], "? (?)") != NULL;
  }
  CHECK_EQ(py + engine, st.blocks_with_frames);
  CHECK(engine <= 3);
  CHECK_EQ(unknown, 0);
  explain_free(&st);
}

TEST(html_explain_verdict_says_whether_the_request_fits_and_why_not) {
  struct explain_state st;
  memset(&st, 0, sizeof st);
  char v[400];
  snprintf(st.allocator, sizeof st.allocator, "caching");
  html_explain_verdict(&st, v, sizeof v);
  CHECK_STR(v, "no request at this moment (its peak)");
  st.has_request = 1;
  st.rounded = 25 * MIB;
  st.largest_free = 3 * MIB / 2;
  html_explain_verdict(&st, v, sizeof v);
  CHECK_STR(v, "does not fit: the largest free block (1.50 MiB) is 23.50 MiB short of the rounded request");
  st.largest_free = 25 * MIB;                                  /* a tie: large enough, but not taken */
  html_explain_verdict(&st, v, sizeof v);
  CHECK_CONTAINS(v, "does not fit: a free block is large enough, but caching does not take it");
  st.fits = 1;
  html_explain_verdict(&st, v, sizeof v);
  CHECK_STR(v, "fits: caching places it in a free block");
  st.largest_free = 0;
  html_explain_verdict(&st, v, sizeof v);
  CHECK_STR(v, "fits: caching places it in a new segment");
}

TEST(html_explain_page_without_a_segment_view_says_so_and_draws_nothing) {
  struct explain_state st;
  CHECK_EQ(run("tests/variants/oom_fragmented.pickle", "oom", "raw", 1, &st), 0);
  char *csv = NULL, *h = page_of(&st, 1, NULL, &csv);
  CHECK_EQ(count(h, "<rect"), 0);
  CHECK_CONTAINS(h, "The segment view is not available for raw");
  CHECK_EQ(count(csv, "\n"), 1);
  free(h);
  free(csv);
  explain_free(&st);
}

TEST(html_explain_cli_writes_the_page_and_the_blocks_whole) {
  char page[600], csv[600], out[600], err[600];
  snprintf(page, sizeof page, "%s/e.html", test_tmpdir());
  snprintf(csv, sizeof csv, "%s/e.csv", test_tmpdir());
  snprintf(out, sizeof out, "%s/e.out", test_tmpdir());
  snprintf(err, sizeof err, "%s/e.err", test_tmpdir());
  CHECK_EQ(test_cli(out, err, "explain", "--trace", "tests/variants/oom_fragmented.pickle", "--allocator", "caching", "--allocator",
                    "expandable", "--html", page, "--blocks-csv", csv, NULL), 0);
  char *h = test_read_file(page), *c = test_read_file(csv), *o = test_read_file(out);
  CHECK(h && c && o);
  CHECK_EQ(count(h, "<rect"), count(c, "\n") - 1);
  CHECK_EQ(count(o, "why nothing fit:"), 2);                  /* the text: each strategy's */
  CHECK_CONTAINS(h, "Why nothing fit");
  free(h); free(c); free(o);
  /* bad names: exit 2, nothing written */
  snprintf(page, sizeof page, "%s/e.png", test_tmpdir());
  CHECK_EQ(test_cli(out, err, "explain", "--trace", "tests/variants/oom_fragmented.pickle", "--html", page, NULL), 2);
  char *e = test_read_file(err);
  CHECK(e && strstr(e, "--html"));
  free(e);
  struct stat sb;
  CHECK(stat(page, &sb) != 0);
  CHECK_EQ(test_cli(out, err, "explain", "--trace", "tests/variants/oom_fragmented.pickle", "--allocator", "caching", "--allocator",
                    "expandable", "--plot", page, NULL), 2);
}

static char *md_html(const char *md) {
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  html_md(o, md, NULL, NULL);
  fclose(o);
  return buf;
}

TEST(html_md_writes_headings_tables_lists_and_inline_markup) {
  char *h = md_html("# Title: a\n\nDevice: **sim**, `a|b` and a\\|b <x>.\nsecond line\n\n"
                    "| strategy | peak |\n|---|--:|\n| caching (PyTorch) | **1.50 GiB** |\n| a \\| b | `x|y` |\n\n- one\n- **two**\n");
  CHECK_CONTAINS(h, "<h1 id=\"title-a\">Title: a</h1>");
  CHECK_CONTAINS(h, "<p>Device: <strong>sim</strong>, <code>a|b</code> and a|b &lt;x&gt;.\nsecond line</p>");
  CHECK_CONTAINS(h, "<thead><tr><th>strategy</th><th class=\"num\">peak</th></tr></thead>");
  CHECK_CONTAINS(h, "<tr><td>caching (PyTorch)</td><td class=\"num\"><strong>1.50 GiB</strong></td></tr>");
  CHECK_CONTAINS(h, "<tr><td>a | b</td><td class=\"num\"><code>x|y</code></td></tr>");
  CHECK_CONTAINS(h, "<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>");
  CHECK_EQ(count(h, "<table>"), 1);
  free(h);
  h = md_html("![a picture](plots/x.png)\n");                 /* no image writer: said so */
  CHECK_CONTAINS(h, "(a picture: no picture)");
  free(h);
}

TEST(html_json_string_cannot_end_a_script) {
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  html_json_string(o, "a\"b\\c</script><x>&\n\t");
  fclose(o);
  CHECK_STR(buf, "\"a\\\"b\\\\c\\u003c/script\\u003e\\u003cx\\u003e\\u0026\\n\\u0009\"");
  free(buf);
}

TEST(html_plot_data_read_back_as_json) {
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  html_dat_json(o, "# workload\traw\tcaching\nw 1\t1.000000\t-\nw2\t2\t1.5\n\n\n# failed: row, strategy column\n-100\t1\n");
  fclose(o);
  CHECK_STR(buf, "[{\"title\":\"workload\\u0009raw\\u0009caching\",\"rows\":[[\"w 1\",1,null],[\"w2\",2,1.5]]},"
                 "{\"title\":\"failed: row, strategy column\",\"rows\":[[-100,1]]}]");
  free(buf);
  o = open_memstream(&buf, &len);
  html_meta_json(o, "\narray names[2]\nnames[1] = \"raw\"\nnames[2] = \"a \\\"b\\\"\"\nn = 2\nxlab = \"x (1 = none)\"\nxmax = 1.5e+09\n");
  fclose(o);
  CHECK_STR(buf, "{\"names\":[\"raw\",\"a \\\"b\\\"\"],\"n\":2,\"xlab\":\"x (1 = none)\",\"xmax\":1500000000}");
  free(buf);
}

#define HDR "run_id,version,workload,trace,allocator,params,device,device_name,cap_bytes,cap_x,seed,status,completed,events,allocs,frees,skipped_events,oom_count,first_oom_event,peak_requested,peak_allocated,peak_reserved,overhead,frag,ext_frag,internal_frag,trace_peak_reserved,device_allocs,device_frees,maps,unmaps,cache_flushes,modeled_driver_ns,wall_ns,ns_per_op,p50_ns,p99_ns,max_ns,leak_bytes_per_iter,mincap_bytes,mincap_x,imbalance"
#define ROW(id, a, res, ov) id ",0.1.0,train_loop,," a ",,sim,simdev,,,1,ok,1,2000,1000,1000,0,0,,1073741824,1073741824," res "," ov ",0.1,0.1,0,,10,0,0,0,0,2000000,1,60,50,90,99,,,,\n"

TEST(html_report_beside_report_md_draws_each_plot_with_data_and_inlines_other_pictures) {
  char d[400], p[900], plots[500];
  snprintf(d, sizeof d, "%s/htmlrun", test_tmpdir());
  mkdir(d, 0755);
  snprintf(p, sizeof p, "%s/runs.csv", d);
  FILE *f = fopen(p, "w");
  fputs(HDR "\n" ROW("1", "raw", "1073741824", "1.0") ROW("2", "caching", "1610612736", "1.5"), f);
  fclose(f);
  /* the plots as `make plots` leaves them: overhead drawn (it has data), and a picture without data */
  snprintf(plots, sizeof plots, "%s/plots", d);
  mkdir(plots, 0755);
  snprintf(p, sizeof p, "%s/overhead.png", plots);
  f = fopen(p, "w"); fputs("not empty", f); fclose(f);
  snprintf(p, sizeof p, "%s/explain-snap.pickle.png", plots);
  f = fopen(p, "w"); fputs("\x89PNG", f); fclose(f);
  char out[500], err[500];
  snprintf(out, sizeof out, "%s.out", d);
  snprintf(err, sizeof err, "%s.err", d);
  CHECK_EQ(test_cli(out, err, "report", d, NULL), 0);
  snprintf(p, sizeof p, "%s/report.md", d);
  char *md = test_read_file(p);
  snprintf(p, sizeof p, "%s/report.html", d);
  char *h = test_read_file(p);
  CHECK(md && h);
  CHECK_CONTAINS(h, "<figure class=\"chart\" data-plot=\"overhead\">");
  CHECK_CONTAINS(h, "\"name\":\"overhead\"");                   /* its data, for the chart */
  CHECK_CONTAINS(h, "{\"name\":\"raw\",\"color\":1},{\"name\":\"caching\",\"color\":2}");   /* a switch per strategy */
  /* as many headings and tables as report.md */
  size_t mdh = 0, mdt = 0;
  for (const char *l = md; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (*l == '#') mdh++;
    if (*l == '|' && (l == md || l[-2] != '|')) mdt++;
  }
  CHECK_EQ(count(h, "<h1 ") + count(h, "<h2 ") + count(h, "<h3 ") + count(h, "<h4 "), mdh + 1);   /* + "More plots" */
  /* the plots with data but no picture (latency here): drawn after report.md's text */
  CHECK(strstr(h, "<section class=\"extra\">") && strstr(strstr(h, "<section class=\"extra\">"), "data-plot=\"latency\""));
  CHECK(!strstr(strstr(h, "<section class=\"extra\">"), "data-plot=\"overhead\""));
  CHECK_EQ(count(h, "<table>"), mdt);
  CHECK(!strstr(h, "<script src") && !strstr(h, "http://") && !strstr(h, "<link"));
  free(md);
  free(h);
}
