/* pickle_frames.c - the frames pass of the snapshot reader (see pickle.h): short strings
 * and stack frame dicts kept by reference, each event's 'frames' list collected as it is
 * read, and an oom event's list turned into text when its dict is complete. PyTorch
 * shares frame dicts and their strings through the pickle memo, so memory grows with the
 * distinct code locations, not the trace; the bounds below stop keeping (frames then
 * read as unknown) rather than grow without limit on a pickle that shares nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pickle.h"

#define MAX_STRING 512              /* longer strings are not kept */
#define MAX_STRING_BYTES (32u << 20)
#define MAX_FRAMES (1u << 20)
#define MAX_CUR 256                 /* frames of one list kept (innermost first) */
#define MAX_TEXT 8000               /* text of one stack (an oom's, or a block's for explain): C++ frames come
                                       first and can be many; the Python frames at the end must fit */
#define MAX_TEXTS (1u << 16)        /* oom stacks kept as text (later ooms' frames read as unknown) */

struct frame { uint32_t name, file; int64_t line; };

struct pk_frames {
  char **str; uint32_t nstr, cap_str; size_t str_bytes;
  struct frame *fr; uint32_t nfr, cap_fr;
  uint32_t cur[MAX_CUR]; uint32_t ncur;
  int64_t gen;                      /* the frames list being collected */
  uint64_t gen_memo;                /* its memo index + 1 (0: not memoized): PyTorch shares one frames list between
                                       a segment_alloc and the alloc right after it, the second a memo GET */
  char **text; uint32_t ntext, cap_text;
  int allocs;                       /* alloc events get their stack's text too (pk_frames_keep_allocs) */
  uint64_t *saved_key;              /* memo index + 1 of a segments-list frames list -> its text (saved_ref) */
  uint32_t *saved_ref;
  uint32_t nsaved, cap_saved;       /* an open-addressing table, cap_saved a power of two (0: none yet) */
};

void pk_frames_keep_allocs(struct pk_reader *p) { if (p->fr) p->fr->allocs = 1; }
int pk_frames_allocs(const struct pk_reader *p) { return p->fr && p->fr->allocs; }

void pk_frames_drop(struct pk_reader *p, uint32_t ref) {
  if (!p->fr || !ref || ref > p->fr->ntext) return;
  free(p->fr->text[ref - 1]);
  p->fr->text[ref - 1] = NULL;
  /* the last texts dropped: their slots are taken again, so that a pass that drops what
   * it does not keep is not stopped by MAX_TEXTS */
  while (p->fr->ntext && !p->fr->text[p->fr->ntext - 1]) p->fr->ntext--;
}

int pk_frames_begin(struct pk_reader *p, char *err) {
  pk_frames_end(p);
  p->fr = calloc(1, sizeof *p->fr);
  if (!p->fr) return pk_fail(p, err, "out of memory (frames pass)");
  return 0;
}

void pk_frames_end(struct pk_reader *p) {
  struct pk_frames *f = p->fr;
  if (!f) return;
  for (uint32_t i = 0; i < f->nstr; i++) free(f->str[i]);
  for (uint32_t i = 0; i < f->ntext; i++) free(f->text[i]);
  free(f->str);
  free(f->fr);
  free(f->text);
  free(f->saved_key);
  free(f->saved_ref);
  free(f);
  p->fr = NULL;
}

static int grow(void **a, uint32_t *cap, size_t elem) {
  uint32_t nc = *cap ? *cap * 2 : 256;
  void *n = realloc(*a, (size_t)nc * elem);
  if (!n) return -1;
  *a = n;
  *cap = nc;
  return 0;
}

uint32_t pk_frames_string(struct pk_reader *p, const uint8_t *s, size_t n) {
  struct pk_frames *f = p->fr;
  if (n > MAX_STRING || f->str_bytes + n > MAX_STRING_BYTES) return 0;
  if (f->nstr == f->cap_str && grow((void **)&f->str, &f->cap_str, sizeof *f->str)) return 0;
  char *c = malloc(n + 1);
  if (!c) return 0;
  memcpy(c, s, n);
  c[n] = 0;
  f->str[f->nstr++] = c;
  f->str_bytes += n + 1;
  return f->nstr;
}

uint32_t pk_frames_new_frame(struct pk_reader *p) {
  struct pk_frames *f = p->fr;
  if (f->nfr >= MAX_FRAMES) return 0;
  if (f->nfr == f->cap_fr && grow((void **)&f->fr, &f->cap_fr, sizeof *f->fr)) return 0;
  f->fr[f->nfr++] = (struct frame){0, 0, -1};
  return f->nfr;
}

void pk_frames_field(struct pk_reader *p, uint32_t frame, uint8_t tok, const struct pk_val *v) {
  struct pk_frames *f = p->fr;
  if (!frame || frame > f->nfr) return;
  struct frame *x = &f->fr[frame - 1];
  uint32_t s = v->type == PK_STR && v->tok == TK_OTHER && v->v.i > 0 && (uint64_t)v->v.i <= f->nstr ? (uint32_t)v->v.i : 0;
  if (tok == TK_NAME) x->name = s;
  else if (tok == TK_FILENAME) x->file = s;
  else if (tok == TK_LINE && v->type == PK_INT) x->line = v->v.i;
}

int64_t pk_frames_list_start(struct pk_reader *p) {
  p->fr->ncur = 0;
  p->fr->gen_memo = 0;
  return ++p->fr->gen;
}

void pk_frames_list_memoized(struct pk_reader *p, const struct pk_val *v, uint64_t idx) {
  if (pk_frames_list_is_current(p, v)) p->fr->gen_memo = idx + 1;
}

int64_t pk_frames_list_of_memo(const struct pk_reader *p, uint64_t idx) {
  return p->fr && p->fr->gen_memo == idx + 1 ? p->fr->gen : 0;
}

int pk_frames_list_is_current(const struct pk_reader *p, const struct pk_val *list) {
  return p->fr && list->type == PK_LIST && (list->roles & R_FRAMES) && list->v.i == p->fr->gen;
}

void pk_frames_list_add(struct pk_reader *p, uint32_t frame) {
  struct pk_frames *f = p->fr;
  if (f->ncur < MAX_CUR) f->cur[f->ncur++] = frame;
}

uint32_t pk_frames_oom_text(struct pk_reader *p) {
  struct pk_frames *f = p->fr;
  char buf[MAX_TEXT + 1];
  size_t k = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < f->ncur && k < MAX_TEXT; i++) {
    uint32_t r = f->cur[i];
    const struct frame *x = r && r <= f->nfr ? &f->fr[r - 1] : NULL;
    const char *name = x && x->name ? f->str[x->name - 1] : "?";
    const char *file = x && x->file ? f->str[x->file - 1] : "?";
    int n = x && x->line >= 0 ? snprintf(buf + k, MAX_TEXT + 1 - k, "%s%s (%s:%lld)", k ? "; " : "", name, file, (long long)x->line)
                              : snprintf(buf + k, MAX_TEXT + 1 - k, "%s%s (%s)", k ? "; " : "", name, file);
    if (n < 0) break;
    k += (size_t)n;
  }
  if (k > MAX_TEXT) k = MAX_TEXT;
  buf[k] = 0;
  if (f->ntext >= MAX_TEXTS) return 0;
  if (f->ntext == f->cap_text && grow((void **)&f->text, &f->cap_text, sizeof *f->text)) return 0;
  char *c = strdup(buf);
  if (!c) return 0;
  f->text[f->ntext++] = c;
  return f->ntext;
}

const char *pk_oom_frames(const struct pk_reader *p, uint32_t ref) {
  return p->fr && ref && ref <= p->fr->ntext && p->fr->text[ref - 1] ? p->fr->text[ref - 1] : "";
}

static size_t saved_slot(uint64_t key, uint32_t cap) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1); }

void pk_frames_list_saved(struct pk_reader *p) {
  struct pk_frames *f = p->fr;
  if (!f || !f->gen_memo || f->nsaved >= MAX_TEXTS / 2) return;
  if ((f->nsaved + 1) * 2 > f->cap_saved) {
    uint32_t nc = f->cap_saved ? f->cap_saved * 2 : 256;
    uint64_t *nk = calloc(nc, sizeof *nk);
    uint32_t *nr = calloc(nc, sizeof *nr);
    if (!nk || !nr) { free(nk); free(nr); return; }
    for (uint32_t i = 0; i < f->cap_saved; i++) {
      if (!f->saved_key[i]) continue;
      size_t j = saved_slot(f->saved_key[i], nc);
      while (nk[j]) j = (j + 1) & (nc - 1);
      nk[j] = f->saved_key[i];
      nr[j] = f->saved_ref[i];
    }
    free(f->saved_key);
    free(f->saved_ref);
    f->saved_key = nk;
    f->saved_ref = nr;
    f->cap_saved = nc;
  }
  uint32_t ref = pk_frames_oom_text(p);
  if (!ref) return;
  size_t j = saved_slot(f->gen_memo, f->cap_saved);
  while (f->saved_key[j] && f->saved_key[j] != f->gen_memo) j = (j + 1) & (f->cap_saved - 1);
  if (!f->saved_key[j]) f->nsaved++;
  else pk_frames_drop(p, f->saved_ref[j]);
  f->saved_key[j] = f->gen_memo;
  f->saved_ref[j] = ref;
}

uint32_t pk_frames_saved(const struct pk_reader *p, uint64_t idx) {
  const struct pk_frames *f = p->fr;
  if (!f || !f->cap_saved) return 0;
  size_t j = saved_slot(idx + 1, f->cap_saved);
  while (f->saved_key[j]) {
    if (f->saved_key[j] == idx + 1) return f->saved_ref[j];
    j = (j + 1) & (f->cap_saved - 1);
  }
  return 0;
}

uint32_t pk_frames_dup(struct pk_reader *p, uint32_t ref) {
  struct pk_frames *f = p->fr;
  const char *t = pk_oom_frames(p, ref);
  if (!t[0] || f->ntext >= MAX_TEXTS) return 0;
  if (f->ntext == f->cap_text && grow((void **)&f->text, &f->cap_text, sizeof *f->text)) return 0;
  char *c = strdup(t);
  if (!c) return 0;
  f->text[f->ntext++] = c;
  return f->ntext;
}
