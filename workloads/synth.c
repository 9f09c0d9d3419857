/* synth.c - the synthetic generators' event queue, id lists and pull-based driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "synth.h"

static struct event *evq_slot(struct evq *q) {
  if (q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 1024;
    struct event *ev = realloc(q->ev, cap * sizeof *ev);
    if (!ev) {
      q->oom = 1;
      return NULL;
    }
    q->ev = ev;
    q->cap = cap;
  }
  struct event *e = &q->ev[q->n++];
  memset(e, 0, sizeof *e);
  return e;
}

uint64_t evq_alloc(struct evq *q, uint64_t size) {
  if (!size) return 0;
  struct event *e = evq_slot(q);
  if (!e) return 0;
  e->op = OP_ALLOC;
  e->id = q->next_id++;
  e->size = size;
  return e->id;
}

void evq_free(struct evq *q, uint64_t id) {
  if (!id) return;
  struct event *e = evq_slot(q);
  if (!e) return;
  e->op = OP_FREE;
  e->id = id;
}

void evq_mark(struct evq *q, enum op op) {
  struct event *e = evq_slot(q);
  if (e) e->op = op;
}

int idlist_push(struct idlist *l, uint64_t id) {
  if (!id) return 0;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    uint64_t *p = realloc(l->id, cap * sizeof *p);
    if (!p) return -1;
    l->id = p;
    l->cap = cap;
  }
  l->id[l->n++] = id;
  return 0;
}

void idlist_free_all(struct idlist *l, struct evq *q) {
  for (size_t i = 0; i < l->n; i++) evq_free(q, l->id[i]);
  l->n = 0;
}

void idlist_destroy(struct idlist *l) {
  free(l->id);
  memset(l, 0, sizeof *l);
}

/* events queued to give: 1, 0 at the end, -1 on an error (err) */
static int ready(struct synth *s, char *err) {
  struct evq *q = &s->q;
  while (q->pos == q->n) {
    if (s->done) return 0;
    q->n = q->pos = 0;
    if (s->fill(s, err)) return -1;
    if (q->oom) {
      snprintf(err, FB_ERRLEN, "synthetic workload: out of host memory queueing events");
      return -1;
    }
  }
  return 1;
}

int synth_next(void *st, struct event *ev, char *err) {
  struct synth *s = st;
  int rc = ready(s, err);
  if (rc <= 0) return rc;
  *ev = s->q.ev[s->q.pos++];
  return 1;
}

/* the generated events where they lie in the queue: what is left of it, refilled when empty */
int synth_span(void *st, const struct event **ev, int max, char *err) {
  struct synth *s = st;
  struct evq *q = &s->q;
  int rc = ready(s, err);
  if (rc <= 0) return rc;
  size_t left = q->n - q->pos, n = left < (size_t)max ? left : (size_t)max;
  *ev = q->ev + q->pos;
  q->pos += n;
  return (int)n;
}

int synth_rewind(void *st, char *err) {
  (void)err;
  struct synth *s = st;
  s->q.n = s->q.pos = 0;
  s->q.next_id = 1;
  s->q.oom = 0;
  s->done = 0;
  s->reset(s);
  return 0;
}

void synth_close(void *st) {
  struct synth *s = st;
  if (!s) return;
  if (s->destroy) s->destroy(s);
  free(s->q.ev);
  free(s);
}
