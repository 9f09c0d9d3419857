/* report_snapshot.c - the notes under a workload's heading in report.md, from what the
 * run folder holds about it beyond the rows: what PyTorch itself reserved (a snapshot's
 * trace_peak_reserved), the device limit inferred from a snapshot that ended in an OOM
 * (cap_source, cap_lo, cap_hi, cap_bytes), `fragbench advise`'s recommendation
 * (advise-<trace file>.csv, read with the folder: run_folder_advise.c) and `fragbench
 * explain`'s picture (plots/explain-<trace file>.png). Each is optional. */
#include "status.h"
#include "report.h"
#include <stdio.h>
#include <string.h>
#include "report_text.h"

#define B 256

static void pytorch_reserved(const struct run_folder *f, int w, FILE *o) {
  char a[B];
  for (int s = 0; s < f->ns_cells; s++) {
    const struct rf_cell *c = rf_cell_at(f, w, s);
    if (!c || c->run < 0) continue;
    const char *v = results_get(&f->runs, c->run, "trace_peak_reserved");
    if (rt_num(v) <= 0) continue;
    fprintf(o, "PyTorch itself reserved **%s** at its peak in this snapshot (its own segment events: `trace_peak_reserved`); "
               "the \"vs PyTorch\" column compares each strategy's peak reserved with it.\n\n", rt_bytes(v, a, B));
    return;
  }
}

static void cap_source(const struct run_folder *f, int w, FILE *o) {
  char a[B], b[B], c2[B];
  for (int s = 0; s < f->ns_cells; s++) {
    const struct rf_cell *c = rf_cell_at(f, w, s);
    if (!c || c->run < 0) continue;
    const char *src = results_get(&f->runs, c->run, "cap_source");
    if (!strcmp(src, "inferred")) {
      fprintf(o, "The snapshot ended in an out-of-memory error: the device limit was between **%s** and **%s**; "
                 "its rows were replayed under **%s**.\n\n",
              rt_bytes(results_get(&f->runs, c->run, "cap_lo"), a, B), rt_bytes(results_get(&f->runs, c->run, "cap_hi"), b, B),
              rt_bytes(results_get(&f->runs, c->run, "cap_bytes"), c2, B));
      return;
    }
    if (!strcmp(src, "given")) {
      fprintf(o, "Replayed under the given limit of **%s**.\n\n", rt_bytes(results_get(&f->runs, c->run, "cap_bytes"), a, B));
      return;
    }
  }
}

static void advice(const struct rf_advise *ad, FILE *o) {
  char a[B], b[B], c[B], lab[800];
  const char *name = ad->name;
  if (ad->state == RF_ADVISE_UNREADABLE) {
    fprintf(o, "`advise-%s.csv` could not be read: %s\n\n", rt_md(name, a, B), rt_md(ad->err, b, B));
    fprintf(stderr, "report: %s\n", ad->err);
    return;
  }
  const struct results *t = &ad->t;
  if (t->nrows == 0) {
    fprintf(o, "`advise-%s.csv` holds no setting.\n\n", rt_md(name, a, B));
    return;
  }
  rf_strategy_label(t, 0, lab, sizeof lab);
  const char *st = results_get(t, 0, "status");
  if (st[0] && !status_is(st, "ok"))   /* the best of them still fails: no setting fits */
    fprintf(o, "No PyTorch allocator setting fits (`fragbench advise`, %d setting%s tried, `advise-%s.csv`); the nearest: **%s**",
            t->nrows, t->nrows == 1 ? "" : "s", rt_md(name, a, B), rt_md(lab, b, B));
  else
    fprintf(o, "Recommendation (`fragbench advise`, %d setting%s tried, `advise-%s.csv`): **%s**", t->nrows, t->nrows == 1 ? "" : "s",
            rt_md(name, a, B), rt_md(lab, b, B));
  int died = st[0] && !status_is(st, "ok");
  if (!died && results_get(t, 0, "peak_reserved")[0])
    fprintf(o, ", peak reserved %s (%s its peak requested)", rt_bytes(results_get(t, 0, "peak_reserved"), a, B),
            rt_x(results_get(t, 0, "overhead"), c, B));
  if (died) {   /* where it died, not figures of the part that ran */
    fprintf(o, ", status %s", rt_md(st, a, B));
    if (results_get(t, 0, "first_oom_event")[0]) fprintf(o, " at event %s", results_get(t, 0, "first_oom_event"));
  }
  const char *conf = results_get(t, 0, "alloc_conf");
  if (conf[0]) fprintf(o, st[0] && !status_is(st, "ok") ? "; its setting: `PYTORCH_CUDA_ALLOC_CONF=%s`" : "; run with `PYTORCH_CUDA_ALLOC_CONF=%s`", conf);
  fputs(".\n\n", o);
}

const struct results *report_advise(const struct run_folder *f, int w) {
  const struct rf_advise *ad = rf_advise_of(f, w);
  return ad && ad->state == RF_ADVISE_READ ? &ad->t : NULL;   /* unreadable: the notes under its heading say why */
}

static void explain_picture(const char *name, FILE *o, const struct report_images *im) {
  char img[600];
  snprintf(img, sizeof img, "explain-%s.png", name);
  if (report_has_image(im, img))
    fprintf(o, "What was live at the peak (or the OOM), by `fragbench explain`:\n\n![%s: explain](plots/%s)\n\n", name, img);
}

void report_snapshot_notes(const struct run_folder *f, int w, FILE *o, const struct report_images *im) {
  const char *names[2];
  int n = rf_own_names(f, w, names);
  pytorch_reserved(f, w, o);
  cap_source(f, w, o);
  const struct rf_advise *ad = rf_advise_of(f, w);
  if (ad) advice(ad, o);
  for (int i = 0; i < n; i++) {
    char img[600];
    snprintf(img, sizeof img, "explain-%s.png", names[i]);
    if (report_has_image(im, img)) { explain_picture(names[i], o, im); break; }
  }
}
