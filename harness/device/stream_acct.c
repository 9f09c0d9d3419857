/* stream_acct.c - reserved bytes per stream (see stream_acct.h). */
#include <stdlib.h>
#include <string.h>
#include "stream_acct.h"

void stream_acct_init(struct stream_acct *a) {
  memset(a, 0, sizeof *a);
  a->mask = 1023;
  a->map = calloc(a->mask + 1, sizeof *a->map);
  if (!a->map) abort();
}

void stream_acct_free(struct stream_acct *a) { free(a->map); a->map = NULL; }

static uint64_t hash(uint64_t k) { k ^= k >> 33; k *= 0xff51afd7ed558ccdull; k ^= k >> 33; return k; }

static void grow(struct stream_acct *a) {
  struct acct_entry *old = a->map;
  uint64_t om = a->mask;
  a->mask = om * 2 + 1;
  a->map = calloc(a->mask + 1, sizeof *a->map);
  if (!a->map) abort();
  for (uint64_t i = 0; i <= om; i++)
    if (old[i].used) {
      uint64_t j = hash(old[i].key) & a->mask;
      while (a->map[j].used) j = (j + 1) & a->mask;
      a->map[j] = old[i];
    }
  free(old);
}

static int slot_of(struct stream_acct *a, uint64_t stream, const char *pool) {
  if (!pool) pool = "";
  for (int i = 0; i < a->n; i++) if (a->stream[i] == stream && !strcmp(a->pool[i], pool)) return i;
  if (a->n < ACCT_STREAMS) { a->stream[a->n] = stream; a->pool[a->n] = pool; return a->n++; }
  return ACCT_STREAMS - 1;
}

void stream_acct_take(struct stream_acct *a, uint64_t key, uint64_t size, uint64_t reserved, uint64_t peak) {
  if ((a->count + 1) * 2 > a->mask) grow(a);
  int s = slot_of(a, a->cur, a->cur_pool);
  uint64_t j = hash(key) & a->mask;
  while (a->map[j].used) j = (j + 1) & a->mask;
  a->map[j] = (struct acct_entry){key, (uint32_t)s, 1, size};
  a->count++;
  a->now[s] += size;
  if (a->now[s] > a->peak[s]) a->peak[s] = a->now[s];
  if (reserved == peak) {   /* a new device peak: keep the split */
    uint64_t sum = 0;
    for (int i = 0; i < a->n; i++) { a->at_peak[i] = a->now[i]; sum += a->now[i]; }
    a->other_at_peak = reserved > sum ? reserved - sum : 0;
  }
}

void stream_acct_give(struct stream_acct *a, uint64_t key) {
  uint64_t j = hash(key) & a->mask;
  while (a->map[j].used && a->map[j].key != key) j = (j + 1) & a->mask;
  if (!a->map[j].used) return;   /* taken before the accounting began */
  a->now[a->map[j].slot] -= a->map[j].size;
  a->count--;
  /* backward-shift deletion keeps every probe chain intact */
  uint64_t i = j;
  for (;;) {
    a->map[i].used = 0;
    uint64_t k = i;
    for (;;) {
      k = (k + 1) & a->mask;
      if (!a->map[k].used) return;
      uint64_t h = hash(a->map[k].key) & a->mask;
      if ((k > i && (h <= i || h > k)) || (k < i && (h <= i && h > k))) break;
    }
    a->map[i] = a->map[k];
    i = k;
  }
}
