/* inputs.h - each trace a command replays, read once: while a command runs (cli_main
 * opens the scope around it), the first row, probe, bound or inference that asks for a
 * trace reads it whole into memory (event_buffer_load) and every later one replays that
 * buffer (trace_mem). Outside a scope (the tests calling the engine directly) nothing is
 * held and every replay reads its file as before. A trace whose reading fails is not held:
 * its rows read the file themselves and fail exactly where they failed before; nor is one
 * longer than a quarter of the host's memory (its rows stream it, as before). */
#ifndef FB_INPUTS_H
#define FB_INPUTS_H
#include "workload.h"

void inputs_begin(void);    /* open the scope: traces asked for are held from now on */
void inputs_end(void);      /* release every held trace and close the scope */
/* the trace (device trace_device, -1 = the first with events) in memory, read now if it
 * is not held yet; NULL outside a scope or where it could not be read. Thread-safe; the
 * buffer stays valid until inputs_forget(path) or inputs_end(). */
const struct event_buffer *inputs_get(const char *path, int trace_device);
/* the trace in memory: the one held for the command (inputs_get), or else read now into
 * *own (the caller frees it with event_buffer_free; zeroed when not used). NULL with err
 * when it cannot be read. */
const struct event_buffer *inputs_get_or_load(const char *path, int trace_device, struct event_buffer *own, char *err);
/* give a buffer's events their slots in the replay's map (livemap_slot_events), so that
 * every replay of it finds a block's entry without hashing; done for every trace held or
 * read here. Out of memory leaves the events without slots (replayed through the hash). */
void inputs_slot(struct event_buffer *b);
/* release every held device trace of path (no row will ask for it again) */
void inputs_forget(const char *path);

#endif
