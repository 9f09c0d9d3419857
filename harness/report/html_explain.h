/* html_explain.h - `fragbench explain --html`: the memory at one moment as one
 * self-contained page, PyTorch memory_viz's segment view with explain's reasons beside
 * it. Every segment is a row (all of them, the list scrolls), every block of it an SVG
 * <rect class="block"> drawn to scale and coloured by state (the only <rect>s on the
 * page); hovering one shows its size, state, stream and the stack that allocated it
 * where the snapshot holds one. The request is drawn against the largest free block (and
 * reserved plus the new segment against the cap), beside explain's text. Several
 * strategies (--allocator repeated) stand side by side on one scale. */
#ifndef FB_HTML_EXPLAIN_H
#define FB_HTML_EXPLAIN_H
#include <stdio.h>
#include "explain.h"

struct html_explain_panel {
  const struct explain_state *st;
  const char *text;   /* explain's words for it (the totals and why nothing fit) */
};

void html_explain_write(FILE *o, const char *trace, const struct html_explain_panel *p, int n);
/* the blocks the page draws for st: every block of every listed segment (0 without a segment view) */
/* the sentence under the request: whether it fits and why not (computed from st alone) */
void html_explain_verdict(const struct explain_state *st, char *out, size_t n);
size_t html_explain_blocks(const struct explain_state *st);

/* --blocks-csv: one row per block drawn, of each strategy in turn (explain_csv.c) */
void explain_blocks_csv(FILE *o, const struct explain_state *st, int n);
const char *explain_state_name(enum seg_state s);

#endif
