/* test_claims_fit.c - the published "fit never answers above the real largest batch"
 * (docs/fit.md; tests/validate/fit_check.py, ported here so make test keeps it
 * true): for every search recorded on the H100 (tests/data/recorded/fit/summary.jsonl: job,
 * PyTorch setting, memory fraction, PyTorch's real largest batch), `fit` on the job's
 * generator under fraction x the H100's total, with the default margin, must answer no more
 * than the real largest batch for caching and expandable (async's pool is not calibrated;
 * its answers are checked as published only), and every answer must be the published one.
 * The jobs as generators are fit_check.py's JOBS table. */
#include <stdlib.h>
#include "test.h"
#include "fit.h"
#include "replay.h"

#define H100_TOTAL 85017493504ull   /* as torch reports it; fractions are of this */

struct fit_job { const char *job, *spec, *vary; uint64_t from; };
static const struct fit_job jobs[] = {   /* fit_check.py's JOBS */
    {"gpt_fp32", "train_loop:arch=gpt,iters=4", "batch", 1},
    {"gpt_bf16", "train_loop:arch=gpt,iters=4,amp=bf16", "batch", 1},
    {"gpt_ckpt_bf16", "train_loop:arch=gpt,iters=4,amp=bf16,ckpt=1,seq=1024", "batch", 1},
    {"resnet50", "train_resnet:iters=4", "batch", 1},
    {"gpt_varlen_max", "varlen:arch=gpt,dist=torch,iters=4,batch_min=4,seq_min=64,seq_max=1024", "batch_max", 4},
};

/* fit's answers as docs/fit.md's table publishes them: job, setting, fraction x 1000, answer */
struct published { const char *job, *conf; int permille; uint64_t fit; };
static const struct published table[] = {
    {"gpt_fp32", "async", 125, 14},       {"gpt_fp32", "caching", 125, 14},      {"gpt_fp32", "expandable", 125, 15},
    {"gpt_fp32", "caching", 250, 33},     {"gpt_fp32", "expandable", 250, 35},   {"resnet50", "async", 125, 116},
    {"resnet50", "caching", 125, 116},    {"resnet50", "expandable", 125, 117},  {"resnet50", "caching", 250, 237},
    {"gpt_bf16", "async", 125, 16},       {"gpt_bf16", "caching", 125, 18},      {"gpt_bf16", "expandable", 125, 21},
    {"gpt_ckpt_bf16", "async", 125, 12},  {"gpt_ckpt_bf16", "caching", 125, 14}, {"gpt_ckpt_bf16", "expandable", 125, 16},
    {"gpt_varlen_max", "caching", 125, 10}, {"gpt_varlen_max", "expandable", 125, 15},
};

static const char *alloc_of(const char *conf) {
  if (!strcmp(conf, "default")) return "caching";
  if (!strcmp(conf, "expandable_segments:True")) return "expandable";
  if (!strcmp(conf, "backend:cudaMallocAsync")) return "async";
  return NULL;
}

TEST(claims_fit_never_answers_above_the_real_largest_batch_on_the_recorded_h100_searches) {
  char *text = test_read_file("tests/data/recorded/fit/summary.jsonl");
  CHECK_MSG(text != NULL, "tests/data/recorded/fit/summary.jsonl missing");
  int searches = 0, exact = 0, below = 0, published = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char job[64], conf[64], frac[32], maxv[32];
    if (test_json_field(line, "job", job, sizeof job) || test_json_field(line, "conf", conf, sizeof conf) ||
        test_json_field(line, "fraction", frac, sizeof frac) || test_json_field(line, "max_value", maxv, sizeof maxv)) {
      free(text);
      CHECK_MSG(0, "summary.jsonl: a line without job, conf, fraction or max_value: %.200s", line);
    }
    const struct fit_job *fj = NULL;
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
      if (!strcmp(jobs[i].job, job)) fj = &jobs[i];
    const char *alloc = alloc_of(conf);
    if (!fj || !alloc) { free(text); CHECK_MSG(0, "summary.jsonl: job %s / setting %s has no generator here", job, conf); }
    double f = atof(frac);
    uint64_t real = strtoull(maxv, NULL, 10), limit = (uint64_t)(f * (double)H100_TOTAL);
    struct run_spec s = {.workload = fj->spec, .allocator = alloc, .trace_device = -1, .world = 1, .seed = 1,
                         .device = {.kind = "sim"}, .quiet = 1};
    struct run_result r;
    struct fit_report rep;
    run_result_init(&r);
    int cls = fit_find(&s, fj->vary, limit, fit_default_margin(limit), fj->from, 0, 0, &r, &rep);
    if (cls || !rep.found) { free(text); CHECK_MSG(0, "%s %s %.3f: fit found nothing (exit %d)", job, alloc, f, cls); }
    uint64_t v = rep.max_value;
    printf("  %-15s %-10s %.3f: real %3llu, fit %3llu (%s)\n", job, alloc, f, (unsigned long long)real, (unsigned long long)v,
           v == real ? "exact" : v > real ? "ABOVE" : "below");
    searches++;
    exact += v == real;
    below += v < real;
    if (strcmp(alloc, "async")) {
      if (v > real) free(text);
      CHECK_MSG(v <= real, "%s %s fraction %.3f: fit answers %llu, above PyTorch's real largest batch %llu", job, alloc, f,
                (unsigned long long)v, (unsigned long long)real);
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
      if (!strcmp(table[i].job, job) && !strcmp(table[i].conf, alloc) && table[i].permille == (int)(f * 1000 + 0.5)) {
        published++;
        if (table[i].fit != v) free(text);
        CHECK_MSG(table[i].fit == v, "%s %s fraction %.3f: fit answers %llu, docs/fit.md's table %llu", job, alloc, f,
                  (unsigned long long)v, (unsigned long long)table[i].fit);
      }
  }
  free(text);
  printf("  %d searches: fit exact on %d, below on %d, above on %d\n", searches, exact, below, searches - exact - below);
  CHECK_EQ(searches, 17);
  CHECK_EQ(published, 17);
}
