/* explain_frames.c - where the largest blocks live at a snapshot's OOM were allocated:
 * one frames pass over the pickle (pickle.h: alloc records carry their stack's text),
 * keeping each live block's address, size and stack until the device's first oom entry,
 * then the largest of them. PyTorch's memory_viz gives the same per-block stack view.
 * Memory grows with the live blocks, not the trace (a freed block's stack is dropped). */
#include <stdlib.h>
#include <string.h>
#include "explain.h"
#include "pickle.h"
#include "trace_src.h"

struct slot { int64_t addr; uint64_t size; uint32_t ref; int used; };
struct table { struct slot *s; size_t mask, n; };

static size_t hash(int64_t a) { return (size_t)(((uint64_t)a >> 9) * 0x9E3779B97F4A7C15ull); }

static struct slot *find(struct table *t, int64_t addr) {
  size_t i = hash(addr) & t->mask;
  while (t->s[i].used && t->s[i].addr != addr) i = (i + 1) & t->mask;
  return &t->s[i];
}

static int grow(struct table *t) {
  struct table n = {calloc((t->mask + 1) * 2, sizeof *n.s), t->mask * 2 + 1, 0};
  if (!n.s) return -1;
  for (size_t i = 0; i <= t->mask; i++)
    if (t->s[i].used) { *find(&n, t->s[i].addr) = t->s[i]; n.n++; }
  free(t->s);
  *t = n;
  return 0;
}

/* removal with backward shift (linear probing keeps no tombstones) */
static void erase(struct table *t, struct slot *x) {
  size_t i = (size_t)(x - t->s), j = i;
  x->used = 0;
  t->n--;
  for (;;) {
    j = (j + 1) & t->mask;
    if (!t->s[j].used) return;
    size_t k = hash(t->s[j].addr) & t->mask;
    if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j)) continue;
    t->s[i] = t->s[j];
    t->s[j].used = 0;
    i = j;
  }
}

static int device_of(const struct explain_state *st, int trace_device) {
  if (trace_device >= 0) return trace_device;
  for (int d = 0; d < 64; d++) if (st->info.device_mask >> d & 1) return d;
  return 0;
}

void explain_frames(const char *trace, int trace_device, struct explain_state *st) {
  struct trace_src src;
  struct pk_reader pk;
  char err[FB_ERRLEN];
  if (src_open_path(&src, trace, err)) return;
  if (pk_open(&pk, &src, err)) { src_close(&src); return; }
  struct table t = {calloc(1024, sizeof *t.s), 1023, 0};
  if (!t.s || pk_frames_begin(&pk, err)) goto out;
  pk_frames_keep_allocs(&pk);
  int dev = device_of(st, trace_device), rc;
  struct pk_rec r;
  while ((rc = pk_next(&pk, &r, err)) > 0) {
    if (r.device != dev) { if (r.frames_ref) pk_frames_drop(&pk, r.frames_ref); continue; }
    if (r.action == TK_OOM) { st->frames_known = 1; break; }
    if (r.action == TK_ALLOC && r.size > 0) {
      if ((t.n + 1) * 2 > t.mask + 1 && grow(&t)) break;
      struct slot *x = find(&t, r.addr);
      if (x->used) pk_frames_drop(&pk, x->ref);
      else t.n++;
      *x = (struct slot){r.addr, (uint64_t)r.size, r.frames_ref, 1};
    } else if (r.action == TK_FREE_REQUESTED || r.action == TK_FREE_COMPLETED) {
      struct slot *x = find(&t, r.addr);
      if (x->used) { pk_frames_drop(&pk, x->ref); erase(&t, x); }
    } else if (r.frames_ref) {
      pk_frames_drop(&pk, r.frames_ref);
    }
  }
  if (!st->frames_known) goto out;
  /* the largest live blocks, by size */
  for (size_t i = 0; i <= t.mask; i++) {
    const struct slot *x = &t.s[i];
    if (!x->used) continue;
    st->live_at_oom++;
    const char *text = pk_oom_frames(&pk, x->ref);
    if (text[0]) st->live_with_frames++;
    int k = st->ntop < EXPLAIN_TOP_BLOCKS ? st->ntop++ : EXPLAIN_TOP_BLOCKS;
    if (k == EXPLAIN_TOP_BLOCKS && x->size <= st->top[k - 1].size) continue;
    if (k == EXPLAIN_TOP_BLOCKS) k--;
    while (k > 0 && st->top[k - 1].size < x->size) { st->top[k] = st->top[k - 1]; k--; }
    st->top[k].size = x->size;
    snprintf(st->top[k].frames, sizeof st->top[k].frames, "%s", text);
  }
out:
  free(t.s);
  pk_frames_end(&pk);
  pk_close(&pk);
  src_close(&src);
}
