/* inputs.c - each trace read once per command (see inputs.h): a list of held buffers
 * keyed by path, device trace and the file's identity (a file rewritten under the same
 * name is read again); one reader per key, others wait for it. */
#include "inputs.h"
#include "livemap.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { LOADING, READY, FAILED };

struct held {
  char *path;
  int trace_device;
  dev_t dev; ino_t ino; off_t size; struct timespec mtime;   /* the file's identity when read */
  int state;
  struct event_buffer b;
  struct held *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int on;
static struct held *list;

void inputs_begin(void) {
  pthread_mutex_lock(&mu);
  on = 1;
  pthread_mutex_unlock(&mu);
}

static void release(struct held *h) {
  event_buffer_free(&h->b);
  free(h->path);
  free(h);
}

void inputs_end(void) {
  pthread_mutex_lock(&mu);
  on = 0;
  while (list) {
    struct held *h = list;
    list = h->next;
    release(h);
  }
  pthread_mutex_unlock(&mu);
}

static int same_file(const struct held *h, const struct stat *st) {
  return h->dev == st->st_dev && h->ino == st->st_ino && h->size == st->st_size && h->mtime.tv_sec == st->st_mtim.tv_sec &&
         h->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* a trace held takes at most a quarter of the host's memory; a longer one is replayed
 * from its file by each row, in memory proportional to its live blocks (workload.h) */
static size_t max_events(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return (size_t)1 << 26;
  return (size_t)((double)pages * (double)page / 4 / sizeof(struct event));
}

void inputs_slot(struct event_buffer *b) {
  uint32_t table;
  b->slot_table = livemap_slot_events(b->ev, b->n, &table) ? 0 : table;
}

const struct event_buffer *inputs_get(const char *path, int trace_device) {
  struct stat st;
  memset(&st, 0, sizeof st);
  if (strcmp(path, "-") && stat(path, &st)) return NULL;   /* the row's own reading says why */
  pthread_mutex_lock(&mu);
  if (!on) { pthread_mutex_unlock(&mu); return NULL; }
  struct held *h;
  for (h = list; h; h = h->next)
    if (h->trace_device == trace_device && !strcmp(h->path, path) && same_file(h, &st)) break;
  if (h) {
    while (h->state == LOADING) pthread_cond_wait(&cv, &mu);
    const struct event_buffer *b = h->state == READY ? &h->b : NULL;
    pthread_mutex_unlock(&mu);
    return b;
  }
  h = calloc(1, sizeof *h);
  if (h) h->path = strdup(path);
  if (!h || !h->path) { free(h); pthread_mutex_unlock(&mu); return NULL; }
  h->trace_device = trace_device;
  h->dev = st.st_dev; h->ino = st.st_ino; h->size = st.st_size; h->mtime = st.st_mtim;
  h->state = LOADING;
  h->next = list;
  list = h;
  pthread_mutex_unlock(&mu);
  char err[FB_ERRLEN];
  int rc = event_buffer_load_max(&h->b, path, trace_device, max_events(), err);
  if (!rc) inputs_slot(&h->b);
  pthread_mutex_lock(&mu);
  h->state = rc ? FAILED : READY;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  return rc ? NULL : &h->b;
}

const struct event_buffer *inputs_get_or_load(const char *path, int trace_device, struct event_buffer *own, char *err) {
  memset(own, 0, sizeof *own);
  const struct event_buffer *b = inputs_get(path, trace_device);
  if (b) return b;
  if (event_buffer_load(own, path, trace_device, err)) return NULL;
  inputs_slot(own);
  return own;
}

void inputs_forget(const char *path) {
  pthread_mutex_lock(&mu);
  for (struct held **p = &list; *p;) {
    struct held *h = *p;
    if (h->state != LOADING && !strcmp(h->path, path)) { *p = h->next; release(h); }
    else p = &h->next;
  }
  pthread_mutex_unlock(&mu);
}
