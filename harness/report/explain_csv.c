/* explain_csv.c - `fragbench explain --blocks-csv`: every block the page draws, one row
 * each, in the page's order (strategy, then segments in address order, then blocks in
 * address order): what a test or a script compares with the page one for one. */
#include "html_explain.h"

const char *explain_state_name(enum seg_state s) {
  switch (s) {
  case SEG_ALLOCATED: return "allocated";
  case SEG_FREE: return "free";
  case SEG_INACTIVE_SPLIT: return "inactive";
  case SEG_UNMAPPED: return "unmapped";
  }
  return "?";
}

static void quoted(FILE *o, const char *s) {
  fputc('"', o);
  for (; s && *s; s++) {
    if (*s == '"') fputc('"', o);
    fputc(*s == '\n' ? ' ' : *s, o);
  }
  fputc('"', o);
}

void explain_blocks_csv(FILE *o, const struct explain_state *st, int n) {
  fputs("strategy,event,segment,seg_addr,seg_size,block,addr,offset,size,requested,state,stream,pool,trace_id,frames\n", o);
  for (int k = 0; k < n; k++) {
    const struct explain_state *s = &st[k];
    uint64_t seg = 0, blk = 0;
    for (size_t i = 0; s->has_segments && i < s->nblocks; i++) {
      const struct seg_block *b = &s->blocks[i];
      if (!i || b->seg_addr != s->blocks[i - 1].seg_addr) { seg++; blk = 0; }
      blk++;
      fprintf(o, "%s,%lld,%llu,%#llx,%llu,%llu,%#llx,%llu,%llu,%llu,%s,%llu,%s,", s->allocator, (long long)s->event,
              (unsigned long long)seg, (unsigned long long)b->seg_addr, (unsigned long long)b->seg_size, (unsigned long long)blk,
              (unsigned long long)b->addr, (unsigned long long)(b->addr - b->seg_addr), (unsigned long long)b->size,
              (unsigned long long)(b->state == SEG_ALLOCATED ? b->requested : 0), explain_state_name(b->state),
              (unsigned long long)b->stream, b->small_pool ? "small" : "large");
      if (s->block_id && s->block_id[i]) fprintf(o, "%#llx", (unsigned long long)s->block_id[i]);
      fputc(',', o);
      quoted(o, s->block_frames ? s->block_frames[i] : NULL);
      fputc('\n', o);
    }
  }
}
