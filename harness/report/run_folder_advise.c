/* run_folder_advise.c - each workload's advise-<trace file>.csv of a run folder, read
 * once when the folder is (run_folder_load): `fragbench advise`'s settings for that
 * snapshot, the recommendation first, which the summary and the workload's notes both
 * read. Optional: a workload may have none; one that cannot be read keeps why. */
#include "run_folder.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the names a workload's own files may carry: the trace's file name (gpt_train.pickle.gz),
 * then the workload's label (gpt_train.pickle) */
int rf_own_names(const struct run_folder *f, int w, const char *names[2]) {
  int n = 0, row = -1;
  for (int s = 0; s < f->ns_cells && row < 0; s++) {
    const struct rf_cell *c = rf_cell_at(f, w, s);
    if (c && c->run >= 0) row = c->run;
  }
  if (row >= 0) {
    const char *t = results_get(&f->runs, row, "trace");
    const char *b = strrchr(t, '/');
    if (t[0]) names[n++] = b ? b + 1 : t;
  }
  if (!n || strcmp(names[0], f->workload[w])) names[n++] = f->workload[w];
  return n;
}

void rf_advise_load(struct run_folder *f) {
  f->advise = calloc((size_t)(f->nw ? f->nw : 1), sizeof *f->advise);
  if (!f->advise) abort();
  for (int w = 0; w < f->nw; w++) {
    struct rf_advise *a = &f->advise[w];
    const char *names[2];
    int n = rf_own_names(f, w, names);
    for (int i = 0; i < n && !a->state; i++) {
      char path[1400];
      int there;
      snprintf(path, sizeof path, "%s/advise-%s.csv", f->dir, names[i]);
      snprintf(a->name, sizeof a->name, "%s", names[i]);
      if (results_load_if_there(path, &a->t, &there, a->err, sizeof a->err)) a->state = RF_ADVISE_UNREADABLE;
      else if (there) a->state = RF_ADVISE_READ;
    }
  }
}

const struct rf_advise *rf_advise_of(const struct run_folder *f, int w) {
  return f->advise && w >= 0 && w < f->nw && f->advise[w].state ? &f->advise[w] : NULL;
}

void rf_advise_free(struct run_folder *f) {
  for (int w = 0; f->advise && w < f->nw; w++) results_free(&f->advise[w].t);
  free(f->advise);
  f->advise = NULL;
}
