/* test_caching_bin.c - a size bin (allocators/caching_bin.h) answers every query as one
 * ordered set by (size, address) would, as a list, as a treap and across the changes
 * between the two: random inserts and erases of blocks with few sizes (many equal) checked
 * after each step against a brute-force scan. */
#include <stdlib.h>
#include "test.h"
#include "caching_bin.h"

enum { NB = 64 };

/* the brute-force answers over the blocks in the bin */
static struct cblock *least_at_least(struct cblock *b, const int *in, uint64_t size) {
  struct cblock *best = NULL;
  for (int i = 0; i < NB; i++)
    if (in[i] && b[i].size >= size && (!best || cbin_before(&b[i], best))) best = &b[i];
  return best;
}

TEST(caching_bin_answers_as_an_ordered_set_as_a_list_and_as_a_tree) {
  static struct cblock b[NB];
  int in[NB] = {0}, n = 0, wrong = 0, trees = 0, lists_again = 0, steps = 0;
  struct cbin bin;
  cbin_init(&bin);
  uint64_t rng = 12345;
  for (int i = 0; i < NB; i++) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    b[i].size = 512 * (1 + (rng >> 60) % 4);                 /* four sizes: many equal */
    b[i].addr = (uint64_t)(NB - i) * 4096 + ((rng >> 20) % 7) * (1ull << 24);
  }
  for (int round = 0; round < 40; round++) {
    int grow = round % 2 == 0;                                /* fill past the list, then drain under it */
    for (int k = 0; k < 150; k++, steps++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      int i = (int)((rng >> 33) % NB);
      int was_tree = bin.tree;
      if (!in[i] && (grow || (rng >> 13) % 16 == 0)) { cbin_insert(&bin, &b[i]); in[i] = 1; n++; }
      else if (in[i] && (!grow || (rng >> 13) % 16 == 0)) { cbin_erase(&bin, &b[i]); in[i] = 0; n--; }
      trees += !was_tree && bin.tree;
      lists_again += was_tree && !bin.tree;
      if ((int)cbin_count(&bin) != n) wrong++;
      for (uint64_t size = 0; size <= 2560; size += 512)
        if (cbin_lower_bound(&bin, size) != least_at_least(b, in, size)) wrong++;
      if (!n) continue;
      struct cblock *first = least_at_least(b, in, 0), *last = first;
      if (cbin_first(&bin) != first) wrong++;
      int seen = 1;
      for (struct cblock *x = first, *y; (y = cbin_next(&bin, x)); x = y, seen++) {   /* in order, each the next */
        if (!cbin_before(x, y) || cbin_prev(&bin, y) != x) wrong++;
        last = y;
      }
      if (seen != n || cbin_last(&bin) != last || cbin_prev(&bin, first) != NULL) wrong++;
    }
  }
  CHECK_EQ(wrong, 0);
  CHECK_MSG(trees >= 5 && lists_again >= 5, "to a tree %d times, back to a list %d", trees, lists_again);   /* both ways, many times */
  CHECK(steps > 1000);
}
