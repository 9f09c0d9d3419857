/* pickle_reader.c - the pickle stack machine of the snapshot reader: opcodes of protocols
 * 2-5 for plain data (dicts, lists, tuples, sets, strings, bytes, ints, floats, bools,
 * None) and the stack of small values (the memo: pickle_memo.c; opcode names: pickle_vocab.c).
 * What a container means is left to
 * pickle_schema.c; this file only moves values and reports malformed pickles with the byte
 * offset of the opcode at fault. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "pickle.h"

/* ---- errors ---- */

int pk_fail(struct pk_reader *p, char *err, const char *fmt, ...) {   /* "FILE: byte N: what" */
  va_list ap;
  va_start(ap, fmt);
  src_verror_at(p->src, 1, p->op_off, err, fmt, ap);
  va_end(ap);
  return -1;
}

static int truncated(struct pk_reader *p, char *err, const char *what) {
  return src_error_at(p->src, src_offset(p->src), err, "file ends inside %s (truncated pickle: expected more bytes, then STOP)", what);
}

/* n argument bytes of the current opcode at src->p, or an error */
static int need_slow(struct pk_reader *p, size_t n, const char *what, char *err) {
  int rc = src_fill(p->src, n, err);
  if (rc > 0) return 0;
  if (rc < 0) return -1;
  return truncated(p, err, what);
}

static inline int need(struct pk_reader *p, size_t n, const char *what, char *err) {
  return (size_t)(p->src->end - p->src->p) >= n ? 0 : need_slow(p, n, what, err);
}

static uint64_t le(const uint8_t *b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | b[i];
  return v;
}

/* ---- stack ---- */

static struct pk_val *push_grow(struct pk_reader *p, char *err) {
  if (p->cap >= PK_STACK_MAX) {
    pk_fail(p, err, "more than %u values on the pickle stack (Python writes containers in batches of 1000)",
            (unsigned)PK_STACK_MAX);
    return NULL;
  }
  /* from 64 values (9 KiB), doubling: a small pickle costs little to open (1024 at once
   * was 136 KiB, past ASan's small-chunk sizes: an mmap, page faults and a munmap for each
   * input, a third of a small input's time in `make fuzz`); the caps stay powers of two,
   * so the bound is met at exactly PK_STACK_MAX */
  size_t nc = p->cap ? p->cap * 2 : 64;
  struct pk_val *ns = realloc(p->stack, nc * sizeof *ns);
  if (!ns) {
    pk_fail(p, err, "out of memory (%zu stack values)", nc);
    return NULL;
  }
  p->stack = ns;
  p->cap = nc;
  return &p->stack[p->sp];
}

static inline struct pk_val *push_raw(struct pk_reader *p, char *err) {
  if (__builtin_expect(p->sp == p->cap, 0) && !push_grow(p, err)) return NULL;
  struct pk_val *v = &p->stack[p->sp++];
  if (__builtin_expect(p->sp > p->stats.max_stack, 0)) p->stats.max_stack = p->sp;
  v->roles = 0;
  v->emitted = 0;
  v->offset = p->op_off;
  return v;
}

static inline int push_scalar(struct pk_reader *p, uint8_t type, uint8_t tok, int64_t i, char *err) {
  struct pk_val *v = push_raw(p, err);
  if (!v) return -1;
  v->type = type;
  v->tok = tok;
  v->v.i = i;
  return 0;
}

static int push_container(struct pk_reader *p, uint8_t type, char *err) {
  int32_t index = -1;
  uint16_t roles = pk_child_roles(p, type, &index);
  struct pk_val *v = push_raw(p, err);
  if (!v) return -1;
  v->type = type;
  v->tok = TK_OTHER;
  v->roles = roles;
  v->index = index;
  v->nelems = 0;
  if (roles & (R_EVENT | R_SEG)) {
    memset(&v->rec, 0, sizeof v->rec);
    v->rec.offset = p->op_off;
  }
  if (__builtin_expect(p->fr != NULL, 0)) {   /* frames pass */
    if (type == PK_DICT && (roles & R_FRAME) && !(roles & R_SEG)) v->index = (int32_t)pk_frames_new_frame(p);
    if (type == PK_LIST && (roles & R_FRAMES)) v->v.i = pk_frames_list_start(p);
  }
  return 0;
}

/* the k values on top, none of them a MARK */
static int top_values(struct pk_reader *p, size_t k, const char *op, char *err) {
  if (p->sp < k || (p->mark >= 0 && (size_t)p->mark + k >= p->sp))
    return pk_fail(p, err, "%s needs %zu value%s on the stack above the last MARK", op, k, k == 1 ? "" : "s");
  return 0;
}

/* items above the last MARK: returns their count, or -1 */
static long region(struct pk_reader *p, const char *op, char *err) {
  if (p->mark < 0) return pk_fail(p, err, "%s without a MARK before it", op);
  return (long)(p->sp - (size_t)p->mark - 1);
}

static void drop_region(struct pk_reader *p) {
  size_t m = (size_t)p->mark;
  p->mark = (long)p->stack[m].v.i;
  p->sp = m;
}

static int consume(struct pk_reader *p, size_t from, size_t to, const char *how, char *err) {
  for (size_t i = from; i < to; i++)
    if (p->stack[i].emitted && pk_schema_consume(p, &p->stack[i], how, err)) return -1;
  return 0;
}

/* ---- memo (pickle_memo.c keeps it): a GET pushes what was kept ---- */

static inline int memo_get(struct pk_reader *p, uint64_t idx, char *err) {
  if (__builtin_expect(p->fr != NULL, 0)) {         /* frames pass: the frames list just collected, shared again */
    int64_t gen = pk_frames_list_of_memo(p, idx);
    uint32_t saved = gen ? 0 : pk_frames_saved(p, idx);   /* a block's list of the segments list: its text */
    if (gen || saved) {
      if (push_scalar(p, PK_LIST, TK_OTHER, gen ? gen : -(int64_t)saved, err)) return -1;
      p->stack[p->sp - 1].roles = R_FRAMES;
      p->stack[p->sp - 1].nelems = 0;
      p->stack[p->sp - 1].index = -1;
      return 0;
    }
  }
  struct pk_memo_entry *e = pk_memo_find(p, idx);
  if (e) return push_scalar(p, e->type, e->tok, e->v.i, err);
  if (idx >= p->memo_len)
    return pk_fail(p, err, "memo GET of index %llu, which was never PUT", (unsigned long long)idx);
  return push_scalar(p, PK_REF, TK_OTHER, 0, err);
}

/* ---- strings, ints, floats ---- */

static int read_string(struct pk_reader *p, uint64_t n, uint8_t type, char *err) {
  int64_t num = 0;
  uint8_t tok = TK_OTHER;
  if (type == PK_STR && n <= 32) {
    if (need(p, (size_t)n, "a string", err)) return -1;
    tok = (uint8_t)pk_vocab_token(p->src->p, (size_t)n, &num);
    if (tok == TK_OTHER) {                         /* kept for naming an unknown action */
      memcpy(p->last_short, p->src->p, (size_t)n);
      p->last_short[n] = 0;
      p->last_short_off = p->op_off;
    }
    if (__builtin_expect(tok >= TK_NAME, 0) && !p->fr) tok = TK_OTHER;   /* frame keys: only the frames pass keeps them */
    if (__builtin_expect(p->fr != NULL, 0) && tok == TK_OTHER) num = pk_frames_string(p, p->src->p, (size_t)n);
    p->src->p += n;
  } else if (p->fr && type == PK_STR && n <= 512) {   /* frames pass: a file name, kept */
    if (need(p, (size_t)n, "a string", err)) return -1;
    num = pk_frames_string(p, p->src->p, (size_t)n);
    p->src->p += n;
  } else {
    int rc = src_skip(p->src, n, err);
    if (rc < 0) return -1;
    if (rc == 0) return truncated(p, err, type == PK_STR ? "a string" : "a bytes object");
  }
  return push_scalar(p, type, tok, num, err);
}

static int read_long(struct pk_reader *p, uint64_t n, char *err) {
  if (n > 8) {
    int rc = src_skip(p->src, n, err);
    if (rc < 0) return -1;
    if (rc == 0) return truncated(p, err, "a long integer");
    return push_scalar(p, PK_BIGINT, TK_OTHER, 0, err);
  }
  if (need(p, (size_t)n, "a long integer", err)) return -1;
  uint64_t v = le(p->src->p, (int)n);
  if (n && n < 8 && (p->src->p[n - 1] & 0x80)) v |= ~0ULL << (8 * n);   /* sign-extend */
  p->src->p += n;
  return push_scalar(p, PK_INT, TK_OTHER, (int64_t)v, err);
}

/* ---- opcodes ---- */


static int setitems(struct pk_reader *p, struct pk_val *dict, size_t first, size_t n, const char *op, char *err) {
  if (dict->type != PK_DICT)
    return pk_fail(p, err, "%s onto a %s (expected a dict below the key/value pairs)", op, pk_type_name(dict->type));
  if (n & 1) return pk_fail(p, err, "%s with an odd number of items (%zu): expected key/value pairs", op, n);
  return pk_schema_setitems(p, dict, &p->stack[first], n / 2, err);
}

static int appends(struct pk_reader *p, struct pk_val *list, size_t first, size_t n, const char *op, char *err) {
  if (list->type != PK_LIST)
    return pk_fail(p, err, "%s onto a %s (expected a list below the items)", op, pk_type_name(list->type));
  return pk_schema_appends(p, list, &p->stack[first], n, err);
}

/* collapse the region above the last mark into one new container */
static int build_from_region(struct pk_reader *p, uint8_t type, const char *op, char *err) {
  long n = region(p, op, err);
  if (n < 0) return -1;
  size_t first = (size_t)p->mark + 1;
  if (type == PK_TUPLE || type == PK_SET) {
    if (consume(p, first, p->sp, op, err)) return -1;
    drop_region(p);
    return push_container(p, type, err);
  }
  /* DICT / LIST: the new container takes the items; they sit above it untouched */
  drop_region(p);
  size_t at = p->sp;
  if (push_container(p, type, err)) return -1;
  struct pk_val *c = &p->stack[at];
  if (type == PK_DICT) {
    if (n & 1) return pk_fail(p, err, "%s with an odd number of items (%ld): expected key/value pairs", op, n);
    return pk_schema_setitems(p, c, &p->stack[first], (size_t)n / 2, err);
  }
  if (n && (c->roles & (R_DT | R_DEVLIST | R_SEGS)) && !(c->roles & R_IGN))
    return pk_fail(p, err, "%s: a device trace built with the LIST opcode is not supported "
                "(expected EMPTY_LIST then APPEND/APPENDS, as Python's pickler writes)", op);
  c->roles &= (uint16_t)~(R_DT | R_DEVLIST | R_SEGS);
  return consume(p, first, first + (size_t)n, op, err);
}

/* run opcodes until a record is queued or STOP */
static int run(struct pk_reader *p, char *err) {
  struct trace_src *s = p->src;
  while (!p->q_n && !p->done) {
    p->op_off = src_offset(s);
    int rc = src_need(s, 1, err);
    if (rc < 0) return -1;
    if (rc == 0) return truncated(p, err, p->op_off ? "the pickle" : "an empty file");
    int op = *s->p++;
    switch (op) {
    case 0x80: {                                   /* PROTO */
      if (need(p, 1, "PROTO", err)) return -1;
      int v = *s->p++;
      if (v < 2 || v > 5) return pk_fail(p, err, "pickle protocol %d not supported (expected 2..5)", v);
      p->proto = v;
      break;
    }
    case 0x95:                                     /* FRAME: framing is transparent */
      if (need(p, 8, "FRAME", err)) return -1;
      s->p += 8;
      break;
    case '.': {                                    /* STOP */
      if (top_values(p, 1, "STOP", err)) return -1;
      if (consume(p, 0, p->sp - 1, "STOP (left on the stack)", err)) return -1;
      if (pk_schema_stop(p, &p->stack[p->sp - 1], err)) return -1;
      p->done = 1;
      break;
    }
    case '(': {                                    /* MARK */
      long prev = p->mark;
      if (push_scalar(p, PK_MARK, TK_OTHER, prev, err)) return -1;
      p->mark = (long)p->sp - 1;
      break;
    }
    case '}': if (push_container(p, PK_DICT, err)) return -1; break;
    case ']': if (push_container(p, PK_LIST, err)) return -1; break;
    case ')': if (push_container(p, PK_TUPLE, err)) return -1; break;
    case 0x8f: if (push_container(p, PK_SET, err)) return -1; break;
    case 's': {                                    /* SETITEM */
      if (top_values(p, 3, "SETITEM", err)) return -1;
      if (setitems(p, &p->stack[p->sp - 3], p->sp - 2, 2, "SETITEM", err)) return -1;
      p->sp -= 2;
      break;
    }
    case 'u': {                                    /* SETITEMS */
      long n = region(p, "SETITEMS", err);
      if (n < 0) return -1;
      if (p->mark < 1) return pk_fail(p, err, "SETITEMS with nothing below its MARK (expected a dict)");
      if (setitems(p, &p->stack[p->mark - 1], (size_t)p->mark + 1, (size_t)n, "SETITEMS", err)) return -1;
      drop_region(p);
      break;
    }
    case 'a': {                                    /* APPEND */
      if (top_values(p, 2, "APPEND", err)) return -1;
      if (appends(p, &p->stack[p->sp - 2], p->sp - 1, 1, "APPEND", err)) return -1;
      p->sp -= 1;
      break;
    }
    case 'e': {                                    /* APPENDS */
      long n = region(p, "APPENDS", err);
      if (n < 0) return -1;
      if (p->mark < 1) return pk_fail(p, err, "APPENDS with nothing below its MARK (expected a list)");
      if (appends(p, &p->stack[p->mark - 1], (size_t)p->mark + 1, (size_t)n, "APPENDS", err)) return -1;
      drop_region(p);
      break;
    }
    case 0x90: {                                   /* ADDITEMS */
      long n = region(p, "ADDITEMS", err);
      if (n < 0) return -1;
      if (p->mark < 1 || p->stack[p->mark - 1].type != PK_SET)
        return pk_fail(p, err, "ADDITEMS onto a non-set (expected a set below the MARK)");
      if (consume(p, (size_t)p->mark + 1, p->sp, "ADDITEMS", err)) return -1;
      drop_region(p);
      break;
    }
    case 0x85: case 0x86: case 0x87: {             /* TUPLE1..3 */
      size_t k = (size_t)(op - 0x84);
      if (top_values(p, k, "TUPLE1/2/3", err)) return -1;
      if (consume(p, p->sp - k, p->sp, "a tuple", err)) return -1;
      const struct pk_val *a = &p->stack[p->sp - k], *b = a + 1;
      int pair = k == 2 && a->type == PK_INT && b->type == PK_INT && a->v.i >= 0 && b->v.i >= 0 &&
                 a->v.i < ((int64_t)1 << 31) && b->v.i < ((int64_t)1 << 31);
      int64_t pv = pair ? a->v.i << 32 | b->v.i : 0;
      p->sp -= k;
      if (push_container(p, PK_TUPLE, err)) return -1;
      if (pair) { p->stack[p->sp - 1].tok = PK_PAIR; p->stack[p->sp - 1].v.i = pv; }
      break;
    }
    case 't': if (build_from_region(p, PK_TUPLE, "TUPLE", err)) return -1; break;
    case 0x91: if (build_from_region(p, PK_SET, "FROZENSET", err)) return -1; break;
    case 'd': if (build_from_region(p, PK_DICT, "DICT", err)) return -1; break;
    case 'l': if (build_from_region(p, PK_LIST, "LIST", err)) return -1; break;
    case '0':                                      /* POP (a MARK on top: pops it) */
      if (!p->sp) return pk_fail(p, err, "POP on an empty stack");
      if (p->mark == (long)p->sp - 1) {
        drop_region(p);
      } else {
        if (consume(p, p->sp - 1, p->sp, "POP", err)) return -1;
        p->sp--;
      }
      break;
    case '1':                                      /* POP_MARK */
      if (region(p, "POP_MARK", err) < 0) return -1;
      if (consume(p, (size_t)p->mark + 1, p->sp, "POP_MARK", err)) return -1;
      drop_region(p);
      break;
    case '2': {                                    /* DUP */
      if (top_values(p, 1, "DUP", err)) return -1;
      struct pk_val copy = p->stack[p->sp - 1];
      struct pk_val *v = push_raw(p, err);
      if (!v) return -1;
      *v = copy;
      v->emitted = 0;
      v->roles = R_IGN;
      break;
    }
    case 'q':                                      /* BINPUT */
      if (need(p, 1, "BINPUT", err)) return -1;
      if (pk_memo_put(p, *s->p++, err)) return -1;
      break;
    case 'r':                                      /* LONG_BINPUT */
      if (need(p, 4, "LONG_BINPUT", err)) return -1;
      if (pk_memo_put(p, le(s->p, 4), err)) return -1;
      s->p += 4;
      break;
    case 0x94:                                     /* MEMOIZE */
      if (pk_memo_put(p, p->memo_len, err)) return -1;
      break;
    case 'h':                                      /* BINGET */
      if (need(p, 1, "BINGET", err)) return -1;
      if (memo_get(p, *s->p++, err)) return -1;
      break;
    case 'j':                                      /* LONG_BINGET */
      if (need(p, 4, "LONG_BINGET", err)) return -1;
      { uint64_t idx = le(s->p, 4); s->p += 4; if (memo_get(p, idx, err)) return -1; }
      break;
    case 'J':                                      /* BININT: signed 32 bits */
      if (need(p, 4, "BININT", err)) return -1;
      { int32_t v = (int32_t)(uint32_t)le(s->p, 4); s->p += 4; if (push_scalar(p, PK_INT, TK_OTHER, v, err)) return -1; }
      break;
    case 'K':                                      /* BININT1 */
      if (need(p, 1, "BININT1", err)) return -1;
      if (push_scalar(p, PK_INT, TK_OTHER, *s->p++, err)) return -1;
      break;
    case 'M':                                      /* BININT2 */
      if (need(p, 2, "BININT2", err)) return -1;
      { int64_t v = (int64_t)le(s->p, 2); s->p += 2; if (push_scalar(p, PK_INT, TK_OTHER, v, err)) return -1; }
      break;
    case 0x8a:                                     /* LONG1 */
      if (need(p, 1, "LONG1", err)) return -1;
      if (read_long(p, *s->p++, err)) return -1;
      break;
    case 0x8b: {                                   /* LONG4 */
      if (need(p, 4, "LONG4", err)) return -1;
      int32_t n = (int32_t)(uint32_t)le(s->p, 4);
      s->p += 4;
      if (n < 0) return pk_fail(p, err, "LONG4 with a negative length %d", n);
      if (read_long(p, (uint64_t)n, err)) return -1;
      break;
    }
    case 'G': {                                    /* BINFLOAT: big-endian double */
      if (need(p, 8, "BINFLOAT", err)) return -1;
      uint64_t bits = 0;
      for (int i = 0; i < 8; i++) bits = (bits << 8) | s->p[i];
      s->p += 8;
      struct pk_val *v = push_raw(p, err);
      if (!v) return -1;
      v->type = PK_FLOAT;
      v->tok = TK_OTHER;
      memcpy(&v->v.f, &bits, sizeof bits);
      break;
    }
    case 0x8c: case 'U': case 'C':                 /* SHORT_BINUNICODE, SHORT_BINSTRING, SHORT_BINBYTES */
      if (need(p, 1, "a short string", err)) return -1;
      if (read_string(p, *s->p++, op == 'C' ? PK_BYTES : PK_STR, err)) return -1;
      break;
    case 'X': case 'B':                            /* BINUNICODE, BINBYTES: 4-byte length */
      if (need(p, 4, "a string length", err)) return -1;
      { uint64_t n = le(s->p, 4); s->p += 4; if (read_string(p, n, op == 'B' ? PK_BYTES : PK_STR, err)) return -1; }
      break;
    case 'T': {                                    /* BINSTRING: signed 4-byte length */
      if (need(p, 4, "a string length", err)) return -1;
      int32_t n = (int32_t)(uint32_t)le(s->p, 4);
      s->p += 4;
      if (n < 0) return pk_fail(p, err, "BINSTRING with a negative length %d", n);
      if (read_string(p, (uint64_t)n, PK_STR, err)) return -1;
      break;
    }
    case 0x8d: case 0x8e: case 0x96:               /* BINUNICODE8, BINBYTES8, BYTEARRAY8 */
      if (need(p, 8, "a string length", err)) return -1;
      { uint64_t n = le(s->p, 8); s->p += 8; if (read_string(p, n, op == 0x8d ? PK_STR : PK_BYTES, err)) return -1; }
      break;
    case 'N': if (push_scalar(p, PK_NONE, TK_OTHER, 0, err)) return -1; break;
    case 0x88: if (push_scalar(p, PK_BOOL, TK_OTHER, 1, err)) return -1; break;
    case 0x89: if (push_scalar(p, PK_BOOL, TK_OTHER, 0, err)) return -1; break;
    default: {
      const char *name = pk_unsupported_opcode(op);
      if (name)
        return pk_fail(p, err, "opcode 0x%02x (%s) not supported: a memory snapshot holds only plain dicts, lists, "
                    "tuples, strings, bytes, numbers, bools and None", op, name);
      return pk_fail(p, err, "unknown pickle opcode 0x%02x (expected a protocol 2-5 opcode)", op);
    }
    }
  }
  return 0;
}

int pk_open(struct pk_reader *p, struct trace_src *src, char *err) {
  (void)err;
  memset(p, 0, sizeof *p);
  p->src = src;
  p->mark = -1;
  return 0;
}

int pk_next(struct pk_reader *p, struct pk_rec *rec, char *err) {
  if (p->failed[0]) {
    snprintf(err, FB_ERRLEN, "%s", p->failed);
    return -1;
  }
  if (!p->q_n && !p->done && run(p, err)) {
    snprintf(p->failed, sizeof p->failed, "%s", err);
    return -1;
  }
  if (!p->q_n) {
    p->stats.bytes = src_offset(p->src);
    return 0;
  }
  *rec = p->queue[p->q_head++];
  if (--p->q_n == 0) p->q_head = 0;
  return 1;
}

int pk_queue_push(struct pk_reader *p, const struct pk_rec *r, char *err) {
  if (p->q_head + p->q_n == p->q_cap) {
    size_t nc = p->q_cap ? p->q_cap * 2 : 64;   /* doubling from 6 KiB, as the stack */
    struct pk_rec *nq = realloc(p->queue, nc * sizeof *nq);
    if (!nq) return pk_fail(p, err, "out of memory (%zu queued events)", nc);
    p->queue = nq;
    p->q_cap = nc;
  }
  p->queue[p->q_head + p->q_n++] = *r;
  if (p->q_n > p->stats.max_queue) p->stats.max_queue = p->q_n;
  return 0;
}

int pk_rewind(struct pk_reader *p, char *err) {
  pk_frames_end(p);
  if (src_rewind(p->src, err)) return -1;
  struct pk_val *stack = p->stack;
  struct pk_memo_entry *memo = p->memo;
  struct pk_rec *queue = p->queue;
  struct pk_seg *segs = p->segs;   /* kept, emptied: the next pass reads the list again */
  size_t cap = p->cap, memo_cap = p->memo_cap, q_cap = p->q_cap, segs_cap = p->segs_cap;
  struct pk_stats stats = p->stats;
  struct trace_src *src = p->src;
  memset(p, 0, sizeof *p);
  if (memo) memset(memo, 0, memo_cap * sizeof *memo);
  p->src = src;
  p->stack = stack; p->cap = cap;
  p->memo = memo; p->memo_cap = memo_cap;
  p->queue = queue; p->q_cap = q_cap;
  p->segs = segs; p->segs_cap = segs_cap;
  p->stats = stats;
  p->mark = -1;
  return 0;
}

void pk_close(struct pk_reader *p) {
  pk_frames_end(p);
  free(p->stack);
  free(p->memo);
  free(p->queue);
  free(p->segs);
  p->stack = NULL;
  p->memo = NULL;
  p->queue = NULL;
  p->segs = NULL;
}
