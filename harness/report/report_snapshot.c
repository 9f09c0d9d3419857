/* report_snapshot.c - the notes under a workload's heading in report.md, from what the
 * run folder holds about it beyond the rows: what PyTorch itself reserved (a snapshot's
 * trace_peak_reserved), the device limit inferred from a snapshot that ended in an OOM
 * (cap_source, cap_lo, cap_hi, cap_bytes), `fragbench advise`'s recommendation
 * (advise-<trace file>.csv: results rows, the recommendation first) and `fragbench
 * explain`'s picture (plots/explain-<trace file>.png). Each is optional. */
#include "status.h"
#include "report.h"
#include <stdio.h>
#include <string.h>
#include "report_text.h"

#define B 256

/* the names a workload's own files may carry: the trace's file name (gpt_train.pickle.gz),
 * then the workload's label (gpt_train.pickle) */
static int names_of(const struct run_folder *f, int w, const char *names[2], int *row) {
  int n = 0;
  *row = -1;
  for (int s = 0; s < f->ns_cells && *row < 0; s++) {
    const struct rf_cell *c = rf_cell_at(f, w, s);
    if (c && c->run >= 0) *row = c->run;
  }
  if (*row >= 0) {
    const char *t = results_get(&f->runs, *row, "trace");
    const char *b = strrchr(t, '/');
    if (t[0]) names[n++] = b ? b + 1 : t;
  }
  if (!n || strcmp(names[0], f->workload[w])) names[n++] = f->workload[w];
  return n;
}

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

static void advice(const struct run_folder *f, const char *name, FILE *o) {
  char path[1400], err[600], a[B], b[B], c[B], lab[800];
  snprintf(path, sizeof path, "%s/advise-%s.csv", f->dir, name);
  FILE *probe = fopen(path, "r");
  if (!probe) return;
  fclose(probe);
  struct results t;
  if (results_load(path, &t, err, sizeof err)) {
    fprintf(o, "`advise-%s.csv` could not be read: %s\n\n", rt_md(name, a, B), rt_md(err, b, B));
    fprintf(stderr, "report: %s\n", err);
    return;
  }
  if (t.nrows == 0) {
    fprintf(o, "`advise-%s.csv` holds no setting.\n\n", rt_md(name, a, B));
  } else {
    rf_strategy_label(&t, 0, lab, sizeof lab);
    const char *st = results_get(&t, 0, "status");
    if (st[0] && !status_is(st, "ok"))   /* the best of them still fails: no setting fits */
      fprintf(o, "No PyTorch allocator setting fits (`fragbench advise`, %d setting%s tried, `advise-%s.csv`); the nearest: **%s**",
              t.nrows, t.nrows == 1 ? "" : "s", rt_md(name, a, B), rt_md(lab, b, B));
    else
      fprintf(o, "Recommendation (`fragbench advise`, %d setting%s tried, `advise-%s.csv`): **%s**", t.nrows, t.nrows == 1 ? "" : "s",
              rt_md(name, a, B), rt_md(lab, b, B));
    int died = st[0] && !status_is(st, "ok");
    if (!died && results_get(&t, 0, "peak_reserved")[0])
      fprintf(o, ", peak reserved %s (%s its peak requested)", rt_bytes(results_get(&t, 0, "peak_reserved"), a, B),
              rt_x(results_get(&t, 0, "overhead"), c, B));
    if (died) {   /* where it died, not figures of the part that ran */
      fprintf(o, ", status %s", rt_md(st, a, B));
      if (results_get(&t, 0, "first_oom_event")[0]) fprintf(o, " at event %s", results_get(&t, 0, "first_oom_event"));
    }
    const char *conf = results_get(&t, 0, "alloc_conf");
    if (conf[0]) fprintf(o, st[0] && !status_is(st, "ok") ? "; its setting: `PYTORCH_CUDA_ALLOC_CONF=%s`" : "; run with `PYTORCH_CUDA_ALLOC_CONF=%s`", conf);
    fputs(".\n\n", o);
  }
  results_free(&t);
}

int report_advise_load(const struct run_folder *f, int w, struct results *t) {
  const char *names[2];
  char path[1400], err[600];
  int row, n = names_of(f, w, names, &row);
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/advise-%s.csv", f->dir, names[i]);
    FILE *p = fopen(path, "r");
    if (!p) continue;
    fclose(p);
    return results_load(path, t, err, sizeof err) == 0;   /* unreadable: the notes under its heading say why */
  }
  return 0;
}

static void explain_picture(const char *name, FILE *o, const struct report_images *im) {
  char img[600];
  snprintf(img, sizeof img, "explain-%s.png", name);
  if (report_has_image(im, img))
    fprintf(o, "What was live at the peak (or the OOM), by `fragbench explain`:\n\n![%s: explain](plots/%s)\n\n", name, img);
}

void report_snapshot_notes(const struct run_folder *f, int w, FILE *o, const struct report_images *im) {
  const char *names[2];
  int row, n = names_of(f, w, names, &row);
  pytorch_reserved(f, w, o);
  cap_source(f, w, o);
  for (int i = 0; i < n; i++) {
    char path[1400];
    snprintf(path, sizeof path, "%s/advise-%s.csv", f->dir, names[i]);
    FILE *p = fopen(path, "r");
    if (p) { fclose(p); advice(f, names[i], o); break; }
  }
  for (int i = 0; i < n; i++) {
    char img[600];
    snprintf(img, sizeof img, "explain-%s.png", names[i]);
    if (report_has_image(im, img)) { explain_picture(names[i], o, im); break; }
  }
}
