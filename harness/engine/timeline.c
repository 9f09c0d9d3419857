/* timeline.c - the --timeline samples of one replay (see timeline.h). */
#include "timeline.h"
#include <stdlib.h>
#include <string.h>
#include "csv.h"

void timeline_init(struct timeline *t, FILE *f, const char *source) {
  memset(t, 0, sizeof *t);
  t->f = f;
  t->source = source;
  t->every = 1;
  t->allocator = "";
  t->params = "";
}

void timeline_name(struct timeline *t, const char *allocator, const char *params) {
  t->allocator = allocator;
  t->params = params;
}

static void write_sample(struct timeline *t, const struct tl_sample *s) {
  char label[400];
  int src = t->source && t->source[0];
  snprintf(label, sizeof label, "%s%s%s", src ? t->source : "", src ? "/" : "", t->allocator);
  csv_field(t->f, label);
  fprintf(t->f, ",%llu,%llu,%llu,%llu,%llu,%llu,%llu,", (unsigned long long)s->event, (unsigned long long)s->iter,
          (unsigned long long)s->requested, (unsigned long long)s->allocated, (unsigned long long)s->reserved,
          (unsigned long long)s->max_requested, (unsigned long long)s->max_reserved);
  csv_field(t->f, t->params);
  fputc('\n', t->f);
}

/* the sample now, and its window closed */
static struct tl_sample take(struct tl_window *w, uint64_t events, uint64_t iter, uint64_t requested, uint64_t allocated,
                             uint64_t reserved) {
  struct tl_sample s = {events, iter, requested, allocated, reserved, w->requested, w->reserved};
  if (requested > s.max_requested) s.max_requested = requested;
  if (reserved > s.max_reserved) s.max_reserved = reserved;
  w->requested = requested;
  w->reserved = reserved;
  return s;
}

/* every second spread sample merged into its successor: half as many, twice as far apart */
static void thin(struct timeline *t) {
  size_t n = 0;
  for (size_t i = 0; i + 1 < t->nheld; i += 2) {
    struct tl_sample s = t->held[i + 1];
    if (t->held[i].max_requested > s.max_requested) s.max_requested = t->held[i].max_requested;
    if (t->held[i].max_reserved > s.max_reserved) s.max_reserved = t->held[i].max_reserved;
    t->held[n++] = s;
  }
  t->nheld = n;
  t->every *= 2;
}

void timeline_event(struct timeline *t, uint64_t events, uint64_t iters, uint64_t requested, uint64_t allocated, uint64_t reserved) {
  if (t->per_iter || (events & (t->every - 1))) return;
  if (!t->held && !(t->held = malloc(TIMELINE_MAX_SAMPLES * sizeof *t->held))) {
    t->every = UINT64_C(1) << 62;   /* no host memory to hold samples: the last one only */
    return;
  }
  t->held[t->nheld++] = take(&t->spread, events, iters, requested, allocated, reserved);
  if (t->nheld == TIMELINE_MAX_SAMPLES) thin(t);
}

void timeline_iter(struct timeline *t, uint64_t events, uint64_t iter, uint64_t requested, uint64_t allocated, uint64_t reserved) {
  struct tl_sample s = take(&t->iter, events, iter, requested, allocated, reserved);
  if (t->per_iter) { write_sample(t, &s); return; }
  t->iters[t->niters++] = s;
  if (t->niters < TIMELINE_ITER_RUN) return;
  t->per_iter = 1;   /* enough iterations: one sample each, the spread ones dropped */
  for (size_t i = 0; i < t->niters; i++) write_sample(t, &t->iters[i]);
  free(t->held);
  t->held = NULL;
  t->nheld = 0;
}

void timeline_finish(struct timeline *t, uint64_t events, uint64_t iters, uint64_t requested, uint64_t allocated, uint64_t reserved) {
  if (t->per_iter) return;
  for (size_t i = 0; i < t->nheld; i++) write_sample(t, &t->held[i]);
  if (events && (!t->nheld || t->held[t->nheld - 1].event != events)) {
    struct tl_sample s = take(&t->spread, events, iters, requested, allocated, reserved);
    write_sample(t, &s);
  }
  t->nheld = 0;
}

void timeline_release(struct timeline *t) {
  free(t->held);
  t->held = NULL;
  t->nheld = 0;
}
