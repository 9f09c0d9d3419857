/* test_livemap.c - the replay engine's id -> live block map: its 48-byte entry layout,
 * lookups, inserts and backward-shift deletes against a plain array, and the growth
 * points (an insert grows the table when count + 1 would pass 3/4 of capacity). */
#include <stdlib.h>
#include "test.h"
#include "livemap.h"

TEST(livemap_entry_is_48_bytes_state_in_the_low_bits) {
  CHECK_EQ(sizeof(struct live_entry), 48);
  struct live_entry e = {0};
  e.state = LIVE_DROPPED;
  e.requested = 0x123456789abull;
  CHECK_EQ(e.state_requested, (uint64_t)LIVE_DROPPED | 0x123456789abull << 16);
  struct livemap m = {0};
  livemap_commit_requested(&m, &e, 77, LIVE_BLOCK, LIVE_REQUESTED_MAX);
  CHECK_EQ(e.id, 77);
  CHECK_EQ(e.state, LIVE_BLOCK);
  CHECK_EQ(e.requested, LIVE_REQUESTED_MAX);
  CHECK_EQ(m.count, 1);
}

TEST(livemap_matches_a_plain_array_and_grows_at_three_quarters) {
  enum { IDS = 5000 };
  static uint64_t req[IDS];   /* 0 = absent, else the requested bytes stored */
  struct livemap m;
  CHECK_EQ(livemap_init(&m, 100), 0);
  size_t cap = m.mask + 1, n = 0;
  CHECK_EQ(cap, 256);
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  int wrong = 0, wrong_cap = 0;
  for (int step = 0; step < 200000; step++) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    uint64_t k = rng % IDS, id = k * 0x100000001ull + 3;   /* ids spread over 64 bits */
    struct live_entry *e = livemap_get(&m, id);
    if ((e != NULL) != (req[k] != 0) || (e && e->requested != req[k])) wrong++;
    if (!e && (rng >> 40) % 4 != 0) {          /* insert: livemap_slot + commit, or livemap_put */
      if ((n + 1) * 4 > cap * 3) cap *= 2;     /* the growth rule */
      req[k] = (rng >> 8) % LIVE_REQUESTED_MAX + 1;
      if (rng & 1) {
        e = livemap_slot(&m, id);
        if (!e || e->state != LIVE_EMPTY) { wrong++; continue; }
        livemap_commit_requested(&m, e, id, LIVE_BLOCK, req[k]);
      } else {
        e = livemap_put(&m, id);
        if (!e) { wrong++; continue; }
        e->requested = req[k];
      }
      n++;
    } else if (e) {
      livemap_del(&m, e);
      req[k] = 0;
      n--;
    }
    if (m.mask + 1 != cap || m.count != n) wrong_cap++;
  }
  CHECK_EQ(wrong, 0);
  CHECK_EQ(wrong_cap, 0);
  CHECK(cap > 256);   /* it grew */
  size_t live = 0;
  for (size_t i = 0; i <= m.mask; i++) live += m.slots[i].state != LIVE_EMPTY;
  CHECK_EQ(live, n);
  livemap_free(&m);
}
