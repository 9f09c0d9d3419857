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
