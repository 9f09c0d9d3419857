/* report_sources.c - "Where the figures came from" in report.md: on a GPU host the bench
 * takes uncapped rows from the GPU and searches cap sweeps and minimum caps on sim (then
 * confirms on the GPU); scripts/bench.sh says so in env.txt (figures_uncapped: cuda,
 * figures_capsweep: sim, figures_mincap: sim, confirmed on cuda). This section repeats
 * those lines in words, and names the devices each results file's rows ran on. */
#include "report.h"
#include <string.h>
#include "report_text.h"

#define B 256

static const char *what_of(const char *key) {
  if (!strcmp(key, "figures_uncapped")) return "uncapped rows (runs.csv: the tables, overhead, latency, timelines)";
  if (!strcmp(key, "figures_capsweep")) return "cap sweep (capsweep.csv)";
  if (!strcmp(key, "figures_mincap")) return "smallest caps (mincap.csv)";
  return NULL;
}

/* "sim" or "cuda:0, cuda:1": the distinct device values of a file, aggregates left out */
static void devices_of(const struct results *t, FILE *o) {
  int shown = 0;
  for (int r = 0; r < t->nrows; r++) {
    const char *d = results_get(t, r, "device");
    if (!d[0] || !strcmp(d, "all")) continue;
    int seen = 0;
    for (int q = 0; q < r && !seen; q++) seen = !strcmp(results_get(t, q, "device"), d);
    if (seen) continue;
    fprintf(o, "%s%s", shown++ ? ", " : "", d);
  }
  if (!shown) fputs("none", o);
}

void report_sources(const struct run_folder *f, FILE *o) {
  char a[B], b[B];
  fputs("## Where the figures came from\n\n", o);
  for (int i = 0; i < f->nenv; i++) {
    if (strncmp(f->env_key[i], "figures_", 8)) continue;
    const char *what = what_of(f->env_key[i]);
    fprintf(o, "- %s: **%s**\n", what ? what : rt_md(f->env_key[i] + 8, a, B), rt_md(f->env_val[i], b, B));
  }
  fputs("- devices in the files: runs.csv ", o);
  devices_of(&f->runs, o);
  if (f->have_capsweep) { fputs("; capsweep.csv ", o); devices_of(&f->capsweep, o); }
  if (f->have_mincap) { fputs("; mincap.csv ", o); devices_of(&f->mincap, o); }
  fputs("\n\n", o);
}
