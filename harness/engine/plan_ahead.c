/* plan_ahead.c - work done ahead of a GPU's rows. While a GPU replays a plan's rows one
 * after another, a helper thread goes through the same rows in order and has each row's
 * strategy prepare what it makes from the workload alone (allocator_ops.prepare: the
 * oracle's offline plan), kept in this process, so that the row finds it made instead of
 * making it in its own turn on the GPU. CPU work only: the helper opens no device (what a
 * row's percentages are taken of, its device's total, is asked on the calling thread
 * first). A row that comes before its preparation is done makes its own, the same. */
#include "plan_ahead.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "replay_open.h"

/* the strategy a row names has a prepare step (or may: `recorded` is resolved from the trace) */
static int may_prepare(const struct run_spec *s) {
  char name[64], err[FB_ERRLEN];
  struct params tmp;
  if (!s->allocator || params_parse_spec(s->allocator, name, sizeof name, &tmp, err)) return 0;
  if (!strcmp(name, "recorded")) return 1;
  const struct allocator_ops *ops = allocator_find(name);
  return ops && ops->prepare;
}

/* one row's preparation (its errors are the row's own to report: dropped here) */
static void prepare_row(const struct run_spec *s, uint64_t percent_base) {
  char err[FB_ERRLEN];
  struct workload w;
  struct params ap;
  const struct allocator_ops *ops = replay_open_row(s, &w, &ap, percent_base, err);
  if (!ops) return;
  if (ops->prepare) (void)ops->prepare(&ap, &w, err);
  workload_close(&w);
}

static int stopped(struct plan_ahead *a) {
  pthread_mutex_lock(&a->mu);
  int s = a->stop;
  pthread_mutex_unlock(&a->mu);
  return s;
}

static void *ahead_main(void *arg) {
  struct plan_ahead *a = arg;
  for (int i = 0; i < a->n && !stopped(a); i++)
    if (may_prepare(&a->specs[i])) prepare_row(&a->specs[i], a->percent_base[i]);
  return NULL;
}

int plan_ahead_start(struct plan_ahead *a, const struct run_spec *specs, const uint64_t *percent_base, int n) {
  memset(a, 0, sizeof *a);
  int any = 0;
  for (int i = 0; i < n && !any; i++) any = may_prepare(&specs[i]);
  if (!any) return 0;
  a->specs = malloc((size_t)n * sizeof *a->specs);
  a->percent_base = malloc((size_t)n * sizeof *a->percent_base);
  if (!a->specs || !a->percent_base) goto none;
  memcpy(a->specs, specs, (size_t)n * sizeof *a->specs);
  memcpy(a->percent_base, percent_base, (size_t)n * sizeof *a->percent_base);
  for (int i = 0; i < n; i++) {   /* what a row writes or shows stays the row's own */
    a->specs[i].timeline = NULL;
    a->specs[i].warn = NULL;
    a->specs[i].breakdown = NULL;
    a->specs[i].progress = 0;
    a->specs[i].quiet = 1;
  }
  a->n = n;
  if (pthread_mutex_init(&a->mu, NULL)) goto none;
  if (pthread_create(&a->thread, NULL, ahead_main, a)) { pthread_mutex_destroy(&a->mu); goto none; }
  a->started = 1;
  return 1;
none:
  free(a->specs);
  free(a->percent_base);
  memset(a, 0, sizeof *a);
  return 0;
}

void plan_ahead_stop(struct plan_ahead *a) {
  if (a->started) {
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_mutex_destroy(&a->mu);
  }
  free(a->specs);
  free(a->percent_base);
  memset(a, 0, sizeof *a);
}
