/* test_compare.c - `fragbench compare` and the engine behind it (harness/engine/compare.c)
 * on small CSVs: each rule of the verdict (worse fails, better passes, within tolerance,
 * new passes, missing fails, a row that stops completing), both file formats, the
 * tolerance file of `make regress`, bad input (exit 2), the JUnit XML (its structure
 * always; against tests/data/junit.xsd with xmllint when installed) and the JSON; and
 * run's gate options --max-reserved and --fail-on-oom. */
#include <stdlib.h>
#include "test.h"
#include "compare.h"

static const char *HDR = "run_id,version,workload,trace,allocator,params,device,cap_bytes,cap_x,status,completed,events,peak_reserved,ns_per_op\n";

/* OLD: two rows; NEW: the same rows with the given peak_reserved values */
static void pair(const char *old_name, const char *new_name, const char *new_a, const char *new_b, const char **po, const char **pn) {
  char o[1024], n[1024];
  snprintf(o, sizeof o, "%s1,0.1.0,train_loop,,caching,,sim,,,ok,1,20000,1000000,100\n2,0.1.0,train_loop,,bfc,,sim,,,ok,1,20000,2000000,100\n", HDR);
  snprintf(n, sizeof n, "%s1,0.1.0,train_loop,,caching,,sim,,,ok,1,20000,%s,100\n2,0.1.0,train_loop,,bfc,,sim,,,ok,1,20000,%s,100\n", HDR, new_a, new_b);
  *po = test_write_tmp(old_name, o);
  *pn = test_write_tmp(new_name, n);
}

static int run_engine(const char *po, const char *pn, struct cmp_opts *o, struct cmp_report *r) {
  struct results a, b;
  char err[512];
  if (results_load(po, &a, err, sizeof err) || results_load(pn, &b, err, sizeof err)) return -1;
  cmp_run(&a, &b, o, r);
  results_free(&a);
  results_free(&b);
  return 0;
}

static char outp[512], errp[512];
static void paths(void) {
  snprintf(outp, sizeof outp, "%s/cmp_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/cmp_err.txt", test_tmpdir());
}

TEST(compare_a_2pct_worse_peak_reserved_fails_the_job) {
  const char *po, *pn;
  pair("o1.csv", "n1.csv", "1020000", "2000000", &po, &pn);
  paths();
  CHECK_EQ(test_cli(outp, errp, "compare", po, pn, "--max-increase", "1%", NULL), 1);
  char *t = test_read_file(outp);
  CHECK_CONTAINS(t, "worse");
  CHECK_CONTAINS(t, "+2.00%");
  CHECK_CONTAINS(t, "compare: FAIL");
  free(t);
}

TEST(compare_an_improvement_passes_and_is_reported) {
  const char *po, *pn;
  pair("o2.csv", "n2.csv", "900000", "2000000", &po, &pn);
  paths();
  CHECK_EQ(test_cli(outp, errp, "compare", po, pn, "--max-increase", "1%", NULL), 0);
  char *t = test_read_file(outp);
  CHECK_CONTAINS(t, "better");
  CHECK_CONTAINS(t, "-10.00%");
  CHECK_CONTAINS(t, "compare: ok");
  free(t);
}

TEST(compare_a_rise_within_max_increase_passes) {
  const char *po, *pn;
  pair("o3.csv", "n3.csv", "1015000", "2000000", &po, &pn);
  struct cmp_opts o; cmp_opts_init(&o);
  o.max_increase = 0.02;
  struct cmp_report r;
  CHECK_EQ(run_engine(po, pn, &o, &r), 0);
  CHECK_EQ(r.fail, 0);
  CHECK_EQ(r.within, 1);
  CHECK_EQ(r.worse, 0);
  cmp_report_free(&r);
  o.max_increase = 0;   /* the default: any rise is worse */
  CHECK_EQ(run_engine(po, pn, &o, &r), 0);
  CHECK_EQ(r.fail, 1);
  CHECK_EQ(r.worse, 1);
  cmp_report_free(&r);
}

TEST(compare_a_missing_row_fails_and_a_new_row_passes) {
  char o[1024], n[1024];
  snprintf(o, sizeof o, "%s1,0.1.0,train_loop,,caching,,sim,,,ok,1,20000,1000000,100\n2,0.1.0,train_loop,,bfc,,sim,,,ok,1,20000,2000000,100\n", HDR);
  snprintf(n, sizeof n, "%s1,0.1.0,train_loop,,caching,,sim,,,ok,1,20000,1000000,100\n2,0.1.0,train_loop,,pool,,sim,,,ok,1,20000,2000000,100\n", HDR);
  const char *po = test_write_tmp("o4.csv", o), *pn = test_write_tmp("n4.csv", n);
  struct cmp_opts opt; cmp_opts_init(&opt);
  struct cmp_report r;
  CHECK_EQ(run_engine(po, pn, &opt, &r), 0);
  CHECK_EQ(r.missing, 1);
  CHECK_EQ(r.newrows, 1);
  CHECK_EQ(r.fail, 1);
  cmp_report_free(&r);
  opt.allow_missing = 1;
  CHECK_EQ(run_engine(po, pn, &opt, &r), 0);
  CHECK_EQ(r.fail, 0);
  cmp_report_free(&r);
  /* only the new row: it passes */
  const char *pn2 = test_write_tmp("n4b.csv", n);
  const char *po2 = test_write_tmp("o4b.csv", HDR);
  cmp_opts_init(&opt);
  CHECK_EQ(run_engine(po2, pn2, &opt, &r), 0);
  CHECK_EQ(r.newrows, 2);
  CHECK_EQ(r.fail, 0);
  cmp_report_free(&r);
}

TEST(compare_a_row_that_no_longer_completes_is_worse) {
  char o[1024], n[1024];
  snprintf(o, sizeof o, "%s1,0.1.0,train_loop,,caching,,sim,1000,1.05,ok,1,20000,1000,100\n", HDR);
  snprintf(n, sizeof n, "%s1,0.1.0,train_loop,,caching,,sim,1000,1.05,oom,0,20000,1000,100\n", HDR);
  struct cmp_opts opt; cmp_opts_init(&opt);
  struct cmp_report r;
  CHECK_EQ(run_engine(test_write_tmp("o5.csv", o), test_write_tmp("n5.csv", n), &opt, &r), 0);
  CHECK_EQ(r.worse, 1);
  CHECK_STR(r.lines[0].column, "status");
  CHECK_CONTAINS(r.lines[0].note, "completed before, dies now (cap 1000 B)");
  CHECK_EQ(r.nlines, 1);   /* the dead row's figures are not compared */
  cmp_report_free(&r);
}

TEST(compare_a_figure_now_measured_passes_and_one_no_longer_measured_fails) {
  char o[1024], n[1024];
  snprintf(o, sizeof o, "%s1,0.1.0,w,,async,,sim,,,skipped: needs a GPU,0,,,\n2,0.1.0,w,,pool,,sim,,,ok,1,5,100,1\n", HDR);
  snprintf(n, sizeof n, "%s1,0.1.0,w,,async,,sim,,,ok,1,5,100,1\n2,0.1.0,w,,pool,,sim,,,skipped: needs a GPU,0,,,\n", HDR);
  struct cmp_opts opt; cmp_opts_init(&opt);
  struct cmp_report r;
  CHECK_EQ(run_engine(test_write_tmp("o10.csv", o), test_write_tmp("n10.csv", n), &opt, &r), 0);
  CHECK_EQ(r.rows[0].failed, 0);    /* async: now runs and is measured */
  CHECK_EQ(r.rows[1].failed, 1);    /* pool: no longer completes, no longer measured */
  CHECK_EQ(r.newrows, 0);           /* no new rows: the same two keys */
  CHECK_EQ(r.fail, 1);
  cmp_report_free(&r);
}

TEST(compare_matches_rows_by_key_not_order_and_reads_both_formats) {
  /* OLD in 0.1.0's form (comment line first), NEW header-first with the rows swapped and a
   * cap and params that tell rows apart */
  char o[1024], n[1024];
  snprintf(o, sizeof o, "# fragbench results v1\n%s1,0.1.0,w,,caching,a=1,sim,,,ok,1,5,100,1\n2,0.1.0,w,,caching,a=1,sim,1000,1.3,ok,1,5,200,1\n"
           "3,0.1.0,w,,caching,a=2,sim,,,ok,1,5,300,1\n", HDR);
  snprintf(n, sizeof n, "%s1,0.1.0,w,,caching,a=2,sim,,,ok,1,5,300,1\n2,0.1.0,w,,caching,a=1,sim,1000,1.3,ok,1,5,200,1\n"
           "3,0.1.0,w,,caching,a=1,sim,,,ok,1,5,100,1\n", HDR);
  struct cmp_opts opt; cmp_opts_init(&opt);
  struct cmp_report r;
  CHECK_EQ(run_engine(test_write_tmp("o6.csv", o), test_write_tmp("n6.csv", n), &opt, &r), 0);
  CHECK_EQ(r.compared, 3);
  CHECK_EQ(r.nlines, 0);
  CHECK_EQ(r.fail, 0);
  cmp_report_free(&r);
}

TEST(compare_tolerance_file_fails_any_memory_change_and_only_warns_on_timing) {
  const char *tol = test_write_tmp("tol.csv", "# a comment\ncolumn,mode,abs,rel,factor\nrun_id,ignore,,,\nversion,ignore,,,\n"
                                         "ns_per_op,warn,,,3\n");
  char o[1024], n[1024];
  snprintf(o, sizeof o, "%s1,0.1.0,w,,caching,,sim,,,ok,1,20000,1000,100\n", HDR);
  snprintf(n, sizeof n, "%s7,0.2.0,w,,caching,,sim,,,ok,1,20000,999,1000\n", HDR);   /* memory better, time 10x */
  struct cmp_opts opt; cmp_opts_init(&opt);
  char err[256];
  CHECK_EQ(cmp_load_tolerance(tol, &opt, err, sizeof err), 0);
  struct cmp_report r;
  CHECK_EQ(run_engine(test_write_tmp("o7.csv", o), test_write_tmp("n7.csv", n), &opt, &r), 0);
  CHECK_EQ(r.changed, 1);           /* peak_reserved, though lower: regress wants the same figures */
  CHECK_EQ(r.warnings, 1);          /* ns_per_op x10 */
  CHECK_EQ(r.fail, 1);
  cmp_report_free(&r);
  snprintf(n, sizeof n, "%s7,0.2.0,w,,caching,,sim,,,ok,1,20000,1000,1000\n", HDR);
  CHECK_EQ(run_engine(test_write_tmp("o7.csv", o), test_write_tmp("n7b.csv", n), &opt, &r), 0);
  CHECK_EQ(r.fail, 0);              /* timing alone never fails */
  CHECK_EQ(r.warnings, 1);
  cmp_report_free(&r);
  cmp_opts_free(&opt);
  const char *badtol = test_write_tmp("badtol.csv", "column,mode\npeak_reserved,roughly\n");
  cmp_opts_init(&opt);
  CHECK_EQ(cmp_load_tolerance(badtol, &opt, err, sizeof err), 2);
  CHECK_CONTAINS(err, "badtol.csv:2");
  cmp_opts_free(&opt);
}

TEST(compare_bad_input_exits_2_naming_the_problem) {
  const char *po, *pn;
  pair("o8.csv", "n8.csv", "1", "2", &po, &pn);
  paths();
  CHECK_EQ(test_cli(outp, errp, "compare", po, NULL), 2);
  CHECK_EQ(test_cli(outp, errp, "compare", po, "/nonexistent/x.csv", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "/nonexistent/x.csv");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "compare", po, pn, "--metric", "peak_reservd", NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "peak_reservd");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "compare", po, pn, "--max-increase", "lots", NULL), 2);
  const char *broken = test_write_tmp("broken.csv", "run_id,workload,allocator\n1,\"w,caching\n");
  CHECK_EQ(test_cli(outp, errp, "compare", po, broken, NULL), 2);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "broken.csv");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "compare", "--help", NULL), 0);
}

/* count occurrences of needle in hay */
static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static int attr_int(const char *xml, const char *name) {
  char key[64];
  snprintf(key, sizeof key, " %s=\"", name);
  const char *p = strstr(xml, key);
  return p ? atoi(p + strlen(key)) : -1;
}

static const char *junit_fixture(void) {
  char o[1024], n[1024];
  snprintf(o, sizeof o, "%s1,0.1.0,w,,caching,a=<1>&b,sim,,,ok,1,5,1000,1\n2,0.1.0,w,,bfc,,sim,,,ok,1,5,1000,1\n"
           "3,0.1.0,w,,pool,,sim,,,ok,1,5,1000,1\n", HDR);
  snprintf(n, sizeof n, "%s1,0.1.0,w,,caching,a=<1>&b,sim,,,ok,1,5,1020,1\n2,0.1.0,w,,bfc,,sim,,,ok,1,5,900,1\n"
           "3,0.1.0,w,,raw,,sim,,,ok,1,5,1000,1\n", HDR);
  const char *po = test_write_tmp("oj.csv", o), *pn = test_write_tmp("nj.csv", n);
  static char xml[512];
  snprintf(xml, sizeof xml, "%s/report.xml", test_tmpdir());
  paths();
  if (test_cli(outp, errp, "compare", po, pn, "--max-increase", "1%", "--junit", xml, NULL) != 1) return NULL;
  return xml;
}

TEST(compare_junit_has_a_testcase_per_row_and_a_failure_per_failing_row) {
  const char *xml = junit_fixture();
  CHECK(xml);
  char *t = test_read_file(xml);
  CHECK(t);
  CHECK(!strncmp(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite ", 45));
  CHECK_EQ(count(t, "<testsuite "), 1);
  CHECK_CONTAINS(t, "</testsuite>\n");
  /* rows: caching (worse), bfc (better), pool (missing), raw (new) */
  CHECK_EQ(attr_int(t, "tests"), 4);
  CHECK_EQ(count(t, "<testcase "), 4);
  CHECK_EQ(attr_int(t, "failures"), 2);
  CHECK_EQ(count(t, "<failure "), 2);
  CHECK_EQ(attr_int(t, "errors"), 0);
  CHECK_CONTAINS(t, "type=\"worse\"");
  CHECK_CONTAINS(t, "type=\"missing\"");
  CHECK_CONTAINS(t, "a=&lt;1&gt;&amp;b");      /* escaped, never raw */
  CHECK(!strstr(t, "a=<1>"));
  CHECK_CONTAINS(t, "classname=\"fragbench.caching\"");
  CHECK_CONTAINS(t, "<properties>");
  CHECK_CONTAINS(t, "<system-out>");
  CHECK_CONTAINS(t, "better: w bfc uncapped peak_reserved: 1000 B -&gt; 900 B (-10.00%)");
  CHECK_EQ(count(t, "<"), count(t, ">"));
  free(t);
}

static int xmllint_ok(const char *xsd, const char *xml) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s' '%s' > /dev/null 2>&1", xsd, xml);
  return system(cmd) == 0;
}

TEST(compare_junit_validates_against_the_junit_xsd) {
  if (system("command -v xmllint > /dev/null 2>&1")) SKIP("xmllint not installed (apt-get install libxml2-utils)");
  const char *xml = junit_fixture();
  CHECK(xml);
  CHECK_MSG(xmllint_ok(test_data("junit.xsd"), xml), "xmllint rejects %s against tests/data/junit.xsd", xml);
  const char *other = getenv("FB_JUNIT_XSD");
  if (other && *other) CHECK_MSG(xmllint_ok(other, xml), "xmllint rejects %s against %s", xml, other);
  /* the check can fail: a <failure> without its required type is rejected */
  char *t = test_read_file(xml);
  char *p = strstr(t, "<failure type=\"");
  CHECK(p);
  memcpy(p + 9, "kind", 4);
  const char *bad = test_write_tmp("bad.xml", t);
  free(t);
  CHECK(!xmllint_ok(test_data("junit.xsd"), bad));
}

TEST(compare_json_lists_every_difference_with_its_percentage) {
  const char *po, *pn;
  pair("o9.csv", "n9.csv", "1020000", "1800000", &po, &pn);
  char json[512];
  snprintf(json, sizeof json, "%s/cmp.json", test_tmpdir());
  paths();
  CHECK_EQ(test_cli(outp, errp, "compare", po, pn, "--max-increase", "1", "--json", json, NULL), 1);
  char *t = test_read_file(json);
  CHECK(t);
  CHECK_CONTAINS(t, "\"verdict\": \"fail\"");
  CHECK_CONTAINS(t, "\"kind\": \"worse\", \"fails\": true");
  CHECK_CONTAINS(t, "\"change_pct\": 2.0000");
  CHECK_CONTAINS(t, "\"kind\": \"better\", \"fails\": false");
  CHECK_CONTAINS(t, "\"change_pct\": -10.0000");
  free(t);
}

TEST(run_max_reserved_and_fail_on_oom_gate_the_exit_status) {
  paths();
  const char *w = "script:events=a1=3MiB/a2=5MiB/f1/a3=7MiB/f2/f3";
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "caching", "--device", "sim", "--max-reserved", "100MiB", "--quiet", NULL), 0);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "caching", "--device", "sim", "--max-reserved", "10MiB", "--quiet", NULL), 1);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "> --max-reserved 10485760");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "caching", "--device", "sim", "--cap-bytes", "9MiB", "--quiet", NULL), 0);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "caching", "--device", "sim", "--cap-bytes", "9MiB", "--fail-on-oom", "--quiet", NULL), 1);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "out of memory");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--device", "sim", "--max-reserved", "lots", NULL), 2);
}

TEST(run_fail_on_oom_writes_the_results_whole_then_exits_1_saying_so) {
  paths();
  const char *w = "script:events=a1=3MiB/a2=5MiB/f1/a3=7MiB/f2/f3";
  char out[600];
  snprintf(out, sizeof out, "%s/gate_oom.csv", test_tmpdir());
  FILE *f = fopen(out, "w");
  fputs("an older baseline\n", f);
  fclose(f);
  CHECK_EQ(test_cli(NULL, errp, "run", "--workload", w, "--allocator", "caching", "--allocator", "expandable", "--device", "sim", "--limit",
                    "9MiB", "--fail-on-oom", "--quiet", "--out", out, NULL), 1);
  char *e = test_read_file(errp), *csv = test_read_file(out);
  CHECK_CONTAINS(e, "fragbench run: exit 1: a row failed --fail-on-oom; the results were written whole to ");
  CHECK_CONTAINS(e, "gate_oom.csv\n");
  CHECK(csv && !strncmp(csv, "run_id,", 7));   /* the header and both rows, the old file replaced */
  CHECK_CONTAINS(csv, ",caching,");
  CHECK_CONTAINS(csv, ",expandable,");
  CHECK_CONTAINS(csv, ",oom,");
  int lines = 0;
  for (char *p = csv; p && *p; p++) lines += *p == '\n';
  CHECK_EQ(lines, 3);
  free(e);
  free(csv);
  /* the same with --max-reserved */
  CHECK_EQ(test_cli(NULL, errp, "run", "--workload", w, "--allocator", "caching", "--device", "sim", "--max-reserved", "10MiB", "--quiet",
                    "--out", out, NULL), 1);
  e = test_read_file(errp);
  CHECK_CONTAINS(e, "a row failed --max-reserved; the results were written whole to ");
  free(e);
}

TEST(run_row_says_when_ns_per_op_includes_validation) {
  paths();
  const char *w = "script:events=a1=3MiB/a2=5MiB/f1/a3=7MiB/f2/f3";
  struct results t; char err[256];
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "caching", "--device", "sim", "--validate", "--quiet", NULL), 0);
  CHECK_EQ(results_load(outp, &t, err, sizeof err), 0);
  CHECK_STR(results_get(&t, 0, "ns_per_op_includes"), "validate");
  results_free(&t);
  CHECK_EQ(test_cli(outp, errp, "run", "--workload", w, "--allocator", "caching", "--device", "sim", "--quiet", NULL), 0);
  CHECK_EQ(results_load(outp, &t, err, sizeof err), 0);
  CHECK_EQ(results_col(&t, "ns_per_op_includes") >= 0, 1);
  CHECK_STR(results_get(&t, 0, "ns_per_op_includes"), "");
  results_free(&t);
}

/* OLD/NEW with peak_requested: caching under a byte cap doubles its workload (a bigger
 * model), bfc keeps its workload and reserves more beyond it (fragmentation) */
static void growth_pair(const char **po, const char **pn) {
  const char *h = "run_id,version,workload,trace,allocator,params,device,cap_bytes,cap_x,status,completed,events,peak_requested,peak_reserved,ns_per_op\n";
  char o[1024], n[1024];
  snprintf(o, sizeof o, "%s1,0.1.0,w,,caching,,sim,80000000000,,ok,1,5,20000000000,21749563392,1\n2,0.1.0,w,,bfc,,sim,,,ok,1,5,20000000000,21749563392,1\n", h);
  snprintf(n, sizeof n, "%s1,0.1.0,w,,caching,,sim,80000000000,,ok,1,5,40000000000,43499126784,1\n2,0.1.0,w,,bfc,,sim,,,ok,1,5,20000000000,49620713472,1\n", h);
  *po = test_write_tmp("og.csv", o);
  *pn = test_write_tmp("ng.csv", n);
}

TEST(compare_writes_bytes_and_byte_caps_in_gib_but_json_keeps_raw_bytes) {
  const char *po, *pn;
  growth_pair(&po, &pn);
  char xml[512], json[512];
  snprintf(xml, sizeof xml, "%s/g.xml", test_tmpdir());
  snprintf(json, sizeof json, "%s/g.json", test_tmpdir());
  paths();
  CHECK_EQ(test_cli(outp, errp, "compare", po, pn, "--junit", xml, "--json", json, NULL), 1);
  char *t = test_read_file(outp), *x = test_read_file(xml), *j = test_read_file(json);
  CHECK(t && x && j);
  CHECK_CONTAINS(t, "w caching cap 74.51 GiB");
  CHECK_CONTAINS(t, "20.26 GiB");
  CHECK_CONTAINS(t, "46.21 GiB");
  CHECK(!strstr(t, "80000000000B") && !strstr(t, "21749563392"));
  CHECK_CONTAINS(x, "<testcase name=\"w caching cap 74.51 GiB\"");
  CHECK_CONTAINS(x, "peak_reserved: 20.26 GiB -&gt; 40.51 GiB (+100.00%)");
  CHECK(!strstr(x, "80000000000B") && !strstr(x, "21749563392"));
  CHECK_CONTAINS(j, "\"old\": \"21749563392\"");
  CHECK_CONTAINS(j, "\"cap\": \"80000000000B\"");
  free(t); free(x); free(j);
}

TEST(compare_tells_a_bigger_workload_from_worse_fragmentation) {
  const char *po, *pn;
  growth_pair(&po, &pn);
  paths();
  CHECK_EQ(test_cli(outp, errp, "compare", po, pn, NULL), 1);
  char *t = test_read_file(outp);
  CHECK(t);
  char *c = strstr(t, "w caching"), *b = strstr(t, "w bfc");
  CHECK(c && b);
  /* caching: peak_requested doubled, overhead the same */
  char *cl = strndup(c, (size_t)(strchr(c, '\n') - c)), *bl = strndup(b, (size_t)(strchr(b, '\n') - b));
  CHECK_CONTAINS(cl, "peak_requested 18.63 GiB -> 37.25 GiB (+100.00%): the workload asks for more");
  CHECK_CONTAINS(cl, "overhead unchanged");
  CHECK(!strstr(cl, "worse fragmentation"));
  /* bfc: the same workload, more held beyond it */
  CHECK_CONTAINS(bl, "peak_requested unchanged (18.63 GiB)");
  CHECK_CONTAINS(bl, "worse fragmentation");
  free(cl); free(bl); free(t);
}
