/* thread_map.c - a thread's kept mapping; see thread_map.h. */
#include "thread_map.h"
#include <stdlib.h>
#include <sys/mman.h>

struct kept { void *p; size_t len; };

static void drop(void *v) {   /* the thread ends */
  struct kept *k = v;
  if (k->p) munmap(k->p, k->len);
  free(k);
}

static struct kept *kept_of(struct thread_map *m, int create) {
  if (!__atomic_load_n(&m->made, __ATOMIC_ACQUIRE)) {   /* the use's key, made once */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    if (!m->made && !pthread_key_create(&m->key, drop)) __atomic_store_n(&m->made, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu);
    if (!m->made) return NULL;
  }
  struct kept *k = pthread_getspecific(m->key);
  if (!k && create && (k = calloc(1, sizeof *k)) && pthread_setspecific(m->key, k)) { free(k); k = NULL; }
  return k;
}

void *thread_map_take(struct thread_map *m, size_t len) {
  struct kept *k = kept_of(m, 0);
  if (!k || !k->p || k->len != len) return NULL;
  void *p = k->p;
  k->p = NULL;
  return p;
}

int thread_map_keep(struct thread_map *m, void *p, size_t len) {
  struct kept *k = kept_of(m, 1);
  if (!k || k->p) return -1;
  k->p = p;
  k->len = len;
  return 0;
}
