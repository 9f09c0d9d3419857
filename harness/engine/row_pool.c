/* row_pool.c - n tasks on one worker per core, results handed over in task order; see
 * row_pool.h. */
#include "row_pool.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

#define AHEAD 8   /* a worker starts task i only while i < handed + AHEAD x threads: results held are bounded */

struct pool {
  int n, next, stop, running, handed, ahead;
  unsigned char *finished;        /* [i]: task i done */
  row_pool_task_fn task;
  void *ctx;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

int row_pool_threads(int threads) {
  if (threads > 0) return threads > MAX_THREADS ? MAX_THREADS : threads;
  const char *env = getenv("FB_THREADS");
  if (env && atoi(env) > 0) return atoi(env) > MAX_THREADS ? MAX_THREADS : atoi(env);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
}

static void *worker(void *arg) {
  struct pool *p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->stop && p->next < p->n) {
    if (p->next >= p->handed + p->ahead) { pthread_cond_wait(&p->cv, &p->mu); continue; }
    int i = p->next++;
    p->running++;
    pthread_mutex_unlock(&p->mu);
    p->task(i, p->ctx);
    pthread_mutex_lock(&p->mu);
    p->running--;
    p->finished[i] = 1;
    pthread_cond_broadcast(&p->cv);
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
  struct pool p = {.n = n, .task = task, .ctx = ctx, .ahead = AHEAD * t};
  p.finished = calloc((size_t)n, 1);
  pthread_t *tid = malloc((size_t)t * sizeof *tid);
  if (!p.finished || !tid) { free(p.finished); free(tid); return -1; }
  pthread_mutex_init(&p.mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&p.cv, &ca);
  pthread_condattr_destroy(&ca);
  int started = 0;
  for (int i = 0; i < t; i++)
    if (!pthread_create(&tid[started], NULL, worker, &p)) started++;
  if (!started) {   /* no thread at all: every task here */
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    free(p.finished);
    free(tid);
    return row_pool_run(n, 1, task, done, wait, ctx);
  }
  int handed = 0;
  pthread_mutex_lock(&p.mu);
  while (handed < n) {
    if (!p.finished[handed]) {
      if (p.stop && !p.running && p.next <= handed) break;   /* stopped: never started */
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_nsec += 500000000L;
      if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
      if (pthread_cond_timedwait(&p.cv, &p.mu, &ts) == ETIMEDOUT && wait) {
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
    pthread_cond_broadcast(&p.cv);   /* a worker waiting for room may start the next */
    if (stop) { p.stop = 1; break; }
  }
  p.stop = 1;
  pthread_cond_broadcast(&p.cv);
  pthread_mutex_unlock(&p.mu);
  for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
  pthread_cond_destroy(&p.cv);
  pthread_mutex_destroy(&p.mu);
  free(p.finished);
  free(tid);
  return handed;
}
