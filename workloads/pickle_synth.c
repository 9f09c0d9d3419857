/* pickle_synth.c - writes a synthetic PyTorch memory snapshot (pickle protocol 4, the
 * opcodes Python's pickler uses) of any length, for the streaming tests and the reading
 * benchmark: device 0 only, alloc/free_completed pairs over about 1000 live blocks,
 * a segment_alloc every 512 allocations, and on every event a 'frames' list whose frame
 * dicts are shared through the memo, as _dump_snapshot writes stack frames. Strings that
 * PyTorch shares (keys, action names) are memoized once and re-used with BINGET; per-event
 * strings ('N/A', '') are fresh, as in real snapshots. */
#include <stdio.h>
#include <string.h>
#include "pickle.h"

#define SYNTH_LIVE 1000
#define SYNTH_FRAME_POOL 64

struct w {
  FILE *f;
  uint64_t memo;                  /* next MEMOIZE index */
  uint64_t str_memo[TK_COUNT];    /* memo index + 1 of a shared string, 0 = not yet */
  uint64_t frame_memo[SYNTH_FRAME_POOL];
  int bad;
};

static void put(struct w *w, const void *b, size_t n) {
  if (fwrite(b, 1, n, w->f) != n) w->bad = 1;
}
static void op(struct w *w, uint8_t o) { put(w, &o, 1); }
static void memoize(struct w *w) { op(w, 0x94); w->memo++; }

static void get(struct w *w, uint64_t idx) {
  uint8_t b[5];
  if (idx < 256) {
    b[0] = 'h';
    b[1] = (uint8_t)idx;
    put(w, b, 2);
  } else {
    b[0] = 'j';
    for (int i = 0; i < 4; i++) b[1 + i] = (uint8_t)(idx >> (8 * i));
    put(w, b, 5);
  }
}

static void str_fresh(struct w *w, const char *s) {
  size_t n = strlen(s);
  if (n < 256) {
    uint8_t h[2] = {0x8c, (uint8_t)n};
    put(w, h, 2);
  } else {
    uint8_t h[5] = {'X', (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    put(w, h, 5);
  }
  put(w, s, n);
  memoize(w);
}

/* a string PyTorch shares between events: written once, then fetched from the memo */
static void str_shared(struct w *w, enum pk_tok t) {
  if (w->str_memo[t]) {
    get(w, w->str_memo[t] - 1);
    return;
  }
  w->str_memo[t] = w->memo + 1;
  str_fresh(w, pk_vocab_text(t));
}

static void int_(struct w *w, int64_t v) {
  if (v >= 0 && v < 256) {
    uint8_t b[2] = {'K', (uint8_t)v};
    put(w, b, 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    uint8_t b[5] = {'J'};
    for (int i = 0; i < 4; i++) b[1 + i] = (uint8_t)((uint64_t)v >> (8 * i));
    put(w, b, 5);
  } else {
    uint8_t b[10] = {0x8a, 8};
    for (int i = 0; i < 8; i++) b[2 + i] = (uint8_t)((uint64_t)v >> (8 * i));
    put(w, b, 10);
  }
}

static void frame(struct w *w, int k) {
  if (w->frame_memo[k]) {
    get(w, w->frame_memo[k] - 1);
    return;
  }
  char name[96], file[160];
  snprintf(name, sizeof name, "torch::autograd::Engine::evaluate_function_%d(Node&, InputBuffer&)", k);
  snprintf(file, sizeof file, "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module_%d.py", k);
  op(w, '}');
  w->frame_memo[k] = w->memo + 1;
  memoize(w);
  op(w, '(');
  str_fresh(w, "name"); str_fresh(w, name);
  str_fresh(w, "filename"); str_fresh(w, file);
  str_fresh(w, "line"); int_(w, 100 + k);
  op(w, 'u');
}

static void event(struct w *w, enum pk_tok action, uint64_t addr, uint64_t size, uint64_t t, int nframes) {
  op(w, '}');
  memoize(w);
  op(w, '(');
  str_shared(w, TK_ACTION); str_shared(w, action);
  str_shared(w, TK_ADDR); int_(w, (int64_t)addr);
  str_shared(w, TK_SIZE); int_(w, (int64_t)size);
  str_shared(w, TK_STREAM); int_(w, 0);
  str_shared(w, TK_TIME_US); int_(w, (int64_t)(1795310685194778ULL + t));
  str_shared(w, TK_COMPILE_CONTEXT); str_fresh(w, "N/A");
  str_shared(w, TK_USER_METADATA); str_fresh(w, "");
  if (nframes) {
    str_shared(w, TK_FRAMES);
    op(w, ']');
    memoize(w);
    op(w, '(');
    for (int i = 0; i < nframes; i++) frame(w, (int)((t * 7 + (uint64_t)i) % SYNTH_FRAME_POOL));
    op(w, 'e');
  }
  op(w, 'u');
}

int pickle_synth_snapshot(FILE *f, uint64_t nevents, int nframes, uint64_t seed) {
  struct w w = {.f = f};
  uint8_t proto[2] = {0x80, 4};
  put(&w, proto, 2);
  op(&w, '}');
  memoize(&w);
  op(&w, '(');
  str_shared(&w, TK_SEGMENTS);
  op(&w, ']');
  memoize(&w);
  str_shared(&w, TK_DEVICE_TRACES);
  op(&w, ']');
  memoize(&w);
  op(&w, ']');                                  /* device 0's events */
  memoize(&w);
  const uint64_t base = 0x7f0000000000ULL;
  uint64_t in_batch = 0, allocs = 0, frees = 0, segs = 0;
  for (uint64_t e = 0; e < nevents; e++) {
    if (in_batch == 0) op(&w, '(');
    uint64_t x = (e + seed) * 0x9E3779B97F4A7C15ULL;
    if (allocs % 512 == 0 && segs * 512 <= allocs) {
      event(&w, TK_SEGMENT_ALLOC, base + (segs << 32), 20u << 20, e, nframes);
      segs++;
    } else if (allocs < SYNTH_LIVE || ((x >> 40) & 1) || frees >= allocs) {
      event(&w, TK_ALLOC, base + (allocs << 12), 512 + ((x >> 20) % 4096) * 512, e, nframes);
      allocs++;
    } else {
      event(&w, TK_FREE_COMPLETED, base + (frees << 12), 0, e, nframes);
      frees++;
    }
    if (++in_batch == 1000 || e + 1 == nevents) {
      op(&w, 'e');
      in_batch = 0;
    }
  }
  op(&w, 'a');                                  /* device 0's list into device_traces */
  str_shared(&w, TK_ALLOCATOR_SETTINGS);
  op(&w, '}');
  memoize(&w);
  op(&w, '(');
  str_shared(&w, TK_MAX_SPLIT_SIZE); int_(&w, -1);
  str_shared(&w, TK_EXPANDABLE_SEGMENTS); op(&w, 0x89);
  op(&w, 'u');
  op(&w, 'u');
  op(&w, '.');
  return w.bad ? -1 : 0;
}
