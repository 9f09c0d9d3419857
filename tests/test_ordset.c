/* test_ordset.c - the intrusive ordered set: order, lower bound, erase, iteration. */
#include <stdlib.h>
#include "test.h"
#include "ordset.h"

struct item { struct ordnode n; uint64_t k; };
static int cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct item, n)->k, y = ORD_ENTRY(b, struct item, n)->k;
  return x < y ? -1 : x > y;
}

TEST(ordset_orders_and_erases) {
  enum { N = 2000 };
  static struct item it[N];
  struct ordset s;
  ordset_init(&s, cmp);
  for (int i = 0; i < N; i++) { it[i].k = (uint64_t)((i * 7919) % N) * 2; ordset_insert(&s, &it[i].n); }
  CHECK_EQ(s.count, N);
  uint64_t prev = 0; int cnt = 0;
  for (struct ordnode *n = ordset_first(&s); n; n = ordset_next(n)) {
    uint64_t k = ORD_ENTRY(n, struct item, n)->k;
    CHECK(cnt == 0 || k > prev);
    prev = k; cnt++;
  }
  CHECK_EQ(cnt, N);
  struct item key = {.k = 101};
  struct ordnode *lb = ordset_lower_bound(&s, &key.n);
  CHECK_EQ(ORD_ENTRY(lb, struct item, n)->k, 102);
  struct ordnode *fl = ordset_floor(&s, &key.n);
  CHECK_EQ(ORD_ENTRY(fl, struct item, n)->k, 100);
  for (int i = 0; i < N; i += 2) ordset_erase(&s, &it[i].n);
  CHECK_EQ(s.count, N / 2);
  cnt = 0;
  for (struct ordnode *n = ordset_last(&s); n; n = ordset_prev(n)) cnt++;
  CHECK_EQ(cnt, N / 2);
  key.k = 4 * N;
  CHECK(ordset_lower_bound(&s, &key.n) == NULL);
}

/* ORDSET_TYPED and the _inline variants: the same priorities, shape and answers as the
 * generic functions, on two sets fed the same random inserts, erases and queries. */
static inline int item_cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct item, n)->k, y = ORD_ENTRY(b, struct item, n)->k;
  return x < y ? -1 : x > y;
}
ORDSET_TYPED(items, item_cmp)

static int same_shape(const struct ordnode *a, const struct ordnode *b, const struct item *base_a, const struct item *base_b) {
  if (!a || !b) return a == b;
  const struct item *ia = ORD_ENTRY(a, struct item, n), *ib = ORD_ENTRY(b, struct item, n);
  return ia - base_a == ib - base_b && a->prio == b->prio && same_shape(a->left, b->left, base_a, base_b) &&
         same_shape(a->right, b->right, base_a, base_b);
}

TEST(ordset_typed_variants_match_generic) {
  enum { N = 3000 };
  static struct item ga[N], ta[N];
  static int in[N];
  struct ordset g, t;
  ordset_init(&g, cmp);
  ordset_init(&t, item_cmp);
  uint64_t rng = 88172645463325252ull;
  int mismatches = 0;
  for (int step = 0; step < 40000; step++) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    int i = (int)(rng % N);
    uint64_t k = (rng >> 20) % 500;   /* many equal keys: insertion order among equals matters */
    if (!in[i]) {
      ga[i].k = ta[i].k = k;
      ordset_insert(&g, &ga[i].n);
      items_insert(&t, &ta[i].n);
      in[i] = 1;
    } else if (rng & (1ull << 40)) {
      ordset_erase(&g, &ga[i].n);
      ordset_erase_inline(&t, &ta[i].n);
      in[i] = 0;
    }
    struct item key = {.k = k};
    struct ordnode *lg = ordset_lower_bound(&g, &key.n), *lt = items_lower_bound(&t, &key.n);
    struct ordnode *fg = ordset_floor(&g, &key.n), *ft = items_floor(&t, &key.n);
    if ((lg ? ORD_ENTRY(lg, struct item, n) - ga : -1) != (lt ? ORD_ENTRY(lt, struct item, n) - ta : -1)) mismatches++;
    if ((fg ? ORD_ENTRY(fg, struct item, n) - ga : -1) != (ft ? ORD_ENTRY(ft, struct item, n) - ta : -1)) mismatches++;
  }
  CHECK_EQ(mismatches, 0);
  CHECK_EQ(g.count, t.count);
  CHECK(same_shape(g.root, t.root, ga, ta));
  /* the inline walks visit the same nodes in the same order, both ways */
  struct ordnode *a = ordset_first(&g), *b = ordset_first_inline(&t);
  size_t n = 0;
  for (; a && b; a = ordset_next(a), b = ordset_next_inline(b), n++)
    if (ORD_ENTRY(a, struct item, n) - ga != ORD_ENTRY(b, struct item, n) - ta) mismatches++;
  CHECK(!a && !b);
  CHECK_EQ(n, g.count);
  for (a = ordset_last(&g), b = ordset_last_inline(&t); a && b; a = ordset_prev(a), b = ordset_prev_inline(b))
    if (ORD_ENTRY(a, struct item, n) - ga != ORD_ENTRY(b, struct item, n) - ta) mismatches++;
  CHECK(!a && !b);
  CHECK_EQ(mismatches, 0);
}
