/* explain_plot.c - the picture of `fragbench explain` (see explain_plot.h). Rows from
 * the top: the request (when the moment has one: not at a peak), then segment 1, 2, ...;
 * x is the offset inside the segment in MiB, so blocks sit where they sit in their
 * segment and free holes show as gaps between allocated bars. The request's size is
 * written beside its bar (a small request's bar can be a sliver); the title says whether
 * the cap was given or inferred, and how many segments are drawn, on lines of its own. */
#include "explain_plot.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gnuplot_run.h"
#include "plot_data.h"

#define MIB 1048576.0

static const char *const state_label[] = {"allocated", "free (releasable)", "inactive (free piece of a split segment)", "unmapped"};
static const char *const state_colour[] = {"#1f77b4", "#2ca02c", "#ff7f0e", "#d8d8d8"};

/* "dir/x.png" -> "dir/x" + ext */
static void stem(const char *path, const char *ext, char *out, size_t n) {
  snprintf(out, n, "%s", path);
  char *dot = strrchr(out, '.');
  char *slash = strrchr(out, '/');
  if (dot && (!slash || dot > slash)) *dot = 0;
  size_t k = strlen(out);
  snprintf(out + k, n > k ? n - k : 0, "%s", ext);
}

static void write_data(const struct explain_state *st, FILE *f, uint64_t *nsegs, double *max_mib) {
  fprintf(f, "# fragbench explain: row x_center_mib half_width_mib (one index per block state)\n");
  *max_mib = 0;   /* the widest segment: a larger request is drawn to the edge, its size written */
  for (int s = SEG_ALLOCATED; s <= SEG_UNMAPPED; s++) {
    fprintf(f, "# %s\n", state_label[s]);
    uint64_t seg = 0, last = UINT64_MAX;
    int any = 0;
    for (size_t i = 0; i < st->nblocks; i++) {
      const struct seg_block *b = &st->blocks[i];
      if (b->seg_addr != last) { seg++; last = b->seg_addr; }
      if (seg > EXPLAIN_PLOT_MAX_SEGS) break;
      double end = (double)(b->addr - b->seg_addr + b->size) / MIB;
      if (end > *max_mib && b->state != SEG_UNMAPPED) *max_mib = end;   /* expandable: not the whole range */
      if ((int)b->state != s) continue;
      double x0 = (double)(b->addr - b->seg_addr) / MIB, w = (double)b->size / MIB;
      fprintf(f, "%llu %.6f %.6f\n", (unsigned long long)seg, x0 + w / 2, w / 2);
      any = 1;
    }
    if (!any) fprintf(f, "-100 0 0\n");   /* an empty index still exists (off the plot) */
    fprintf(f, "\n\n");
    *nsegs = seg > EXPLAIN_PLOT_MAX_SEGS ? EXPLAIN_PLOT_MAX_SEGS : seg;
  }
  /* index 4: the request, row 0 */
  fprintf(f, "# request\n");
  double rq = (double)st->rounded / MIB;
  if (*max_mib <= 0) *max_mib = rq;
  if (rq > *max_mib * 1.02) rq = *max_mib * 1.02;   /* wider than any segment: to the plot's edge */
  if (st->has_request) fprintf(f, "0 %.6f %.6f\n", rq / 2, rq / 2);
  else fprintf(f, "-100 0 0\n");
}

void explain_plot_paths(const char *path, char *dat, char *gp, size_t n) {
  stem(path, ".dat", dat, n);
  stem(path, ".gp", gp, n);
}

/* the script: the targets are its defaults (`gnuplot FILE.gp` redraws the picture);
 * explain_plot points out and dat at the temporaries */
static void write_script(const struct explain_state *st, FILE *f, const char *trace, const char *path, const char *dat,
                         const char *gp, uint64_t nsegs, double max_mib) {
  size_t n = strlen(path);
  int svg = n > 4 && !strcmp(path + n - 4, ".svg");
  int req = st->has_request, first = req ? 0 : 1;   /* row 0: the request, when there is one */
  int rows = (int)nsegs + req;
  int h = 230 + 20 * rows;
  if (h > 2000) h = 2000;
  char a[32], b[32], c[32], d[32], e[32];
  const char *base = strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace;
  fprintf(f, "# fragbench explain: %s (gnuplot %s)\n", base, gp);
  if (svg) fprintf(f, "set terminal svg size 1100,%d dynamic noenhanced font \"sans,12\" background rgb \"white\"\n", h);
  else fprintf(f, "set terminal pngcairo size 1100,%d noenhanced font \"sans,11\" background rgb \"white\"\n", h);
  fprintf(f, "if (!exists(\"out\")) out = ");
  pd_gq(f, path);
  fprintf(f, "\nif (!exists(\"dat\")) dat = ");
  pd_gq(f, dat);
  fprintf(f, "\nset output out\nset encoding utf8\n");
  char title[1600], capw[200] = "";
  if (st->cap && st->cap_source && !strcmp(st->cap_source, "inferred") && st->ci.has_oom)
    snprintf(capw, sizeof capw, ", cap %s, inferred from the OOM (limit %s-%s)", fmt_bytes(st->cap, e, sizeof e),
             fmt_bytes(st->ci.lo, a, sizeof a), fmt_bytes(st->ci.hi, b, sizeof b));
  else if (st->cap)
    snprintf(capw, sizeof capw, ", cap %s (%s)", fmt_bytes(st->cap, e, sizeof e), st->cap_source ? st->cap_source : "given");
  int k = snprintf(title, sizeof title, "%s, %s, %s event %lld%s%s\\nreserved %s, allocated %s, free inside reserved %s in %llu pieces, largest free %s",
                   base, st->allocator, st->at_peak ? "at its peak, before" : "before", (long long)st->event,
                   st->at_oom ? " (PyTorch's OOM)" : "", capw,
                   fmt_bytes(st->reserved, a, sizeof a), fmt_bytes(st->allocated, b, sizeof b),
                   fmt_bytes(st->free_inside, c, sizeof c), (unsigned long long)st->free_pieces, fmt_bytes(st->largest_free, d, sizeof d));
  if (st->has_request && k > 0 && (size_t)k < sizeof title)
    k += snprintf(title + k, sizeof title - (size_t)k, "\\nrequest %s (rounded %s): %s", fmt_bytes(st->request, a, sizeof a),
                  fmt_bytes(st->rounded, b, sizeof b), st->fits ? "fits" : "does not fit");
  if (st->nsegments > nsegs && k > 0 && (size_t)k < sizeof title)
    snprintf(title + k, sizeof title - (size_t)k, "\\nsegments 1..%llu of %llu shown (address order; the text output lists them)",
             (unsigned long long)nsegs, (unsigned long long)st->nsegments);
  fprintf(f, "set title \"%s\"\n", title);
  double rq = (double)st->rounded / MIB;
  int wide = rq > 0.6 * max_mib, wider = rq > max_mib * 1.02;
  fprintf(f, "set xlabel \"offset inside the segment (MiB)\"\nset xrange [0:%.6f]\n", max_mib * (st->has_request && !wide ? 1.15 : 1.02) + 1e-6);
  fprintf(f, "set yrange [%d.6:%d.4]\nset ytics (", (int)nsegs, first - 1);
  if (req) fprintf(f, "\"request\" 0%s", nsegs ? ", " : "");
  for (uint64_t s = 1; s <= nsegs; s++) fprintf(f, "%s\"#%llu\" %llu", s > 1 ? ", " : "", (unsigned long long)s, (unsigned long long)s);
  fprintf(f, ")\n");
  if (req)   /* its size beside its bar: a small request is a sliver at this scale */
    fprintf(f, "set label 1 \"%s%s%s\" at first %.6f, first 0 %s tc rgb \"%s\" front\n", fmt_bytes(st->rounded, a, sizeof a),
            wider ? ", wider than any segment (cut at the edge)" : "", st->fits ? ": fits" : ": does not fit", wider ? max_mib * 1.02 : rq,
            wide ? "right offset -1,0" : "left offset 1,0", wide ? "white" : st->fits ? "#5b3b8c" : "#b00000");
  fprintf(f, "set border 3\nset tics nomirror\nset grid xtics lc rgb \"#e0e0e0\"\n");
  fprintf(f, "set key outside bottom center horizontal Left reverse maxrows 2 width 2\nset style fill solid 0.9 border rgb \"#404040\"\n");
  /* the key names only what is drawn: the states present, the request when there is one */
  int present[SEG_UNMAPPED + 1] = {0};
  uint64_t seg = 0, last = UINT64_MAX;
  for (size_t i = 0; i < st->nblocks; i++) {
    if (st->blocks[i].seg_addr != last) { seg++; last = st->blocks[i].seg_addr; }
    if (seg > nsegs) break;
    if ((int)st->blocks[i].state <= SEG_UNMAPPED) present[st->blocks[i].state] = 1;
  }
  fprintf(f, "plot dat");
  for (int s = 0; s <= SEG_UNMAPPED; s++) {
    if (s) fprintf(f, ", \\\n  ''");
    fprintf(f, " index %d using 2:1:3:(0.35) with boxxyerror lc rgb \"%s\" ", s, state_colour[s]);
    if (present[s]) fprintf(f, "title \"%s\"", state_label[s]);
    else fprintf(f, "notitle");
  }
  fprintf(f, ", \\\n  '' index 4 using 2:1:3:(0.35) with boxxyerror lc rgb \"%s\" %s\n", st->fits ? "#9467bd" : "#d62728",
          req ? "title \"the request (rounded)\"" : "notitle");
}

int explain_plot(const struct explain_state *st, const char *trace, const char *path, char *err) {
  char dat[OUTFILE_PATH_MAX + 16], gp[OUTFILE_PATH_MAX + 16];
  explain_plot_paths(path, dat, gp, sizeof dat);
  uint64_t nsegs = 0;
  double max_mib = 0;
  /* each file is written beside its target and renamed into place only when gnuplot
   * drew the picture (gnuplot_run.h): a failure leaves every existing file as it was */
  struct outfile od, og, op;
  FILE *fd = outfile_open(&od, dat, "the plot data");
  if (!fd) { snprintf(err, FB_ERRLEN, "%.150s: cannot write the plot data", dat); return 2; }
  write_data(st, fd, &nsegs, &max_mib);
  FILE *fg = outfile_open(&og, gp, "the gnuplot script");
  if (!fg) { outfile_abort(&od); snprintf(err, FB_ERRLEN, "%.150s: cannot write the gnuplot script", gp); return 2; }
  write_script(st, fg, trace, path, dat, gp, nsegs, max_mib);
  if (fflush(fd) || ferror(fd) || fflush(fg) || ferror(fg)) {
    outfile_abort(&od);
    outfile_abort(&og);
    snprintf(err, FB_ERRLEN, "%.150s: cannot write the plot data or its script", dat);
    return 2;
  }
  if (!outfile_open(&op, path, "the picture")) {
    outfile_abort(&od);
    outfile_abort(&og);
    snprintf(err, FB_ERRLEN, "%.150s: cannot write the picture", path);
    return 2;
  }
  const char *names[] = {"out", "dat"}, *values[] = {gnuplot_name(&op), gnuplot_name(&od)};
  char gerr[400];
  int rc = gnuplot_run(gnuplot_name(&og), names, values, 2, gerr, sizeof gerr);
  struct outfile *data[] = {&od, &og}, *all[] = {&od, &og, &op};
  if (rc == 1) {   /* no gnuplot: the data and the script are kept, to draw it later */
    outfile_abort(&op);
    if (gnuplot_finish(data, 2, 1)) { snprintf(err, FB_ERRLEN, "%.150s: cannot write the plot data", dat); return 2; }
    snprintf(err, FB_ERRLEN, "gnuplot is not installed: no picture (its data and script are in %.100s and %.100s; "
             "apt-get install gnuplot-nox, then gnuplot %.100s)", dat, gp, gp);
    return 1;
  }
  if (rc) {
    gnuplot_finish(all, 3, 0);
    snprintf(err, FB_ERRLEN, "%.300s drawing %.150s: no picture; any existing one is as it was", gerr, path);
    return 2;
  }
  if (gnuplot_finish(all, 3, 1)) { snprintf(err, FB_ERRLEN, "%.150s: cannot write the picture", path); return 2; }
  return 0;
}
