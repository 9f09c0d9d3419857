/* unmodelled.h - saying what a replay could not honour (issue 43, deliverable 4): a
 * snapshot feature the trace reader cannot turn into events (an action it does not
 * know, a pool of a kind it cannot place), or one the strategy does not model (private
 * memory pools replayed by a pool-blind strategy). Each is named once on stderr per
 * process and in every affected row's status ("ok; not modelled: X"), never silent. */
#ifndef FB_UNMODELLED_H
#define FB_UNMODELLED_H
#include <stddef.h>
#include <stdio.h>

/* Append "; not modelled: what" to status (size len) unless it is there already; print
 * "fragbench: warning: <source>: not modelled: <what>" on stderr the first time this
 * process sees that text (unless quiet), or, with `to` (a row's own buffer, rows run side
 * by side), into `to` every time: its writer says each line once (plan.c). Thread-safe. */
void unmodelled_note(char *status, size_t len, const char *source, const char *what, int quiet, FILE *to);

/* The note for a pool-blind strategy (no alloc_pool) replaying a trace with private pools. */
void unmodelled_pool_blind(char *out, size_t len, const char *strategy);

#endif
