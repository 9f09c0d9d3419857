/* lookup.c - "unknown WHAT 'NAME'; known: a b c" (see lookup.h). Truncates, never
 * overflows: a long list ends in "..." */
#include "lookup.h"
#include <stdio.h>
#include <string.h>

static void add(struct lookup *l, const char *s) {
  if (!l->cap) return;
  size_t n = strlen(s);
  if (l->len + n + 1 > l->cap) {
    if (l->cap > 4) snprintf(l->buf + (l->cap > l->len + 4 ? l->len : l->cap - 4), 4, "...");
    l->len = l->cap - 1;
    return;
  }
  memcpy(l->buf + l->len, s, n + 1);
  l->len += n;
}

void lookup_begin(struct lookup *l, char *buf, size_t cap, const char *what, const char *name) {
  l->buf = buf;
  l->cap = cap;
  l->len = 0;
  if (cap) buf[0] = 0;
  add(l, "unknown ");
  add(l, what);
  add(l, " '");
  add(l, name);
  add(l, "'; known:");
}

void lookup_known(struct lookup *l, const char *known) {
  if (!known || !known[0]) return;
  add(l, " ");
  add(l, known);
}

const char *lookup_text(const struct lookup *l) { return l->buf; }
