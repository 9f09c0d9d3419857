/* html_report.c - report.html (see html_report.h). An image line of report.md whose plot
 * has data in plots/data/ becomes a <figure class="chart"> the chart script draws;
 * explain's picture with its page beside it becomes that page (iframe srcdoc); any other
 * picture under the folder is inlined (base64); a missing one is said so. */
#include "html_report.h"
#include <stdlib.h>
#include <string.h>
#include "html_md.h"
#include "html_page.h"
#include "html_plots.h"

extern const char html_charts_js[];

/* the plot kinds (plots.txt's SCRIPT) html_charts.js draws; another kind's picture is inlined */
static const char *const drawn_kinds[] = {"dots", "latency", "tradeoff", "timeline", "capsweep", NULL};

/* plots: the JSON of every plot, to find names in; placed: the names report.md placed, "\n"-separated */
struct ctx { const char *dir; char *plots; char placed[8192]; };

static void chart(FILE *o, struct ctx *c, const char *name, const char *alt) {
  fputs("<figure class=\"chart\" data-plot=\"", o);
  html_text(o, name);
  fputs("\"><figcaption>", o);
  html_text(o, alt);
  fputs("</figcaption><div class=\"chartbody\"></div></figure>\n", o);
  size_t k = strlen(c->placed);
  snprintf(c->placed + k, sizeof c->placed - k, "%s\n", name);
}

static int placed(const struct ctx *c, const char *name) {
  size_t n = strlen(name);
  for (const char *p = c->placed; (p = strstr(p, name)); p += n)
    if ((p == c->placed || p[-1] == '\n') && p[n] == '\n') return 1;
  return 0;
}

/* the plots with data that report.md did not embed (no picture drawn: gnuplot missing),
 * drawn after it so that every plot is on the page */
static void unplaced(FILE *o, struct ctx *c) {
  int any = 0;
  for (const char *p = c->plots; p && (p = strstr(p, "{\"script\":\"")); p++) {
    const char *n = strstr(p, ",\"name\":\"");
    if (!n) break;
    int known = 0;
    for (int k = 0; drawn_kinds[k]; k++)
      known |= !strncmp(p + 11, drawn_kinds[k], strlen(drawn_kinds[k])) && p[11 + strlen(drawn_kinds[k])] == '"';
    n += 9;
    const char *e = strchr(n, '"');
    char name[600];
    snprintf(name, sizeof name, "%.*s", e ? (int)(e - n) : 0, n);
    if (!known || !name[0] || placed(c, name)) continue;
    if (!any++) fputs("<section class=\"extra\"><h2 id=\"more-plots\">More plots</h2>\n<p class=\"muted\">Drawn from the plot data "
                      "(plots/data/); report.md has no picture of them (gnuplot was not run: make plots draws them).</p>\n", o);
    chart(o, c, name, name);
  }
  if (any) fputs("</section>\n", o);
}

int html_report_plot_name(const char *src, char *name, size_t n) {
  if (strncmp(src, "plots/", 6) || strchr(src + 6, '/')) return -1;
  const char *dot = strrchr(src, '.');
  if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg"))) return -1;
  snprintf(name, n, "%.*s", (int)(dot - src - 6), src + 6);
  return name[0] ? 0 : -1;
}

static void base64(FILE *o, const unsigned char *s, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
    fputc(t[v >> 18 & 63], o);
    fputc(t[v >> 12 & 63], o);
    fputc(i + 1 < n ? t[v >> 6 & 63] : '=', o);
    fputc(i + 2 < n ? t[v & 63] : '=', o);
  }
}

static int image(void *vc, FILE *o, const char *alt, const char *src) {
  struct ctx *c = vc;
  char name[600], key[700], path[1800];
  if (!html_report_plot_name(src, name, sizeof name)) {
    /* a plot with data, of a kind the chart script draws */
    for (int k = 0; drawn_kinds[k]; k++) {
      snprintf(key, sizeof key, "{\"script\":\"%s\",\"name\":\"%s\"", drawn_kinds[k], name);
      if (c->plots && strstr(c->plots, key)) {
        chart(o, c, name, alt);
        return 1;
      }
    }
  }
  if (strstr(src, "..") || src[0] == '/' || strchr(src, ':')) return 0;   /* only pictures inside the folder */
  const char *dot = strrchr(src, '.');
  /* explain's picture, when the bench wrote its page too: the page itself, inline (an
   * iframe's srcdoc: every block to hover, nothing fetched), the picture dropped */
  if (!strncmp(src, "plots/explain-", 14) && dot) {
    char page[1200];
    snprintf(page, sizeof page, "%.*s.html", (int)(dot - src), src);
    snprintf(path, sizeof path, "%s/%s", c->dir, page);
    char *html = html_slurp(path, NULL);
    if (html && html[0]) {
      fputs("<figure class=\"picture explain\"><figcaption>", o);
      html_text(o, alt);
      fputs(" <span class=\"muted\">(fragbench explain --html: hover a block; on its own: <a href=\"", o);
      html_text(o, page);
      fputs("\">", o);
      html_text(o, page + 6);
      fputs("</a>)</span></figcaption><iframe class=\"explain\" title=\"", o);
      html_text(o, alt);
      fputs("\" srcdoc=\"", o);
      html_text(o, html);
      fputs("\"></iframe></figure>\n", o);
      free(html);
      return 1;
    }
    free(html);
  }
  snprintf(path, sizeof path, "%s/%s", c->dir, src);
  size_t n = 0;
  char *data = html_slurp(path, &n);
  if (!data || !n) { free(data); return 0; }
  const char *mime = dot && !strcmp(dot, ".svg") ? "image/svg+xml" : dot && (!strcmp(dot, ".jpg") || !strcmp(dot, ".jpeg")) ? "image/jpeg" : "image/png";
  fputs("<figure class=\"picture\"><figcaption>", o);
  html_text(o, alt);
  fprintf(o, "</figcaption><img alt=\"");
  html_text(o, alt);
  fprintf(o, "\" src=\"data:%s;base64,", mime);
  base64(o, (const unsigned char *)data, n);
  fputs("\">", o);
  free(data);
  fputs("</figure>\n", o);
  return 1;
}

static const char css[] =
  "header.top{position:sticky;top:0;z-index:5;background:rgba(247,248,250,.97);border-bottom:1px solid var(--line);padding:8px 24px}\n"
  "header.top h1{font-size:18px;margin:0}\n"
  "#strategies{display:flex;flex-wrap:wrap;gap:4px 14px;margin-top:6px;font-size:13px;align-items:center}\n"
  "#strategies label{cursor:pointer;white-space:nowrap}\n"
  "#strategies button,.clegend button{font:inherit;font-size:12.5px;border:1px solid var(--line);background:#fff;border-radius:4px;padding:1px 8px;cursor:pointer}\n"
  ".report{max-width:1180px;margin:0 auto;padding:8px 24px 60px}\n"
  ".report h1{font-size:22px;margin:14px 0 8px}.report h2{font-size:18px;margin:26px 0 8px;padding-bottom:3px;border-bottom:1px solid var(--line)}\n"
  ".tablewrap{overflow-x:auto;margin:8px 0 14px}\n"
  "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid var(--line);padding:3px 8px;vertical-align:top}\n"
  "th{background:var(--panel);text-align:left}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.mid,th.mid{text-align:center}\n"
  "tbody tr:nth-child(even){background:#fafbfc}tr.hid{display:none}\n"
  "code{background:#f1f3f5;border-radius:3px;padding:0 3px}\n"
  "figure{margin:12px 0 22px}figcaption{font-weight:600;margin-bottom:4px}\n"
  "figure.picture img{max-width:100%;border:1px solid var(--line)}\n"
  "iframe.explain{width:100%;height:760px;border:1px solid var(--line);border-radius:6px;background:#fff}\n"
  ".chart-svg{width:100%;height:auto;display:block;font-family:inherit}\n"
  ".chart-svg .grid{stroke:#e4e6ea;stroke-width:1}.chart-svg .axis{stroke:#555;stroke-width:1}\n"
  ".chart-svg .tick{font-size:12px;fill:#444}.chart-svg .alab{font-size:13px;fill:#222}\n"
  ".chart-svg .rowlab{font-size:12.5px;fill:#222}.chart-svg .rowsep{stroke:#eef0f2}\n"
  ".chart-svg .fail{fill:#b00020}.chart-svg .failcol{stroke:#f3c5cc;stroke-width:18;opacity:.35}\n"
  ".chart-svg .limit{stroke:#7b3294;stroke-width:2.5;stroke-dasharray:6 3}.chart-svg .capband{fill:#7b3294;opacity:.08}\n"
  ".chart-svg .one{stroke:#333;stroke-dasharray:4 3;stroke-width:1}\n"
  ".chart-svg .tline{fill:none;stroke-width:1.8}.chart-svg .tline.req{stroke-width:1.5;stroke-dasharray:5 3}.chart-svg .tline.thin{stroke-width:1.3;opacity:.8}\n"
  ".chart-svg .whisker{stroke:#222;stroke-width:1.2;fill:none}\n"
  ".chart-svg .cursor{stroke:#555;stroke-dasharray:3 3}\n"
  ".chart-svg .mark{cursor:pointer}.chart-svg .mark:hover{stroke:#000;stroke-width:2}\n"
  ".clegend{display:flex;flex-wrap:wrap;gap:4px 8px;margin-top:4px;font-size:12.5px}\n"
  ".clegend .lg.off{opacity:.4;text-decoration:line-through}.clegend .static{padding:1px 4px}\n"
  ".missing{color:var(--muted);font-style:italic}\n";

void html_report_write(FILE *o, const struct run_folder *f, const char *dir, const char *title, const char *md) {
  char t[600], datadir[1200];
  snprintf(t, sizeof t, "fragbench report: %s", title);
  snprintf(datadir, sizeof datadir, "%s/plots/data", dir);
  /* the plot data first, into memory: the images look their names up in it */
  char *plots = NULL;
  size_t plen = 0;
  FILE *m = open_memstream(&plots, &plen);
  if (m) { html_plots_json(m, datadir); fclose(m); }
  html_begin(o, t, css);
  fputs("<header class=\"top\"><h1>", o);
  html_text(o, t);
  fputs("</h1><div id=\"strategies\"><span class=\"muted\">strategies (click to hide or show in every chart and table):</span>"
        "<button type=\"button\" id=\"allon\">show all</button></div></header>\n<main class=\"report\">\n", o);
  struct ctx c = {.dir = dir, .plots = plots};
  html_md(o, md, image, &c);
  unplaced(o, &c);
  fputs("</main>\n<script type=\"application/json\" id=\"fb-plots\">", o);
  fputs(plots ? plots : "[]", o);
  fputs("</script>\n<script type=\"application/json\" id=\"fb-strategies\">[", o);
  for (int s = 0; s < f->ns_cells; s++) {
    fprintf(o, "%s{\"name\":", s ? "," : "");
    html_json_string(o, f->strategy[s]);
    fprintf(o, ",\"color\":%d}", s + 1);
  }
  fputs("]</script>\n", o);
  html_end(o, html_charts_js);
  free(plots);
}
