/* replay_open.h - what one row replays, opened: the workload (a generator by name, a
 * trace by content) and the strategy ("recorded" resolved to the snapshot's allocator,
 * with the snapshot's allocator settings unless the command line says otherwise).
 * Used by the replay engine (replay.c). */
#ifndef FB_REPLAY_OPEN_H
#define FB_REPLAY_OPEN_H
#include <stddef.h>
#include <stdint.h>
#include "replay.h"

#define HUGE_REQUEST (1ull << 48)   /* larger than any device: an OOM under every strategy (replay.c) */

/* "unknown workload 'x'; known: ..." (generators only) and "unknown allocator 'x'; known:
 * ..." (with `recorded` where it is accepted) into err, through lookup.h */
void replay_unknown_workload(const char *name, char *err);
void replay_unknown_allocator(const char *name, int with_recorded, char *err);
/* "gpt_train.pickle.gz" -> "gpt_train.pickle" */
void replay_trace_label(const char *path, char *out, size_t len);
/* a row's workload column: the generator spec, or the trace's label ("@N" for device N > 0) */
void replay_workload_label(const struct run_spec *s, char *out, size_t len);
/* the workload of s opened (percentages against percent_base) and its strategy resolved
 * against it, with its parameters in ap: the strategy's ops, w left open for the caller to
 * close; or NULL with err, nothing left open */
const struct allocator_ops *replay_open_row(const struct run_spec *s, struct workload *w, struct params *ap,
                                            uint64_t percent_base, char *err);
/* what a row of s will be named, without replaying it: r's workload, allocator (resolved
 * from "recorded") and params (percentages against the simulated H100's total), and its
 * strategy's blindness to caps (replay_note_blindness). 0, or -1 with err */
int replay_identity(const struct run_spec *s, struct run_result *r, char *err);
/* r->cap_blind and r->blind_unreached of ops under parameters ap (replay.h) */
void replay_note_blindness(const struct allocator_ops *ops, const struct params *ap, struct run_result *r);
/* 0, or -1 with err */
int replay_open_workload(const struct run_spec *s, struct workload *w, uint64_t percent_base, char *err);
/* the strategy's ops and its parameters in p, or NULL with err */
const struct allocator_ops *replay_resolve_allocator(const struct run_spec *s, const struct workload_info *info,
                                              struct params *p, uint64_t percent_base, int *adopted_keys, char *err);

#endif
