/* explain_blocks.c - what `explain --html` shows on hovering a block: which of the
 * trace's allocations each allocated block holds (its id: a snapshot's address), and the
 * stack that allocated it. The ids come from the replay's live map at the moment (the
 * strategy's block address -> the event id it was given for); the stacks from one frames
 * pass over the pickle (pickle.h) that stops where the moment is: the records read are
 * counted as the reader turns them into events (alloc, free_completed: one each; oom: its
 * alloc and its free), so the pass ends just before the event the moment names. Only the
 * ids allocated at that moment are kept, so memory follows the blocks shown. */
#include <stdlib.h>
#include <string.h>
#include "explain.h"
#include "livemap.h"
#include "pickle.h"
#include "trace_src.h"

struct pair { uint64_t addr, id; };

static int by_addr(const void *a, const void *b) {
  const struct pair *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void explain_block_ids(struct explain_state *st, struct livemap *live) {
  free(st->block_id);
  st->block_id = st->nblocks ? calloc(st->nblocks, sizeof *st->block_id) : NULL;
  if (!st->block_id) return;
  size_t n = 0;
  uint64_t *ids = livemap_sorted_ids(live, LIVE_BLOCK, &n);
  struct pair *p = n ? malloc(n * sizeof *p) : NULL;
  for (size_t i = 0; p && i < n; i++) p[i] = (struct pair){livemap_get(live, ids[i])->b.addr, ids[i]};
  free(ids);
  if (!p) return;
  qsort(p, n, sizeof *p, by_addr);
  for (size_t i = 0; i < st->nblocks; i++) {
    if (st->blocks[i].state != SEG_ALLOCATED) continue;
    struct pair key = {st->blocks[i].addr, 0}, *hit = bsearch(&key, p, n, sizeof *p, by_addr);
    if (hit) st->block_id[i] = hit->id;
  }
  free(p);
}

/* the blocks' ids, sorted, each with the block it belongs to */
struct want { uint64_t id; size_t block; uint32_t ref; };

static int by_id(const void *a, const void *b) {
  const struct want *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int device_of(const struct explain_state *st, int trace_device) {
  if (trace_device >= 0) return trace_device;
  for (int d = 0; d < 64; d++) if (st->info.device_mask >> d & 1) return d;
  return 0;
}

void explain_block_frames(const char *trace, int trace_device, const struct event_buffer *b, struct explain_state *st) {
  if (!st->block_id || !st->nblocks || st->event < 0) return;
  /* the alloc and free events before the moment: the pass stops after as many */
  uint64_t until = 0;
  for (int64_t i = 0; i < st->event && (uint64_t)i < b->n; i++) until += b->ev[i].op == OP_ALLOC || b->ev[i].op == OP_FREE;
  size_t n = 0;
  struct want *w = malloc(st->nblocks * sizeof *w);
  if (!w) return;
  for (size_t i = 0; i < st->nblocks; i++)
    if (st->block_id[i]) w[n++] = (struct want){st->block_id[i], i, 0};
  qsort(w, n, sizeof *w, by_id);
  struct trace_src src;
  struct pk_reader pk;
  char err[FB_ERRLEN];
  if (!n || src_open_path(&src, trace, err)) { free(w); return; }
  if (pk_open(&pk, &src, err)) { src_close(&src); free(w); return; }
  if (pk_frames_begin(&pk, err)) goto out;
  pk_frames_keep_allocs(&pk);
  int dev = device_of(st, trace_device);
  uint64_t seen = 0;
  struct pk_rec r;
  while (seen < until && pk_next(&pk, &r, err) > 0) {
    if (r.device != dev) { if (r.frames_ref) pk_frames_drop(&pk, r.frames_ref); continue; }
    struct want key = {(uint64_t)r.addr, 0, 0}, *hit = NULL;
    if (r.action == TK_ALLOC || r.action == TK_FREE_COMPLETED) hit = bsearch(&key, w, n, sizeof *w, by_id);
    if (r.action == TK_ALLOC) {
      seen++;
      if (hit && (uint64_t)r.size == st->blocks[hit->block].requested) {
        if (hit->ref) pk_frames_drop(&pk, hit->ref);
        hit->ref = r.frames_ref;
        continue;
      }
    } else if (r.action == TK_FREE_COMPLETED) {
      seen++;
      if (hit && hit->ref) { pk_frames_drop(&pk, hit->ref); hit->ref = 0; }
    } else if (r.action == TK_OOM) {
      seen += 2;
    }
    if (r.frames_ref) pk_frames_drop(&pk, r.frames_ref);
  }
  if (seen != until) goto out;   /* the pickle ended early: no stacks rather than wrong ones */
  st->block_frames = calloc(st->nblocks, sizeof *st->block_frames);
  for (size_t i = 0; st->block_frames && i < n; i++) {
    const char *text = pk_oom_frames(&pk, w[i].ref);
    if (!text[0]) continue;
    st->block_frames[w[i].block] = strdup(text);
    if (st->block_frames[w[i].block]) st->blocks_with_frames++;
  }
out:
  free(w);
  pk_frames_end(&pk);
  pk_close(&pk);
  src_close(&src);
}
