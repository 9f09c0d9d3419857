/* stitch_fset.c - the `stitch` strategy's free sets, the parts off the hot paths: setup
 * and the largest block. The rest is inline in stitch_fset.h. */
#include "stitch.h"

/* last non-empty bin <= i, or FS_NBINS */
static unsigned bin_prev(const struct fset *fs, unsigned i) {
  unsigned w = i >> 6;
  uint64_t m = fs->nonempty[w] & (~0ull >> (63 - (i & 63)));
  if (m) return w * 64 + 63u - (unsigned)__builtin_clzll(m);
  uint32_t words = fs->words & ((1u << w) - 1);
  if (!words) return FS_NBINS;
  w = 31u - (unsigned)__builtin_clz(words);
  return w * 64 + 63u - (unsigned)__builtin_clzll(fs->nonempty[w]);
}

void stitch_fset_init(struct fset *fs) {
  fs->count = 0;
  fs->words = 0;
  for (unsigned i = 0; i < FS_WORDS; i++) fs->nonempty[i] = 0;
  ordset_init(&fs->bins[0], stitch_blocks_cmp_size);
  for (unsigned i = 1; i < FS_NBINS; i++) fs->bins[i] = fs->bins[0];   /* all alike, empty */
}

struct sblock *stitch_fset_last(const struct fset *fs) {
  if (!fs->count) return NULL;
  unsigned i = bin_prev(fs, FS_NBINS - 1);
  return i < FS_NBINS ? sb_of(ordset_last_inline(&fs->bins[i])) : NULL;
}
