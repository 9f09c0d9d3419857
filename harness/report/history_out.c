/* history_out.c - `fragbench history`'s outputs (history.h has the rows and the rule):
 * one markdown table per workload (runs down, strategies across, the largest step in
 * bold, its sentence under it, the picture linked) and one gnuplot picture per workload
 * (plots/history.gp), each written whole or not at all (gnuplot_run.h). */
#include "history_out.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gnuplot_run.h"
#include "outfile.h"
#include "params.h"

void history_slug(const struct history *h, int w, char *out, size_t n) {
  size_t k = 0;
  for (const char *p = h->workload[w]; *p && k + 1 < n && k < 80; p++)
    out[k++] = (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p)) ? *p : '_';
  out[k] = 0;
  int same = 0;   /* an earlier workload with the same slug: -2, -3 ... */
  for (int v = 0; v < w; v++) {
    char o[96];
    size_t j = 0;
    for (const char *p = h->workload[v]; *p && j + 1 < sizeof o && j < 80; p++)
      o[j++] = (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p)) ? *p : '_';
    o[j] = 0;
    if (!strcmp(o, out)) same++;
  }
  if (same) snprintf(out + k, n - k, "-%d", same + 1);
}

static void md_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else if (*s == '\n') fputc(' ', f);
    else fputc(*s, f);
  }
}

void history_markdown(const struct history *h, FILE *f, const char *plot_prefix) {
  char line[1200], a[32], b[32];
  history_order_sentence(h, line, sizeof line);
  fprintf(f, "## Peak reserved across runs\n\n%s; per workload, each strategy's peak reserved (uncapped) and, where "
          "mincap.csv has it, the smallest cap that completes; the largest step in bold.\n\n", line);
  for (int w = 0; w < h->nw; w++) {
    struct history_step st;
    history_step(h, w, &st);
    fputs("### ", f);
    md_text(f, h->workload[w]);
    fputs("\n\n| # | run | committed | benched |", f);
    for (int s = 0; s < h->ns; s++) { fputc(' ', f); md_text(f, h->strategy[s]); fputs(" |", f); }
    fputs("\n|---:|---|---|---|", f);
    for (int s = 0; s < h->ns; s++) fputs("---:|", f);
    fputc('\n', f);
    for (int r = 0; r < h->nruns; r++) {
      const struct history_run *run = &h->run[r];
      fprintf(f, "| %d | ", r + 1);
      md_text(f, run->label);
      fputs(" | ", f);
      md_text(f, run->commit_date[0] ? run->commit_date : "-");
      fputs(" | ", f);
      md_text(f, run->date[0] ? run->date : "-");
      fputs(" |", f);
      for (int s = 0; s < h->ns; s++) {
        const struct history_point *p = history_at(h, w, s, r);
        fputc(' ', f);
        int bold = st.found && st.s == s && st.to == r;
        if (!p->has && !p->has_mincap) fputs("-", f);
        else {
          if (bold) fputs("**", f);
          if (!p->has) fputs("-", f);
          else if (!p->completed) { fputs("died: ", f); md_text(f, p->status); }
          else fputs(fmt_bytes(p->peak, a, sizeof a), f);
          if (bold) {
            char d[40];
            fmt_bytes(st.after > st.before ? st.after - st.before : st.before - st.after, b, sizeof b);
            snprintf(d, sizeof d, " (%s%s)", st.after > st.before ? "+" : "-", b);
            fputs(d, f);
            fputs("**", f);
          }
          if (p->has_mincap) fprintf(f, ", mincap %s", fmt_bytes(p->mincap, a, sizeof a));
        }
        fputs(" |", f);
      }
      fputc('\n', f);
    }
    history_sentence(h, w, line, sizeof line);
    fputc('\n', f);
    md_text(f, line);
    fputs("\n\n", f);
    if (plot_prefix) {
      char slug[100];
      history_slug(h, w, slug, sizeof slug);
      fprintf(f, "![peak reserved across runs: ");
      md_text(f, h->workload[w]);
      fprintf(f, "](%shistory-%s.png)\n\n", plot_prefix, slug);
    }
  }
}

static void gib(FILE *f, int has, uint64_t v) {
  if (has) fprintf(f, "\t%.6f", (double)v / (double)(1ull << 30));
  else fputs("\t?", f);
}

static void gp_text(FILE *f, const char *s) {   /* inside a gnuplot "string" */
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s == '\n' ? ' ' : *s, f);
  }
}

/* one workload's picture: 0 drawn, 1 no gnuplot (data kept), 2 a failure (message said) */
static int plot_one(const struct history *h, int w, const char *dir, const char *fmt) {
  char slug[100], png[1200], dat[1300], meta[1300];
  history_slug(h, w, slug, sizeof slug);
  snprintf(png, sizeof png, "%s/history-%s.%s", dir, slug, fmt);
  snprintf(dat, sizeof dat, "%s.dat", png);
  snprintf(meta, sizeof meta, "%s.meta.gp", png);
  struct outfile od, om, op;
  FILE *d = outfile_open(&od, dat, "the plot data"), *m = d ? outfile_open(&om, meta, "the plot data") : NULL;
  if (!d || !m) {
    if (d) outfile_abort(&od);
    return 2;
  }
  for (int r = 0; r < h->nruns; r++) {
    fprintf(d, "%d\t", r + 1);
    for (const char *p = h->run[r].label; *p; p++) fputc(*p == '\t' || *p == '\n' ? ' ' : *p, d);
    for (int s = 0; s < h->ns; s++) {
      const struct history_point *p = history_at(h, w, s, r);
      gib(d, p->has && p->completed, p->peak);
    }
    for (int s = 0; s < h->ns; s++) {
      const struct history_point *p = history_at(h, w, s, r);
      gib(d, p->has_mincap, p->mincap);
    }
    fputc('\n', d);
  }
  fprintf(m, "n = %d\nruns = %d\narray names[%d]\n", h->ns, h->nruns, h->ns);
  int nm = 0;
  for (int s = 0; s < h->ns; s++) {
    fprintf(m, "names[%d] = \"", s + 1);
    gp_text(m, h->strategy[s]);
    fputs("\"\n", m);
    for (int r = 0; r < h->nruns; r++) if (history_at(h, w, s, r)->has_mincap) { nm++; break; }
  }
  fprintf(m, "nm = %d\narray mi[%d]\n", nm, nm ? nm : 1);
  for (int s = 0, j = 0; s < h->ns; s++)
    for (int r = 0; r < h->nruns; r++)
      if (history_at(h, w, s, r)->has_mincap) { fprintf(m, "mi[%d] = %d\n", ++j, s + 1); break; }
  fputs("workload = \"", m);
  gp_text(m, h->workload[w]);
  fputs("\"\n", m);
  struct history_step st;
  history_step(h, w, &st);
  fprintf(m, "has_step = %d\n", st.found);
  if (st.found) {
    char a[32];
    fmt_bytes(st.after > st.before ? st.after - st.before : st.before - st.after, a, sizeof a);
    fprintf(m, "sx0 = %d\nsy0 = %.6f\nsx1 = %d\nsy1 = %.6f\nslabel = \"", st.from + 1, (double)st.before / (double)(1ull << 30),
            st.to + 1, (double)st.after / (double)(1ull << 30));
    char lab[300];
    snprintf(lab, sizeof lab, "%s %s%s at %s", h->strategy[st.s], st.after > st.before ? "+" : "-", a, h->run[st.to].label);
    gp_text(m, lab);
    fputs("\"\n", m);
  }
  if (fflush(d) || ferror(d) || fflush(m) || ferror(m)) {
    fprintf(stderr, "fragbench history: %s: cannot write the plot data\n", dat);
    outfile_abort(&od);
    outfile_abort(&om);
    return 2;
  }
  const char *gpdir = getenv("FB_PLOTS_DIR") ? getenv("FB_PLOTS_DIR") : "plots";
  char script[1100], err[400];
  snprintf(script, sizeof script, "%s/history.gp", gpdir);
  int rc = gnuplot_draw(script, gpdir, fmt, png, &od, &om, &op, err, sizeof err);
  if (rc == 3) fprintf(stderr, "fragbench history: %s (%s) drawing %s: no picture; any existing one is as it was\n", err, script, png);
  return rc == 3 ? 2 : rc;
}

int history_plots(const struct history *h, const char *dir, const char *fmt, int *drawn) {
  int worst = 0, nogp = 0;
  *drawn = 0;
  for (int w = 0; w < h->nw; w++) {
    int rc = plot_one(h, w, dir, fmt);
    if (rc == 0) (*drawn)++;
    else if (rc == 1) nogp = 1;
    else worst = 2;
  }
  if (nogp) fprintf(stderr, "fragbench history: gnuplot is not installed: no pictures (their data in %s; apt-get install gnuplot-nox)\n", dir);
  return worst;
}
