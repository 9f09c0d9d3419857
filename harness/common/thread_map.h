/* thread_map.h - an anonymous mapping a thread keeps between runs: a replay's first tables
 * (the livemap's, the sim device's page bitmap) are taken back by the thread's next run of
 * the same size instead of mapped anew - advise and mincap replay thousands of runs on a
 * few threads, and a mapping made and unmapped for each costs its pages' faults and, with
 * several threads, a TLB shootdown on every unmap. Unmapped when the thread ends. Each use
 * has its own static struct thread_map. */
#ifndef FB_THREAD_MAP_H
#define FB_THREAD_MAP_H
#include <pthread.h>
#include <stddef.h>

struct thread_map { pthread_key_t key; int made; };
#define THREAD_MAP_INIT {0, 0}

/* the thread's kept mapping when it is len bytes (as the caller left it: zeroed), or NULL */
void *thread_map_take(struct thread_map *m, size_t len);
/* keep p (len bytes, zeroed by the caller) for the thread's next take: 0, or -1 when the
 * thread keeps one already (the caller unmaps p) */
int thread_map_keep(struct thread_map *m, void *p, size_t len);

#endif
