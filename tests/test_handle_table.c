/* test_handle_table.c - the device layer's handle hash: every handle found with its size
 * after random puts and deletes (deletion's backward shift must keep probe runs whole),
 * absent ones not found, growth keeps everything. Checked against a plain array. */
#include <stdlib.h>
#include "test.h"
#include "handle_table.h"

TEST(handle_table_agrees_with_a_plain_array) {
  enum { N = 5000 };
  static uint64_t size_of[N + 1];   /* 0 = not in the table */
  struct handle_table t = {0};
  uint64_t x = 12345, live = 0;
  for (int step = 0; step < 200000; step++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    uint64_t h = 1 + x % N;
    struct handle_slot *s = handle_table_get(&t, h);
    CHECK_EQ(s != NULL, size_of[h] != 0);
    if (s) {
      CHECK_EQ(s->size, size_of[h]);
      handle_table_del(&t, s);
      size_of[h] = 0;
      live--;
    } else {
      size_of[h] = (x >> 20) % 100 + 1;
      CHECK_EQ(handle_table_put(&t, h, size_of[h]), 0);
      live++;
    }
    CHECK_EQ(t.count, live);
  }
  for (uint64_t h = 1; h <= N; h++) {
    struct handle_slot *s = handle_table_get(&t, h);
    CHECK_EQ(s != NULL, size_of[h] != 0);
    if (s) CHECK_EQ(s->size, size_of[h]);
  }
  CHECK(handle_table_get(&t, 0) == NULL);
  CHECK(handle_table_get(&t, N + 7) == NULL);
  handle_table_free(&t);
}

/* sim hands out counters 1, 2, 3...: clustered keys, the case a weak hash lets pile up */
TEST(handle_table_sequential_handles_all_deleted) {
  struct handle_table t = {0};
  for (uint64_t h = 1; h <= 100000; h++) CHECK_EQ(handle_table_put(&t, h, h * 2), 0);
  for (uint64_t h = 1; h <= 100000; h += 2) handle_table_del(&t, handle_table_get(&t, h));
  for (uint64_t h = 2; h <= 100000; h += 2) CHECK_EQ(handle_table_get(&t, h)->size, h * 2);
  for (uint64_t h = 2; h <= 100000; h += 2) handle_table_del(&t, handle_table_get(&t, h));
  CHECK_EQ(t.count, 0);
  for (uint64_t i = 0; i <= t.mask; i++) CHECK_EQ(t.slot[i].handle, 0);
  handle_table_free(&t);
}
