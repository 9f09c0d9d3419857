/* row_pool.h - the engine's one pool of workers: n tasks (rows, probes, searches) run on
 * one thread per core, each worker taking the next task not yet taken, and every result
 * handed to the caller's `done` callback on the calling thread in task order (task i only
 * after 0..i-1), as soon as it and all before it are finished. So what a command writes
 * does not depend on the number of threads, and the caller's writing (a CSV row, a table
 * line, a confirmation on the GPU) never runs on two threads at once. A `done` that
 * returns nonzero stops the pool: no task is started after it, the running ones finish.
 * Workers run at most 8 tasks per thread ahead of the last one handed over, so the
 * results waiting their turn stay few. */
#ifndef FB_ROW_POOL_H
#define FB_ROW_POOL_H
#include <stdint.h>

/* task i: its work, on whichever worker took it (must not share unguarded state with
 * other tasks) */
typedef void (*row_pool_task_fn)(int i, void *ctx);
/* task i finished (and all before it): on the calling thread, in order; nonzero stops */
typedef int (*row_pool_done_fn)(int i, void *ctx);
/* called on the calling thread every half second while it waits (NULL: none): k tasks
 * handed to `done` so far of n, `running` at work now */
typedef void (*row_pool_wait_fn)(int k, int n, int running, void *ctx);

/* threads: 0 = one per core (FB_THREADS in the environment overrides), 1 = every task
 * here, one after another, each followed by its `done`. Returns the number of tasks
 * handed to `done` (n unless stopped), or -1 when the pool could not be set up (nothing
 * was run). */
int row_pool_run(int n, int threads, row_pool_task_fn task, row_pool_done_fn done, row_pool_wait_fn wait, void *ctx);

/* the number of threads row_pool_run uses for `threads` (0 = the cores, or FB_THREADS) */
int row_pool_threads(int threads);
/* the workers for rows on a device of this kind: row_pool_threads(0) on sim, one elsewhere
 * (a GPU's rows one after another on it) */
int row_pool_threads_on(const char *device_kind);

/* The one progress line of a pool's tasks on stderr ("\rWHO: k of n WHAT done, r running,
 * T s"), from a second in, while the caller waits (call row_pool_line_wait from the wait
 * callback); row_pool_line_clear before the caller writes anything, row_pool_line_end after
 * the pool. on = 0: never shown. */
struct row_pool_line { const char *who, *what; int on, shown; uint64_t t0; };
void row_pool_line_start(struct row_pool_line *l, const char *who, const char *what, int on);
void row_pool_line_wait(struct row_pool_line *l, int k, int n, int running);
void row_pool_line_clear(struct row_pool_line *l);
void row_pool_line_end(struct row_pool_line *l);

#endif
