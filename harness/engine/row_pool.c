/* row_pool.c - n tasks on one worker per core, results handed over in task order; see
 * row_pool.h. */
#include "row_pool.h"
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "timing.h"

#define MAX_THREADS 256

#define AHEAD 8   /* a worker starts task i only while i < handed + AHEAD x threads: results held are bounded */

struct pool {
  int n, next, stop, running, handed, ahead;
  int main_waits, workers_wait;   /* who sleeps: woken only then (few futex calls a task) */
  unsigned char *finished;        /* [i]: task i done */
  row_pool_task_fn task;
  void *ctx;
  pthread_mutex_t mu;
  pthread_cond_t ready;           /* the task to hand over next finished */
  pthread_cond_t room;            /* a worker may start another */
};

int row_pool_threads(int threads) {
  if (threads > 0) return threads > MAX_THREADS ? MAX_THREADS : threads;
  const char *env = getenv("FB_THREADS");
  if (env && atoi(env) > 0) return atoi(env) > MAX_THREADS ? MAX_THREADS : atoi(env);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
}

int row_pool_threads_on(const char *device_kind) {
  return device_kind && !strcmp(device_kind, "sim") ? row_pool_threads(0) : 1;
}

static void *worker(void *arg) {
  struct pool *p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->stop && p->next < p->n) {
    if (p->next >= p->handed + p->ahead) {
      p->workers_wait++;
      pthread_cond_wait(&p->room, &p->mu);
      p->workers_wait--;
      continue;
    }
    int i = p->next++;
    p->running++;
    pthread_mutex_unlock(&p->mu);
    p->task(i, p->ctx);
    pthread_mutex_lock(&p->mu);
    p->running--;
    p->finished[i] = 1;
    if (p->main_waits && i == p->handed) pthread_cond_signal(&p->ready);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int row_pool_run(int n, int threads, row_pool_task_fn task, row_pool_done_fn done, row_pool_wait_fn wait, void *ctx) {
  int t = row_pool_threads(threads);
  if (t > n) t = n;
  if (t <= 1) {   /* here, one after another */
    for (int i = 0; i < n; i++) {
      task(i, ctx);
      if (done && done(i, ctx)) return i + 1;
    }
    return n;
  }
  int handover = done || wait;    /* nothing to hand over: this thread works too, nothing bounds the workers */
  struct pool p = {.n = n, .task = task, .ctx = ctx, .ahead = handover ? AHEAD * t : n};
  p.finished = calloc((size_t)n, 1);
  pthread_t *tid = malloc((size_t)t * sizeof *tid);
  if (!p.finished || !tid) { free(p.finished); free(tid); return -1; }
  pthread_mutex_init(&p.mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&p.ready, &ca);
  pthread_cond_init(&p.room, &ca);
  pthread_condattr_destroy(&ca);
  int started = 0;
  for (int i = handover ? 0 : 1; i < t; i++)
    if (!pthread_create(&tid[started], NULL, worker, &p)) started++;
  int handed = 0;
  if (!handover) {   /* this thread is the t-th worker */
    worker(&p);
    handed = n;
  } else if (!started) {   /* no thread at all: every task here */
    pthread_mutex_lock(&p.mu);
    p.stop = 1;
    pthread_mutex_unlock(&p.mu);
  }
  if (handover && started) {
    pthread_mutex_lock(&p.mu);
    while (handed < n) {
      if (!p.finished[handed]) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 500000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        p.main_waits = 1;
        int rc = pthread_cond_timedwait(&p.ready, &p.mu, &ts);
        p.main_waits = 0;
        if (rc == ETIMEDOUT && wait) {
          int k = handed, r = p.running;
          pthread_mutex_unlock(&p.mu);
          wait(k, n, r, ctx);
          pthread_mutex_lock(&p.mu);
        }
        continue;
      }
      pthread_mutex_unlock(&p.mu);
      int stop = done ? done(handed, ctx) : 0;
      pthread_mutex_lock(&p.mu);
      p.handed = ++handed;
      if (p.workers_wait) pthread_cond_broadcast(&p.room);   /* room for the next */
      if (stop) break;
    }
    p.stop = 1;
    pthread_cond_broadcast(&p.room);
    pthread_mutex_unlock(&p.mu);
  }
  for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
  pthread_cond_destroy(&p.ready);
  pthread_cond_destroy(&p.room);
  pthread_mutex_destroy(&p.mu);
  free(p.finished);
  free(tid);
  if (handover && !started) return row_pool_run(n, 1, task, done, wait, ctx);
  return handed;
}

void row_pool_line_start(struct row_pool_line *l, const char *who, const char *what, int on) {
  *l = (struct row_pool_line){.who = who, .what = what, .on = on, .t0 = now_ns()};
}

void row_pool_line_wait(struct row_pool_line *l, int k, int n, int running) {
  if (!l->on || now_ns() - l->t0 < 1000000000ull) return;
  fprintf(stderr, "\r%s: %d of %d %s done, %d running, %.0f s   ", l->who, k, n, l->what, running, (double)(now_ns() - l->t0) / 1e9);
  l->shown = 1;
}

void row_pool_line_clear(struct row_pool_line *l) {
  if (l->shown) fprintf(stderr, "\r%60s\r", "");
  l->shown = 0;
}

void row_pool_line_end(struct row_pool_line *l) {
  if (l->shown) fputc('\n', stderr);
  l->shown = 0;
}
