/* pickle_memo.c - the snapshot reader's memo: Python's memo table, keeping only the
 * values worth keeping (vocabulary strings, scalars, and on a frames pass the stack frame
 * dicts by reference), in an open-addressing hash table keyed by memo index; everything
 * else is remembered as an opaque reference. Lookups are inline in pickle.h. */
#include <stdlib.h>
#include "pickle.h"


static int memo_insert(struct pk_reader *p, uint64_t key, const struct pk_val *v, char *err) {
  if (p->memo_n >= PK_MEMO_MAX)
    return pk_fail(p, err, "more than %u memo values kept (the bound on a snapshot's memo; a real one keeps thousands)",
                   (unsigned)PK_MEMO_MAX);
  if ((p->memo_n + 1) * 2 > p->memo_cap) {
    size_t nc = p->memo_cap ? p->memo_cap * 2 : 64;
    struct pk_memo_entry *nm = calloc(nc, sizeof *nm);
    if (!nm) return pk_fail(p, err, "out of memory (%zu memo entries)", nc);
    for (size_t j = 0; j < p->memo_cap; j++) {
      if (!p->memo[j].used) continue;
      size_t i = pk_memo_slot(p->memo[j].key, nc);
      while (nm[i].used) i = (i + 1) & (nc - 1);
      nm[i] = p->memo[j];
    }
    free(p->memo);
    p->memo = nm;
    p->memo_cap = nc;
  }
  size_t mask = p->memo_cap - 1;
  size_t i = pk_memo_slot(key, p->memo_cap);
  while (p->memo[i].used) i = (i + 1) & mask;
  p->memo[i].used = 1;
  p->memo[i].key = key;
  p->memo[i].type = v->type;
  p->memo[i].tok = v->tok;
  p->memo[i].v.i = v->v.i;
  p->memo_n++;
  if (p->memo_n > p->stats.memo_kept) p->stats.memo_kept = p->memo_n;
  return 0;
}

static int keepable(const struct pk_reader *p, const struct pk_val *v) {
  switch (v->type) {
  case PK_STR: return v->tok != TK_OTHER || (p->fr && v->v.i > 0);   /* frames pass: kept strings too */
  case PK_FRAMEREF: return 1;
  case PK_NONE: case PK_BOOL: case PK_INT: case PK_BIGINT: case PK_FLOAT: return 1;
  case PK_TUPLE: return v->tok == PK_PAIR && v->v.i != 0;   /* a private pool's segment_pool_id: as many as its segments */
  default: return 0;
  }
}

int pk_memo_put(struct pk_reader *p, uint64_t idx, char *err) {
  if (p->sp < 1 || (p->mark >= 0 && (size_t)p->mark + 1 >= p->sp))
    return pk_fail(p, err, "a memo PUT needs 1 value on the stack above the last MARK");
  const struct pk_val *v = &p->stack[p->sp - 1];
  if (p->fr) pk_frames_list_memoized(p, v, idx);   /* frames pass: the list being collected, shared by the next event */
  struct pk_val fref;
  if (p->fr && v->type == PK_DICT && (v->roles & R_FRAME) && !(v->roles & R_SEG) && v->index > 0) {
    fref = (struct pk_val){.type = PK_FRAMEREF, .tok = TK_OTHER};   /* frames pass: a frame dict, by reference */
    fref.v.i = v->index;
    v = &fref;
  }
  int fresh = idx >= p->memo_len;
  if (fresh) p->memo_len = idx + 1;
  struct pk_memo_entry *e = fresh ? NULL : pk_memo_find(p, idx);
  if (e) {                        /* re-put: the old value is gone */
    e->type = keepable(p, v) ? v->type : PK_REF;
    e->tok = v->tok;
    e->v.i = v->v.i;
    return 0;
  }
  return keepable(p, v) ? memo_insert(p, idx, v, err) : 0;
}
