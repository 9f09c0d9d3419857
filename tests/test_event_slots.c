/* test_event_slots.c - events held in memory given their slots in the replay's map
 * (livemap_slot_events, inputs_slot): each id's slot while it is live, slot 0 for what no
 * id holds, a freed slot taken next; and a replay by slot giving every figure of the
 * replay by hash, on a sequence with every case the map meets (an id allocated twice, a
 * free of an id never allocated, a zero-size request, requests refused under --on-oom
 * skip and their ids allocated and freed again, blocks left live at the end). */
#include <math.h>
#include "test.h"
#include "inputs.h"
#include "livemap.h"
#include "replay.h"

static struct event ev(enum op op, uint64_t id, uint64_t size) { return (struct event){.op = op, .id = id, .size = size}; }

TEST(slots_follow_the_ids_live_and_a_freed_slot_is_taken_next) {
  struct event e[] = {
      ev(OP_ALLOC, 100, 512),   /* 0: slot 1 */
      ev(OP_ALLOC, 200, 512),   /* 1: slot 2 */
      ev(OP_ITER, 0, 0),        /* 2: no id: 0 */
      ev(OP_FREE, 100, 0),      /* 3: slot 1, freed */
      ev(OP_ALLOC, 300, 512),   /* 4: slot 1 again (freed last) */
      ev(OP_FREE, 999, 0),      /* 5: never allocated: 0 */
      ev(OP_ALLOC, 200, 512),   /* 6: 200 is live: its slot, 2 */
      ev(OP_ALLOC, 400, 0),     /* 7: zero size (skipped, never looked up): 0 */
      ev(OP_ALLOC, 500, 512),   /* 8: slot 3 */
      ev(OP_FREE, 100, 0),      /* 9: freed already: 0 */
      ev(OP_FREE, 200, 0),      /* 10: 2 */
      ev(OP_FREE, 500, 0),      /* 11: 3 */
      ev(OP_ALLOC, 600, 512),   /* 12: 3 (freed last) */
  };
  uint32_t want[] = {1, 2, 0, 1, 1, 0, 2, 0, 3, 0, 2, 3, 3};
  uint32_t table = 0;
  CHECK_EQ(livemap_slot_events(e, sizeof e / sizeof e[0], &table), 0);
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) CHECK_MSG(e[i].slot == want[i], "event %zu: slot %u, want %u", i, e[i].slot, want[i]);
  CHECK_EQ(table, 4);   /* slot 0 and three ids at once */
  CHECK_EQ(sizeof(struct event), 40);   /* the slot sits in the padding after op: a held trace takes no more memory */
}

static void replay(const struct event_buffer *b, uint64_t cap, int validate, double *warm, struct run_result *r) {
  struct run_spec s = {0};
  s.trace = "held";
  s.events = b;
  s.trace_device = -1;
  s.world = 1;
  s.seed = 1;
  s.allocator = "caching";
  s.device.kind = "sim";
  s.cap_bytes = cap;
  s.on_oom = ON_OOM_SKIP;
  s.validate = validate;
  s.quiet = 1;
  s.warm_passes = warm ? 2 : 0;
  s.warm_ns = warm;
  run_result_init(r);
  replay_run(&s, r);
}

TEST(rows_replayed_by_slot_equal_rows_replayed_by_hash) {
  struct event_buffer b = {0};
  const uint64_t MiB = 1ull << 20;
  for (uint64_t i = 0; i < 40; i++) event_buffer_push(&b, &(struct event){.op = OP_ALLOC, .id = 1000 - 7 * i, .size = (i % 5 + 1) * MiB});
  event_buffer_push(&b, &(struct event){.op = OP_ALLOC, .id = 1000, .size = MiB});      /* live already */
  event_buffer_push(&b, &(struct event){.op = OP_FREE, .id = 5});                       /* never allocated */
  event_buffer_push(&b, &(struct event){.op = OP_ALLOC, .id = 6});                      /* zero size */
  event_buffer_push(&b, &(struct event){.op = OP_ALLOC, .id = 7, .size = 1ull << 50}); /* no device holds it: dropped */
  for (uint64_t i = 0; i < 40; i += 2) event_buffer_push(&b, &(struct event){.op = OP_FREE, .id = 1000 - 7 * i});
  event_buffer_push(&b, &(struct event){.op = OP_ALLOC, .id = 7, .size = 2 * MiB});    /* the dropped id again */
  for (uint64_t i = 0; i < 30; i++) event_buffer_push(&b, &(struct event){.op = OP_ALLOC, .id = 5000 + i, .size = (30 - i) * MiB});
  for (uint64_t i = 0; i < 30; i += 3) event_buffer_push(&b, &(struct event){.op = OP_FREE, .id = 5000 + i});
  CHECK_EQ(b.slot_table, 0);
  const uint64_t caps[] = {0, 200 * MiB};   /* under 200 MiB some requests are refused (skipped) */
  for (int c = 0; c < 2; c++)
    for (int validate = 0; validate < 2; validate++) {
      struct event_buffer h = b;
      h.slot_table = 0;
      struct run_result byhash, byslot;
      double wh[2], ws[2];
      replay(&h, caps[c], validate, validate ? NULL : wh, &byhash);
      inputs_slot(&h);
      CHECK(h.slot_table > 1);
      replay(&h, caps[c], validate, validate ? NULL : ws, &byslot);
      CHECK_STR(byslot.status, byhash.status);
      CHECK_EQ(byslot.events, byhash.events);
      CHECK_EQ(byslot.allocs, byhash.allocs);
      CHECK_EQ(byslot.frees, byhash.frees);
      CHECK_EQ(byslot.skipped_events, byhash.skipped_events);
      CHECK_EQ(byslot.oom_count, byhash.oom_count);
      CHECK_EQ(byslot.first_oom_event, byhash.first_oom_event);
      CHECK_EQ(byslot.peak_requested, byhash.peak_requested);
      CHECK_EQ(byslot.peak_allocated, byhash.peak_allocated);
      CHECK_EQ(byslot.peak_reserved, byhash.peak_reserved);
      CHECK_EQ(byslot.device_allocs, byhash.device_allocs);
      CHECK_EQ(byslot.device_frees, byhash.device_frees);
      CHECK_EQ(byslot.completed, byhash.completed);
      if (c == 1) CHECK(byhash.oom_count > 1);   /* the refusals happened */
      if (!validate && !byhash.oom_count) CHECK(!isnan(wh[1]) && !isnan(ws[1]));   /* warm passes from an emptied map */
    }
  event_buffer_free(&b);
}
