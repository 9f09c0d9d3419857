/* html_explain.c - the page of `fragbench explain --html` (see html_explain.h). The SVG
 * is written here, block by block, so the page shows everything without its script; the
 * script only adds the hover (from the blocks' data-* attributes and the stacks table,
 * each distinct stack written once) and the choice of scale: one for every segment (of
 * every strategy: the default), one per strategy, or each segment across the full
 * width. A segment's row spans its extent: up to the end of its last mapped block; a
 * trailing unmapped range (expandable segments reserve a large virtual range) is drawn
 * cut to a tenth of that, marked, its size in the hover. */
#include "html_explain.h"
#include <stdlib.h>
#include <string.h>
#include "html_page.h"

#define KIB 1024.0

size_t html_explain_blocks(const struct explain_state *st) { return st->has_segments ? st->nblocks : 0; }

/* the row of one segment: blocks [i, j) */
struct row { size_t i, j; uint64_t mapped_end, tail; double drawn; };

static size_t rows_of(const struct explain_state *st, struct row **out) {
  size_t n = 0, cap = 0;
  struct row *r = NULL;
  for (size_t i = 0; st->has_segments && i < st->nblocks;) {
    size_t j = i;
    while (j < st->nblocks && st->blocks[j].seg_addr == st->blocks[i].seg_addr) j++;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      struct row *m = realloc(r, cap * sizeof *r);
      if (!m) break;
      r = m;
    }
    const struct seg_block *last = &st->blocks[j - 1];
    uint64_t end = last->addr - last->seg_addr + last->size;
    uint64_t tail = last->state == SEG_UNMAPPED && j - 1 > i ? last->size : 0;
    struct row x = {i, j, end - tail, tail, 0};
    double cut = (double)x.mapped_end / 10;
    x.drawn = (double)x.mapped_end + (tail ? ((double)tail < cut ? (double)tail : cut) : 0);
    if (x.drawn <= 0) x.drawn = (double)last->seg_size;
    r[n++] = x;
    i = j;
  }
  *out = r;
  return n;
}

/* the stacks, each distinct one once: ids[p][i] indexes the table (-1: none) */
struct stack_ref { const char *s; int p; size_t i; };
static int by_text(const void *a, const void *b) { return strcmp(((const struct stack_ref *)a)->s, ((const struct stack_ref *)b)->s); }

static const char **stack_table(const struct html_explain_panel *p, int n, int **ids, size_t *nt) {
  size_t total = 0, k = 0;
  for (int q = 0; q < n; q++) {
    ids[q] = malloc((p[q].st->nblocks + 1) * sizeof **ids);
    for (size_t i = 0; ids[q] && i < p[q].st->nblocks; i++) ids[q][i] = -1;
    if (p[q].st->block_frames)
      for (size_t i = 0; i < p[q].st->nblocks; i++) total += p[q].st->block_frames[i] != NULL;
  }
  struct stack_ref *r = total ? malloc(total * sizeof *r) : NULL;
  const char **t = total ? malloc(total * sizeof *t) : NULL;
  *nt = 0;
  if (!r || !t) { free(r); free(t); return NULL; }
  for (int q = 0; q < n; q++)
    for (size_t i = 0; p[q].st->block_frames && i < p[q].st->nblocks; i++)
      if (p[q].st->block_frames[i]) r[k++] = (struct stack_ref){p[q].st->block_frames[i], q, i};
  qsort(r, k, sizeof *r, by_text);
  for (size_t i = 0; i < k; i++) {
    if (!*nt || strcmp(t[*nt - 1], r[i].s)) t[(*nt)++] = r[i].s;
    if (ids[r[i].p]) ids[r[i].p][r[i].i] = (int)(*nt - 1);
  }
  free(r);
  return t;
}

void html_explain_verdict(const struct explain_state *st, char *out, size_t n) {
  char a[32], b[32];
  if (!st->has_request) { snprintf(out, n, "no request at this moment (its peak)"); return; }
  if (st->fits) {
    snprintf(out, n, "fits: %s places it %s", st->allocator, st->largest_free >= st->rounded ? "in a free block" : "in a new segment");
    return;
  }
  if (st->largest_free >= st->rounded)
    snprintf(out, n, "does not fit: a free block is large enough, but %s does not take it for this request (max_split_size or the oversize rule)",
             st->allocator);
  else
    snprintf(out, n, "does not fit: the largest free block (%s) is %s short of the rounded request", fmt_bytes(st->largest_free, a, sizeof a),
             fmt_bytes(st->rounded - st->largest_free, b, sizeof b));
}

static void bar_row(FILE *o, const char *label, const char *cls, double frac, const char *value) {
  if (frac < 0) frac = 0;
  if (frac > 1) frac = 1;
  fprintf(o, "<div class=\"frow\"><span class=\"flab\">%s</span><span class=\"track\"><span class=\"fbar %s\" style=\"width:%.3f%%\"></span></span>"
          "<span class=\"fval\">%s</span></div>\n", label, cls, frac * 100, value);
}

/* the request against the largest free block, and reserved + its new segment against the cap */
static void fit_box(FILE *o, const struct explain_state *st) {
  char a[32], b[32], c[32], v[400];
  html_explain_verdict(st, v, sizeof v);
  fputs("<div class=\"fitbox\">\n<h3>The request against the largest free block</h3>\n", o);
  double m = (double)(st->rounded > st->largest_free ? st->rounded : st->largest_free);
  if (m <= 0) m = 1;
  bar_row(o, "request (rounded)", st->fits ? "fits" : "req", (double)st->rounded / m, fmt_bytes(st->rounded, a, sizeof a));
  bar_row(o, "largest free block", "free", (double)st->largest_free / m, fmt_bytes(st->largest_free, a, sizeof a));
  if (st->cap && !st->fits) {
    double t = (double)(st->reserved + st->segment > st->cap ? st->reserved + st->segment : st->cap);
    fprintf(o, "<div class=\"frow\"><span class=\"flab\">reserved + new segment</span><span class=\"track\">"
            "<span class=\"fbar res\" style=\"width:%.3f%%\"></span><span class=\"fbar newseg\" style=\"left:%.3f%%;width:%.3f%%\"></span>"
            "<span class=\"capline\" style=\"left:%.3f%%\"></span></span><span class=\"fval\">%s + %s vs cap %s</span></div>\n",
            st->reserved / t * 100, st->reserved / t * 100, st->segment / t * 100, st->cap / t * 100, fmt_bytes(st->reserved, a, sizeof a),
            fmt_bytes(st->segment, b, sizeof b), fmt_bytes(st->cap, c, sizeof c));
  }
  fprintf(o, "<div class=\"verdict %s\">", st->fits ? "ok" : "bad");
  html_text(o, v);
  fputs("</div>\n", o);
  if (st->at_oom && st->info.oom_frames[0]) {
    fputs("<details class=\"reqstack\"><summary>the request's stack, as the snapshot holds it</summary><pre>", o);
    for (const char *f = st->info.oom_frames; *f;) {
      const char *e = strstr(f, "; ");
      size_t len = e ? (size_t)(e - f) : strlen(f);
      html_text_n(o, f, len);
      fputc('\n', o);
      f = e ? e + 2 : f + len;
    }
    fputs("</pre></details>\n", o);
  }
  fputs("</div>\n", o);
}

static double pct(double x, double scale) { return scale > 0 ? x / scale * 100 : 100.0; }

/* scale: the widest segment of every panel; own: of this panel */
static void segment_rows(FILE *o, const struct explain_state *st, int q, const int *ids, const struct row *r, size_t nr, double scale,
                         double own) {
  char a[32], b[32];
  int marked = 0;   /* the largest free block: the first free piece of its size */
  for (size_t s = 0; s < nr; s++) {
    const struct seg_block *b0 = &st->blocks[r[s].i];
    uint64_t used = 0;
    for (size_t k = r[s].i; k < r[s].j; k++) used += st->blocks[k].state == SEG_ALLOCATED ? st->blocks[k].size : 0;
    fprintf(o, "<div class=\"seg segment\" data-seg=\"%zu\" data-addr=\"%#llx\" data-size=\"%llu\" data-nblocks=\"%zu\">"
            "<div class=\"sl\" title=\"segment #%zu at %#llx: %s%s, %s pool, stream %llu, %s allocated in %zu block%s\"><b>#%zu</b> %s"
            " <span class=\"muted\">%s s%llu</span></div>", s + 1, (unsigned long long)b0->seg_addr,
            (unsigned long long)b0->seg_size, r[s].j - r[s].i, s + 1, (unsigned long long)b0->seg_addr, fmt_bytes(r[s].mapped_end, a, sizeof a),
            r[s].tail ? " mapped" : "", b0->small_pool ? "small" : "large", (unsigned long long)b0->stream, fmt_bytes(used, b, sizeof b),
            r[s].j - r[s].i, r[s].j - r[s].i == 1 ? "" : "s", s + 1, fmt_bytes(r[s].mapped_end, a, sizeof a),
            b0->small_pool ? "small" : "large", (unsigned long long)b0->stream);
    fprintf(o, "<svg class=\"bar\" viewBox=\"0 0 %.3f 10\" preserveAspectRatio=\"none\" style=\"width:%.4f%%\" data-w=\"%.4f\" data-wp=\"%.4f\">",
            r[s].drawn / KIB, pct(r[s].drawn, scale), pct(r[s].drawn, scale), pct(r[s].drawn, own));
    for (size_t k = r[s].i; k < r[s].j; k++) {
      const struct seg_block *b = &st->blocks[k];
      uint64_t off = b->addr - b->seg_addr;
      double w = (double)b->size;
      int cut = k == r[s].j - 1 && r[s].tail;
      if (cut) w = r[s].drawn - (double)r[s].mapped_end;
      int largest = !marked && st->largest_free && b->size == st->largest_free && (b->state == SEG_FREE || b->state == SEG_INACTIVE_SPLIT);
      marked |= largest;
      fprintf(o, "<rect class=\"block s-%s%s%s\" x=\"%.3f\" y=\"0\" width=\"%.3f\" height=\"10\" data-p=\"%d\" data-seg=\"%zu\" data-off=\"%llu\""
              " data-size=\"%llu\" data-req=\"%llu\" data-state=\"%s\" data-stream=\"%llu\" data-pool=\"%s\" data-f=\"%d\"",
              explain_state_name(b->state), largest ? " largest" : "", cut ? " cut" : "", (double)off / KIB, w / KIB, q, s + 1,
              (unsigned long long)off, (unsigned long long)b->size, (unsigned long long)(b->state == SEG_ALLOCATED ? b->requested : 0),
              explain_state_name(b->state), (unsigned long long)b->stream, b->small_pool ? "small" : "large", ids ? ids[k] : -1);
      if (st->block_id && st->block_id[k]) fprintf(o, " data-id=\"%#llx\"", (unsigned long long)st->block_id[k]);
      fputs("/>", o);
    }
    fputs("</svg></div>\n", o);
  }
}

/* the request as a row above the segments, on their scale (cut at the edge when wider
 * than the widest), beside the largest free block */
static void request_row(FILE *o, const struct explain_state *st, double scale, double own) {
  char a[32], b[32];
  double w = pct((double)st->rounded, scale), wp = pct((double)st->rounded, own);
  fprintf(o, "<div class=\"reqrow\"><div class=\"sl\"><b>request</b> %s</div><div class=\"reqtrack\">"
          "<span class=\"reqbar %s%s\" style=\"width:%.4f%%\" data-w=\"%.4f\" data-wp=\"%.4f\"></span>"
          "<span class=\"reqlab%s\" style=\"left:calc(%.4f%% + 6px)\">%s%s &middot; largest free block %s</span></div></div>\n",
          fmt_bytes(st->rounded, a, sizeof a), st->fits ? "fits" : "req", w > 100 ? " cut" : "", w > 100 ? 100 : w, w > 100 ? 100 : w,
          wp > 100 ? 100 : wp, w > 55 ? " in" : "", w > 55 ? 0.0 : w, st->fits ? "fits" : "does not fit",
          w > 100 ? " (cut: wider than any segment)" : "", fmt_bytes(st->largest_free, b, sizeof b));
}

static void moment(FILE *o, const struct explain_state *st) {
  char a[32];
  if (st->at_peak) fprintf(o, "at its peak reserved (before event %lld of %llu)", (long long)st->event, (unsigned long long)st->events);
  else fprintf(o, "before event %lld of %llu%s", (long long)st->event, (unsigned long long)st->events, st->at_oom ? " (PyTorch's OOM)" : "");
  if (st->cap) fprintf(o, " &middot; cap %s (%s)", fmt_bytes(st->cap, a, sizeof a), st->cap_source ? st->cap_source : "given");
  else fputs(" &middot; no cap", o);
}

static void panel(FILE *o, const struct html_explain_panel *p, int q, const int *ids, double scale, int solo) {
  const struct explain_state *st = p->st;
  char a[32], b[32], c[32], d[32];
  struct row *r = NULL;
  size_t nr = rows_of(st, &r);
  fprintf(o, "<section class=\"panel\" data-strategy=\"");
  html_text(o, st->allocator);
  fprintf(o, "\" data-nsegments=\"%zu\" data-nblocks=\"%zu\" data-event=\"%lld\">\n<h2>", nr, html_explain_blocks(st), (long long)st->event);
  html_text(o, st->allocator);
  fputs(" <span class=\"muted\">(", o);
  html_text(o, st->params[0] ? st->params : "defaults");
  fputs(")</span></h2>\n<div class=\"moment muted\">", o);
  moment(o, st);
  fprintf(o, "</div>\n<div class=\"totals\"><span><b>%s</b> reserved</span><span><b>%s</b> allocated</span>"
          "<span><b>%s</b> free inside reserved%s</span><span><b>%s</b> largest free block</span></div>\n",
          fmt_bytes(st->reserved, a, sizeof a), fmt_bytes(st->allocated, b, sizeof b), fmt_bytes(st->free_inside, c, sizeof c),
          st->has_segments ? "" : "", fmt_bytes(st->largest_free, d, sizeof d));
  fprintf(o, "<div class=\"body%s\">\n<div class=\"drawing\">\n", solo ? " solo" : "");
  if (st->has_request) fit_box(o, st);
  if (st->has_segments) {
    fprintf(o, "<h3>Segments <span class=\"muted\">%zu segment%s, %zu block%s, address order; hover a block</span></h3>\n<div class=\"segs\">\n",
            nr, nr == 1 ? "" : "s", html_explain_blocks(st), html_explain_blocks(st) == 1 ? "" : "s");
    double own = 0;
    for (size_t k = 0; k < nr; k++) if (r[k].drawn > own) own = r[k].drawn;
    if (st->has_request) request_row(o, st, scale, own);
    segment_rows(o, st, q, ids, r, nr, scale, own);
    fputs("</div>\n", o);
  } else {
    fputs("<p class=\"noseg\">The segment view is not available for ", o);
    html_text(o, st->allocator);
    fputs(": only caching and expandable list their segments (the totals above stand).</p>\n", o);
  }
  fputs("</div>\n<div class=\"side\">\n<div class=\"details\"><span class=\"muted\">Hover a block: its size, state, stream and the stack that allocated it.</span></div>\n", o);
  fprintf(o, "<h3>%s</h3>\n<pre class=\"why\">", st->has_request && !st->fits ? "Why nothing fit" : "What explain says");
  html_text(o, p->text ? p->text : "");
  fputs("</pre>\n</div>\n</div>\n</section>\n", o);
  free(r);
}

static const char css[] =
  "header{padding:14px 22px 10px;border-bottom:1px solid var(--line);background:var(--panel)}\n"
  ".legend{display:flex;flex-wrap:wrap;gap:6px 18px;margin-top:8px;font-size:13px}\n"
  ".legend label{cursor:pointer}\n"
  ".panels{display:flex;gap:16px;padding:14px 22px;align-items:flex-start;overflow-x:auto}\n"
  ".panel{flex:1 1 0;min-width:560px;border:1px solid var(--line);border-radius:8px;padding:10px 14px 14px;background:#fff}\n"
  ".panel h2{margin:2px 0}\n"
  ".totals{display:flex;flex-wrap:wrap;gap:4px 18px;margin:8px 0 4px;font-size:13.5px}\n"
  ".body{display:flex;flex-direction:column;gap:10px}\n"
  ".body .side{order:2}\n"
  ".body.solo{display:grid;grid-template-columns:minmax(0,3fr) minmax(340px,2fr);gap:18px}\n"
  ".body.solo .side{order:0}\n"
  ".multi .segs{max-height:56vh}\n"
  ".segs{max-height:72vh;overflow:auto;border:1px solid var(--line);border-radius:6px;padding:4px 8px;background:#fff}\n"
  ".seg{display:grid;grid-template-columns:190px minmax(0,1fr);align-items:center;min-height:22px;border-bottom:1px solid #f0f1f3}\n"
  ".sl{font-size:12.5px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;padding-right:8px}\n"
  "svg.bar{display:block;height:16px;min-width:2px;overflow:visible}\n"
  "rect.block{stroke:#fff;stroke-width:1px;vector-effect:non-scaling-stroke;cursor:crosshair}\n"
  "rect.block:hover,rect.block.hl{stroke:#111;stroke-width:2px}\n"
  "rect.largest{stroke:#111;stroke-width:2.5px;stroke-dasharray:4 2}\n"
  "rect.cut{opacity:.55}\n"
  ".s-allocated{fill:var(--alloc)}.s-free{fill:var(--free)}.s-inactive{fill:var(--inactive)}.s-unmapped{fill:var(--unmapped)}\n"
  ".hide-allocated rect.s-allocated,.hide-free rect.s-free,.hide-inactive rect.s-inactive,.hide-unmapped rect.s-unmapped{fill-opacity:.12}\n"
  ".reqrow{display:grid;grid-template-columns:190px minmax(0,1fr);align-items:center;min-height:24px;position:sticky;top:0;z-index:1;"
  "background:#fff;border-bottom:2px solid var(--line)}\n"
  ".reqtrack{position:relative;height:16px;overflow:hidden}\n"
  ".reqbar{position:absolute;left:0;top:0;bottom:0;min-width:2px;border-radius:2px}.reqbar.req{background:var(--req)}.reqbar.fits{background:var(--fits)}\n"
  ".reqbar.cut{background:repeating-linear-gradient(90deg,var(--req) 0 92%,#fff 92% 94%,var(--req) 94% 96%,#fff 96% 98%,var(--req) 98%)}\n"
  ".reqlab{position:absolute;top:0;right:4px;font-size:12px;line-height:16px;color:#333;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}.reqlab.in{color:#fff;text-shadow:0 0 2px #000}\n"
  ".fitbox{border:1px solid var(--line);border-radius:6px;padding:6px 10px 8px;background:var(--panel)}\n"
  ".fitbox h3{margin:2px 0 6px}\n"
  ".frow{display:grid;grid-template-columns:170px minmax(0,1fr) 210px;align-items:center;gap:8px;margin:3px 0;font-size:13px}\n"
  ".track{position:relative;height:16px;background:#eceef1;border-radius:3px;overflow:hidden}\n"
  ".fbar{position:absolute;top:0;bottom:0;left:0}\n"
  ".fbar.req{background:var(--req)}.fbar.fits{background:var(--fits)}.fbar.free{background:var(--free)}\n"
  ".fbar.res{background:var(--alloc)}.fbar.newseg{background:repeating-linear-gradient(45deg,var(--req) 0 5px,#f4a3a3 5px 9px)}\n"
  ".capline{position:absolute;top:-2px;bottom:-2px;width:2px;background:#111}\n"
  ".verdict{margin-top:6px;font-weight:600}.verdict.bad{color:#b00020}.verdict.ok{color:#2d6a1f}\n"
  ".reqstack pre{margin:4px 0 0;white-space:pre-wrap;word-break:break-all}\n"
  ".details{border:1px solid var(--line);border-radius:6px;padding:8px 10px;min-height:64px;background:#fffef6;font-size:13px}\n"
  ".details .fr,#fbtip .fr{max-height:260px;overflow:auto}\n"
  "pre.why{white-space:pre-wrap;word-break:break-word;background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin:0;max-height:60vh;overflow:auto}\n"
  ".noseg{color:var(--muted)}\n";

static const char js[] =
  "var FB_STACKS=JSON.parse(document.getElementById('fb-stacks').textContent);\n"
  "/* a stack, innermost first: the Python frames (file.py:line) lead when there are any, the\n"
  "   others after them (the tooltip: the first 14 lines; the panel: all) */\n"
  "function stackHtml(t,full){var fr=t.split('; '),py=fr.filter(function(x){return /\\.py:\\d+\\)$/.test(x);}),\n"
  " rest=fr.filter(function(x){return !/\\.py:\\d+\\)$/.test(x);}),l=py.concat(rest),n=full?l.length:Math.min(l.length,14);\n"
  " var s='<div class=\"fr\"><b>allocated at</b> <span class=\"muted\">('+(py.length?py.length+' Python frame'+(py.length>1?'s':'')+' first, then ':'')+rest.length+' other'+(rest.length==1?'':'s')+')</span>\\n'+fbEsc(l.slice(0,n).join('\\n'));\n"
  " if(n<l.length)s+='\\n... '+(l.length-n)+' more (all of them in the panel)';return s+'</div>';}\n"
  "function blockHtml(r,full){var d=r.dataset,s='<b>'+fbBytes(d.size)+' '+fbEsc(d.state)+'</b> <span class=\"muted\">('+Number(d.size).toLocaleString('en-US')+' bytes)</span>';\n"
  " if(r.classList.contains('cut'))s+=' <span class=\"muted\">(drawn cut)</span>';\n"
  " s+='<br>size '+fbBytes(d.size)+' &middot; state '+fbEsc(d.state)+' &middot; stream '+fbEsc(d.stream)+' &middot; '+fbEsc(d.pool)+' pool';\n"
  " s+='<br>segment #'+fbEsc(d.seg)+' at offset '+fbBytes(d.off);\n"
  " if(d.state==='allocated'){s+='<br>requested '+fbBytes(d.req);if(d.id)s+=' &middot; trace address '+fbEsc(d.id);}\n"
  " if(r.classList.contains('largest'))s+='<br><b>the largest free block</b>';\n"
  " var f=Number(d.f);\n"
  " if(f>=0)s+=stackHtml(FB_STACKS[f],full);\n"
  " else if(d.state==='allocated')s+='<div class=\"muted\">no stack recorded for this block</div>';\n"
  " return s;}\n"
  "document.addEventListener('mouseover',function(e){var r=e.target.closest&&e.target.closest('rect.block');if(!r)return;\n"
  " var p=r.closest('.panel');if(p)p.querySelector('.details').innerHTML=blockHtml(r,1);fbTip(e,blockHtml(r,0));});\n"
  "document.addEventListener('mousemove',function(e){var r=e.target.closest&&e.target.closest('rect.block');if(r)fbTip(e,blockHtml(r,0));else fbHide();});\n"
  "document.getElementById('scale').addEventListener('change',function(e){var m=e.target.value;\n"
  " document.querySelectorAll('svg.bar').forEach(function(b){b.style.width=m==='fit'?'100%':b.dataset[m]+'%';});\n"
  " document.querySelectorAll('.reqbar').forEach(function(b){var w=b.dataset[m==='fit'?'w':m],l=b.parentNode.querySelector('.reqlab');\n"
  "  b.style.width=w+'%';l.classList.toggle('in',w>55);l.style.left='calc('+(w>55?0:w)+'% + 6px)';});});\n"
  "document.querySelectorAll('.legend input[data-state]').forEach(function(c){c.addEventListener('change',function(){\n"
  " document.body.classList.toggle('hide-'+c.dataset.state,!c.checked);});});\n";

void html_explain_write(FILE *o, const char *trace, const struct html_explain_panel *p, int n) {
  const char *base = strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace;
  char title[600];
  snprintf(title, sizeof title, "fragbench explain: %s", base);
  html_begin(o, title, css);
  int **ids = calloc((size_t)(n > 0 ? n : 1), sizeof *ids);
  size_t nt = 0;
  const char **stacks = ids ? stack_table(p, n, ids, &nt) : NULL;
  double scale = 0;   /* one scale for every panel: the widest segment's drawn extent */
  for (int q = 0; q < n; q++) {
    struct row *r = NULL;
    size_t nr = rows_of(p[q].st, &r);
    for (size_t s = 0; s < nr; s++) if (r[s].drawn > scale) scale = r[s].drawn;
    free(r);
  }
  fputs("<header>\n<h1>Memory at one moment: ", o);
  html_text(o, base);
  fputs("</h1>\n<div class=\"muted\">", o);
  html_text(o, trace);
  if (n > 0) { fputs(" &middot; ", o); moment(o, p[0].st); }
  if (n > 1) fprintf(o, " &middot; %d strategies side by side, one scale", n);
  fprintf(o, "</div>\n<div class=\"legend\">"
        "<label><input type=\"checkbox\" checked data-state=\"allocated\"><span class=\"sw\" style=\"background:var(--alloc)\"></span>allocated</label>"
        "<label><input type=\"checkbox\" checked data-state=\"free\"><span class=\"sw\" style=\"background:var(--free)\"></span>free (a wholly free segment: releasable)</label>"
        "<label><input type=\"checkbox\" checked data-state=\"inactive\"><span class=\"sw\" style=\"background:var(--inactive)\"></span>inactive (free piece of a split segment)</label>"
        "<label><input type=\"checkbox\" checked data-state=\"unmapped\"><span class=\"sw\" style=\"background:var(--unmapped)\"></span>unmapped</label>"
        "<span><span class=\"sw\" style=\"background:#fff;border:2px dashed #111\"></span>the largest free block</span>"
        "<span><span class=\"sw\" style=\"background:var(--req)\"></span>the request (rounded)</span>"
        "<label>scale: <select id=\"scale\"><option value=\"w\">one for every segment%s</option>%s"
        "<option value=\"fit\">each segment across the full width (blocks to scale inside it)</option></select></label>"
        "</div>\n</header>\n", n > 1 ? " of every strategy" : "",
          n > 1 ? "<option value=\"wp\">one per strategy (its widest segment across)</option>" : "");
  fprintf(o, "<main class=\"panels%s\">\n", n > 1 ? " multi" : "");
  for (int q = 0; q < n; q++) panel(o, &p[q], q, ids ? ids[q] : NULL, scale, n == 1);
  fputs("</main>\n<script type=\"application/json\" id=\"fb-stacks\">[", o);
  for (size_t i = 0; i < nt; i++) {
    if (i) fputc(',', o);
    html_json_string(o, stacks[i]);
  }
  fputs("]</script>\n", o);
  html_end(o, js);
  for (int q = 0; ids && q < n; q++) free(ids[q]);
  free(ids);
  free(stacks);
}
