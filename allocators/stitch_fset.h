/* stitch_fset.h - the `stitch` strategy's free sets, inline (included by stitch.h after
 * the structures): free blocks in best-fit order (size, then address), kept in size bins
 * (16 per power of two; a bitmap of the non-empty bins and one of the non-empty bitmap
 * words) so that a lookup touches one small treap instead of one large one. Exact best
 * fit: bins are ordered by size and each bin is ordered inside. The bins are treaps
 * (harness/common/ordset.h) with the comparison inlined. The rarely used parts are in
 * stitch_fset.c. */
#ifndef FB_STITCH_FSET_H
#define FB_STITCH_FSET_H

/* (size, address) */
static inline int fs_cmp(const struct ordnode *a, const struct ordnode *b) {
  const struct sblock *x = ORD_ENTRY(a, struct sblock, node), *y = ORD_ENTRY(b, struct sblock, node);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

ORDSET_TYPED(fsbin, fs_cmp)

/* 0..15: size / 512; then 16 bins per power of two */
static inline unsigned fs_bin_of(uint64_t size) {
  uint64_t u = size >> 9;
  if (u < FS_SUB) return (unsigned)u;
  unsigned fl = 63u - (unsigned)__builtin_clzll(u);
  /* FS_SUB + (fl - FS_SUB_BITS) * FS_SUB + the FS_SUB_BITS bits below the top one */
  unsigned bin = ((fl - FS_SUB_BITS) << FS_SUB_BITS) + (unsigned)(u >> (fl - FS_SUB_BITS));
  return bin < FS_NBINS ? bin : FS_NBINS - 1;
}

/* first non-empty bin >= i, or FS_NBINS */
static inline unsigned fs_bin_next(const struct fset *fs, unsigned i) {
  if (i >= FS_NBINS) return FS_NBINS;
  unsigned w = i >> 6;
  uint64_t m = fs->nonempty[w] & (~0ull << (i & 63));
  if (m) return w * 64 + (unsigned)__builtin_ctzll(m);
  uint32_t words = fs->words & (uint32_t)(~0ull << (w + 1));
  if (!words) return FS_NBINS;
  w = (unsigned)__builtin_ctz(words);
  return w * 64 + (unsigned)__builtin_ctzll(fs->nonempty[w]);
}

static inline void stitch_fset_insert(struct fset *fs, struct sblock *b) {
  unsigned i = fs_bin_of(b->size);
  b->bin = (uint16_t)i;
  fsbin_insert(&fs->bins[i], &b->node);
  fs->nonempty[i >> 6] |= 1ull << (i & 63);
  fs->words |= 1u << (i >> 6);
  fs->count++;
}

/* b is in fs, with the size it was inserted with */
static inline void stitch_fset_erase(struct fset *fs, struct sblock *b) {
  unsigned i = b->bin;
  ordset_erase_inline(&fs->bins[i], &b->node);
  if (!fs->bins[i].count && !(fs->nonempty[i >> 6] &= ~(1ull << (i & 63)))) fs->words &= ~(1u << (i >> 6));
  fs->count--;
}

/* the smallest block >= size */
static inline struct sblock *stitch_fset_lower_bound(const struct fset *fs, uint64_t size) {
  if (!fs->count) return NULL;
  unsigned i = fs_bin_of(size);
  if (fs->nonempty[i >> 6] & (1ull << (i & 63))) {
    struct sblock key;
    key.size = size;
    key.addr = 0;
    struct ordnode *n = fsbin_lower_bound(&fs->bins[i], &key.node);
    if (n) return sb_of(n);
  }
  i = fs_bin_next(fs, i + 1);
  return i < FS_NBINS ? sb_of(ordset_first_inline(&fs->bins[i])) : NULL;
}

static inline struct sblock *stitch_fset_next(const struct fset *fs, const struct sblock *b) {
  struct ordnode *n = ordset_next_inline(&b->node);
  if (n) return sb_of(n);
  unsigned i = fs_bin_next(fs, b->bin + 1u);
  return i < FS_NBINS ? sb_of(ordset_first_inline(&fs->bins[i])) : NULL;
}

static inline struct sblock *stitch_fset_first(const struct fset *fs) { return stitch_fset_lower_bound(fs, 0); }

#endif
