/* stitch_fset.c - the `stitch` strategy's free sets: free blocks in best-fit order (size,
 * then address), kept in size bins (16 per power of two, a bitmap of the non-empty ones)
 * so that a lookup touches one small treap instead of one large one. Exact best fit:
 * bins are ordered by size and each bin is ordered inside. See stitch.h. */
#include "stitch.h"

/* (size, address), inlined into the bins' descents */
static inline int fs_cmp(const struct ordnode *a, const struct ordnode *b) {
  const struct sblock *x = ORD_ENTRY(a, struct sblock, node), *y = ORD_ENTRY(b, struct sblock, node);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

ORDSET_TYPED(fsbin, fs_cmp)

static unsigned bin_of(uint64_t size) {
  uint64_t u = size >> 9;
  if (u < FS_SUB) return (unsigned)u;
  unsigned fl = 63u - (unsigned)__builtin_clzll(u);
  unsigned sl = (unsigned)(u >> (fl - FS_SUB_BITS)) & (FS_SUB - 1);
  unsigned bin = FS_SUB + (fl - FS_SUB_BITS) * FS_SUB + sl;
  return bin < FS_NBINS ? bin : FS_NBINS - 1;
}

/* first non-empty bin >= i, or FS_NBINS */
static unsigned bin_next(const struct fset *fs, unsigned i) {
  if (i >= FS_NBINS) return FS_NBINS;
  unsigned w = i >> 6;
  uint64_t m = fs->nonempty[w] & (~0ull << (i & 63));
  while (!m) {
    if (++w >= FS_WORDS) return FS_NBINS;
    m = fs->nonempty[w];
  }
  return w * 64 + (unsigned)__builtin_ctzll(m);
}

/* last non-empty bin <= i, or FS_NBINS */
static unsigned bin_prev(const struct fset *fs, unsigned i) {
  unsigned w = i >> 6;
  uint64_t m = fs->nonempty[w] & (~0ull >> (63 - (i & 63)));
  while (!m) {
    if (w == 0) return FS_NBINS;
    m = fs->nonempty[--w];
  }
  return w * 64 + 63u - (unsigned)__builtin_clzll(m);
}

void fset_init(struct fset *fs) {
  fs->count = 0;
  for (unsigned i = 0; i < FS_WORDS; i++) fs->nonempty[i] = 0;
  for (unsigned i = 0; i < FS_NBINS; i++) ordset_init(&fs->bins[i], sb_cmp_size);
}

void fset_insert(struct fset *fs, struct sblock *b) {
  unsigned i = bin_of(b->size);
  fsbin_insert(&fs->bins[i], &b->node);
  fs->nonempty[i >> 6] |= 1ull << (i & 63);
  fs->count++;
}

void fset_erase(struct fset *fs, struct sblock *b) {
  unsigned i = bin_of(b->size);
  ordset_erase_inline(&fs->bins[i], &b->node);
  if (!fs->bins[i].count) fs->nonempty[i >> 6] &= ~(1ull << (i & 63));
  fs->count--;
}

struct sblock *fset_lower_bound(const struct fset *fs, uint64_t size) {
  if (!fs->count) return NULL;
  unsigned i = bin_of(size);
  if (fs->nonempty[i >> 6] & (1ull << (i & 63))) {
    struct sblock key = {.size = size};
    struct sblock *b = sb_of(fsbin_lower_bound(&fs->bins[i], &key.node));
    if (b) return b;
  }
  i = bin_next(fs, i + 1);
  return i < FS_NBINS ? sb_of(ordset_first_inline(&fs->bins[i])) : NULL;
}

struct sblock *fset_next(const struct fset *fs, const struct sblock *b) {
  struct sblock *n = sb_of(ordset_next_inline(&b->node));
  if (n) return n;
  unsigned i = bin_next(fs, bin_of(b->size) + 1);
  return i < FS_NBINS ? sb_of(ordset_first_inline(&fs->bins[i])) : NULL;
}

struct sblock *fset_first(const struct fset *fs) { return fset_lower_bound(fs, 0); }

struct sblock *fset_last(const struct fset *fs) {
  if (!fs->count) return NULL;
  unsigned i = bin_prev(fs, FS_NBINS - 1);
  return i < FS_NBINS ? sb_of(ordset_last_inline(&fs->bins[i])) : NULL;
}
