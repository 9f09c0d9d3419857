/* pickle.h - a streaming reader for PyTorch memory snapshots (torch.cuda.memory._dump_snapshot:
 * a pickle of plain dicts, lists, strings, ints, floats, bools and None, protocols 2-5).
 *
 * Not a general unpickler: it never builds the object tree. It runs the pickle stack
 * machine over small values (scalars, and one slot per open container), works out from
 * each container's place in the stack which part of a snapshot it can be (its "roles":
 * the top dict, device_traces, a device's event list, an event dict, ...), keeps only the
 * fields of event, segment and settings dicts, and hands out one record per event as soon
 * as the pickle appends it to its device's list. Stack frames and every other subtree are
 * read and dropped. Memory: the pickle stack (Python writes containers in batches of 1000
 * items) plus a memo of the few strings whose text matters (keys, action names), so it
 * does not grow with the trace.
 *
 * Files: pickle_reader.c (opcodes, stack), pickle_memo.c (the memo), pickle_vocab.c (the strings that matter),
 * pickle_schema.c (roles, fields, records), pickle_synth.c (a synthetic snapshot writer
 * for tests and the benchmark). */
#ifndef FB_PICKLE_H
#define FB_PICKLE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "trace_src.h"

/* value types on the pickle stack */
enum pk_type {
  PK_MARK, PK_NONE, PK_BOOL, PK_INT, PK_BIGINT /* beyond int64 */, PK_FLOAT,
  PK_STR, PK_BYTES, PK_DICT, PK_LIST, PK_TUPLE, PK_SET,
  PK_REF, /* a memo reference to something not kept: a container or a string we ignore */
  PK_FRAMEREF, /* frames pass: a memo reference to a stack frame dict (v.i = its ref) */
};

/* The strings whose text matters; every other string is TK_OTHER. */
enum pk_tok {
  TK_OTHER = 0,
  TK_NUM,   /* a short decimal number ("1".."32768": roundup_power2_divisions keys); value in i */
  /* top-level keys */
  TK_SEGMENTS, TK_DEVICE_TRACES, TK_ALLOCATOR_SETTINGS, TK_EXTERNAL_ANNOTATIONS,
  /* event keys */
  TK_ACTION, TK_ADDR, TK_SIZE, TK_STREAM, TK_TIME_US, TK_COMPILE_CONTEXT, TK_USER_METADATA,
  TK_FRAMES, TK_DEVICE_FREE, TK_DEVICE,
  /* segment keys (device and stream are shared with events) */
  TK_TOTAL_SIZE, TK_ADDRESS, TK_SEGMENT_POOL_ID, TK_IS_EXPANDABLE,
  /* actions */
  TK_ALLOC, TK_FREE_REQUESTED, TK_FREE_COMPLETED, TK_SEGMENT_ALLOC, TK_SEGMENT_FREE,
  TK_SEGMENT_MAP, TK_SEGMENT_UNMAP, TK_OOM, TK_SNAPSHOT, TK_USER_DEFINED,
  /* allocator_settings keys */
  TK_MAX_SPLIT_SIZE, TK_GC_THRESHOLD, TK_EXPANDABLE_SEGMENTS, TK_ROUNDUP_POWER2_DIVISIONS,
  /* stack frame keys (read only in a frames pass: pickle_frames.c) */
  TK_NAME, TK_FILENAME, TK_LINE,
  TK_COUNT
};
/* tokenize a string (any length; only short ones can match); *num set for TK_NUM */
enum pk_tok pk_vocab_token(const uint8_t *s, size_t n, int64_t *num);
const char *pk_vocab_text(enum pk_tok t);
const char *pk_type_name(enum pk_type t);

/* Snapshot roles a container can have (a bit set: while the pickle has not yet said which
 * container a value goes into, it may have several). R_IGN: a subtree nobody reads. */
enum {
  R_TOP = 1 << 0, R_DT = 1 << 1, R_DEVLIST = 1 << 2, R_EVENT = 1 << 3, R_SEGS = 1 << 4,
  R_SEG = 1 << 5, R_SET = 1 << 6, R_RPD = 1 << 7, R_IGN = 1 << 8,
  R_FRAMES = 1 << 9, R_FRAME = 1 << 10,   /* frames pass only: an event's 'frames' list, one frame dict */
};

/* event/segment dict fields (bits in pk_rec.has / .bad) */
enum { F_ACTION = 1, F_ADDR = 2, F_SIZE = 4, F_STREAM = 8, F_DEVFREE = 16, F_TOTAL = 32, F_DEVICE = 64, F_POOL = 128 };

/* a tuple of two ints 0 <= a, b < 2^31 (a segment_pool_id) is kept as a PK_TUPLE value
 * with tok PK_PAIR and v.i = a << 32 | b; any other tuple is opaque. The memo keeps such a
 * pair unless it is (0, 0) (a shared tuple object is written once and referenced after;
 * a reference to an unkept (0, 0) reads as an opaque value, which is pool 0 too) */
#define PK_PAIR TK_NUM

/* One event of device_traces[device], as the pickle gave it. Fields are raw: the snapshot
 * reader checks presence, types and ranges (bad: present with a wrong type). */
struct pk_rec {
  uint8_t action;            /* enum pk_tok (TK_OTHER: an action we do not know) */
  uint8_t has, bad;
  uint8_t bad_type;          /* enum pk_type of the first bad field */
  uint16_t ignored_keys;     /* keys this event has that nobody reads */
  int device;
  uint64_t index;            /* position in device_traces[device] */
  uint64_t offset;           /* stream offset of the event dict */
  int64_t addr, size, stream, device_free, total_size, seg_device;
  int64_t pool_id;           /* segments: segment_pool_id as a << 32 | b (F_POOL) */
  uint32_t frames_ref;       /* frames pass, oom events: pk_oom_frames(p, ref); 0 = none */
  uint8_t has_frames;        /* frames pass: its 'frames' list is the one just read */
  uint32_t saved_frames;     /* frames pass: its 'frames' list is one read in the segments list (a memo GET): its text */
};

/* allocator_settings, as far as seen */
struct pk_settings {
  int seen;
  int64_t max_split_size; int has_max_split_size;
  double gc_threshold; int has_gc_threshold;
  int expandable; int has_expandable;
  int64_t roundup[16]; int has_roundup;
};

#define PK_MAX_DEVICES 64
#ifndef PK_STACK_MAX                 /* the bounds may be set smaller (the fuzz targets: reached sooner) */
#define PK_STACK_MAX (1u << 17)      /* values on the pickle stack (Python batches 1000) */
#endif
/* memo values kept (strings that matter, scalars, frame dicts on a frames pass): a real
 * snapshot keeps thousands; the table is at most 2 x this x 24 bytes (48 MiB) */
#ifndef PK_MEMO_MAX
#define PK_MEMO_MAX (1u << 20)
#endif

struct pk_val {
  uint8_t type, tok;
  uint16_t roles;
  uint8_t emitted;           /* events were handed out from (below) this container */
  int32_t index;             /* R_DEVLIST: device index; R_SEG: position */
  union { int64_t i; double f; } v;   /* scalars; PK_MARK: index of the previous mark */
  uint64_t nelems;           /* lists: items appended so far */
  uint64_t offset;           /* stream offset where the value began */
  struct pk_rec rec;         /* R_EVENT / R_SEG dicts: fields so far */
};

/* a kept memo value: a scalar (vocabulary string, number, bool, None) or PK_REF */
struct pk_memo_entry { uint64_t key; union { int64_t i; double f; } v; uint8_t type, tok, used; };

struct pk_stats {            /* high-water marks (tests check that memory stays bounded) */
  size_t max_stack, max_queue, memo_kept;
  uint64_t bytes;            /* stream bytes consumed */
};

struct pk_frames;           /* pickle_frames.c */

struct pk_reader {
  struct trace_src *src;
  uint64_t op_off;           /* stream offset of the opcode being run (messages) */
  /* stack */
  struct pk_val *stack;
  size_t sp, cap;
  long mark;                 /* index of the last MARK, -1 if none */
  /* memo: only values worth keeping (vocabulary strings and scalars), keyed by index */
  struct pk_memo_entry *memo;
  size_t memo_cap, memo_n;
  uint64_t memo_len;         /* Python's len(memo): the next MEMOIZE index */
  /* records ready to hand out */
  struct pk_rec *queue;
  size_t q_head, q_n, q_cap;
  /* what the whole file says (complete once pk_next returned 0) */
  int proto, done;
  int dt_seen, segs_seen;
  uint64_t ignored_top;      /* top-level keys nobody reads */
  struct pk_settings settings;
  int64_t rpd_pending[16]; int rpd_pending_n;
  uint64_t seg_total[PK_MAX_DEVICES];
  /* the segments list (the allocator's state when the snapshot was taken), complete once
   * pk_next returned 0: address, size, stream and pool of each segment with an address */
  struct pk_seg { int64_t addr, size, stream, pool_id; int device; } *segs;
  size_t nsegs, segs_cap;
  /* the first action name this reader does not know (its text, when the pickle spelt it
   * out rather than by memo reference), for the message that names it */
  char unknown_action[33];
  uint64_t bad_pool_ids;     /* segments whose segment_pool_id is not a pair of ints (nor a memo reference) */
  char last_short[33];       /* the last short string read, and where: unknown_action's source */
  uint64_t last_short_off;
  struct pk_stats stats;
  struct pk_frames *fr;      /* the frames pass (pk_frames_begin), else NULL */
  char failed[FB_ERRLEN];    /* set by the first error: later calls repeat it */
};

int  pk_open(struct pk_reader *p, struct trace_src *src, char *err);
/* 1: *rec is the next event of any device, in file order; 0: the pickle ended (STOP);
 * <0: bad input, err = "FILE: byte N: what was expected". */
int  pk_next(struct pk_reader *p, struct pk_rec *rec, char *err);
int  pk_rewind(struct pk_reader *p, char *err);   /* ends a frames pass */

/* The frames pass (pickle_frames.c): after pk_rewind, pk_frames_begin makes the reader
 * keep short strings and stack frame dicts (memory grows with the distinct ones, up to a
 * bound), so that each oom event's record carries frames_ref: its stack as text,
 * innermost first, "name (file:line)" separated by "; ". Off by default: the ordinary
 * passes keep constant memory. */
int  pk_frames_begin(struct pk_reader *p, char *err);
const char *pk_oom_frames(const struct pk_reader *p, uint32_t ref);
/* in a frames pass, alloc events' records carry frames_ref too (explain: the stacks of
 * the largest live blocks); the caller drops each text it no longer needs */
void pk_frames_keep_allocs(struct pk_reader *p);
int  pk_frames_allocs(const struct pk_reader *p);
void pk_frames_drop(struct pk_reader *p, uint32_t ref);
/* reader and schema hooks */
void pk_frames_end(struct pk_reader *p);
uint32_t pk_frames_string(struct pk_reader *p, const uint8_t *s, size_t n);
uint32_t pk_frames_new_frame(struct pk_reader *p);
void pk_frames_field(struct pk_reader *p, uint32_t frame, uint8_t tok, const struct pk_val *v);
int64_t pk_frames_list_start(struct pk_reader *p);
/* the frames list being collected was memoized at idx (a memo PUT of it) */
void pk_frames_list_memoized(struct pk_reader *p, const struct pk_val *v, uint64_t idx);
/* a memo GET of idx: the frames list being collected (its generation), or 0 */
int64_t pk_frames_list_of_memo(const struct pk_reader *p, uint64_t idx);
/* A block's frames list of the segments list is complete (its dict's SETITEMS): its text is
 * kept by its memo index, since the trace's event of that block names the same list by a
 * memo GET (PyTorch 2.11 shares it). */
void pk_frames_list_saved(struct pk_reader *p);
/* the text kept for the list memoized at idx (pk_frames_list_saved), or 0 */
uint32_t pk_frames_saved(const struct pk_reader *p, uint64_t idx);
/* a copy of text ref (a record's own, for the consumer to drop), or 0 */
uint32_t pk_frames_dup(struct pk_reader *p, uint32_t ref);
int  pk_frames_list_is_current(const struct pk_reader *p, const struct pk_val *list);
void pk_frames_list_add(struct pk_reader *p, uint32_t frame);
uint32_t pk_frames_oom_text(struct pk_reader *p);
void pk_close(struct pk_reader *p);

/* "FILE: byte N: <what>" into err, N the offset of the opcode being run; returns -1 */
int pk_fail(struct pk_reader *p, char *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* schema hooks (pickle_schema.c), called by the opcode machine */
uint16_t pk_child_roles(const struct pk_reader *p, uint8_t type, int32_t *index);
int pk_schema_setitems(struct pk_reader *p, struct pk_val *dict, struct pk_val *kv, size_t n, char *err);
int pk_schema_appends(struct pk_reader *p, struct pk_val *list, struct pk_val *items, size_t n, char *err);
int pk_schema_consume(struct pk_reader *p, const struct pk_val *v, const char *how, char *err);
int pk_schema_stop(struct pk_reader *p, const struct pk_val *top, char *err);
int pk_queue_push(struct pk_reader *p, const struct pk_rec *r, char *err);

/* A synthetic snapshot (pickle protocol 4) for tests and the benchmark: nevents events
 * on device 0 (alloc/free_completed pairs, a few segment events), each with a 'frames'
 * list of nframes frame dicts shared through the memo as PyTorch writes them. Returns 0
 * or -1 on a write error. */
int pickle_synth_snapshot(FILE *f, uint64_t nevents, int nframes, uint64_t seed);


/* the memo (pickle_memo.c): the kept value of memo index key, or NULL */
static inline size_t pk_memo_slot(uint64_t k, size_t cap) {   /* Fibonacci hashing: top bits */
  return (size_t)((k * 0x9E3779B97F4A7C15ULL) >> (64 - __builtin_ctzll(cap)));
}
static inline struct pk_memo_entry *pk_memo_find(struct pk_reader *p, uint64_t key) {
  if (!p->memo_cap) return NULL;
  size_t mask = p->memo_cap - 1;
  for (size_t i = pk_memo_slot(key, p->memo_cap);; i = (i + 1) & mask) {
    if (!p->memo[i].used) return NULL;
    if (p->memo[i].key == key) return &p->memo[i];
  }
}
/* MEMOIZE/PUT of the value on top of the stack at index idx: 0, or -1 with err */
int pk_memo_put(struct pk_reader *p, uint64_t idx, char *err);
/* pickle_vocab.c: the name of an opcode the reader refuses, or NULL */
const char *pk_unsupported_opcode(int op);

#endif
