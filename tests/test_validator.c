/* test_validator.c - --validate must catch an overlapping block, a block outside held
 * memory, a misaligned block, disagreeing counts and a leaked block. */
#include "test.h"
#include "validator.h"

static void setup(struct device *d) {
  char err[FB_ERRLEN];
  struct device_config cfg = {.kind = "sim"};
  device_open(d, &cfg, err);
  d->track_ranges = 1;
}

extern const struct allocator_ops raw_allocator;

TEST(validator_catches_overlap) {
  struct device d;
  setup(&d);
  uint64_t seg;
  dev_malloc(&d, 4 << 20, &seg);
  struct validator v;
  validator_init(&v, &raw_allocator, NULL, &d);
  char err[FB_ERRLEN];
  struct block a = {.addr = seg, .size = 1 << 20}, b = {.addr = seg + (1 << 20) - 512, .size = 4096},
               c = {.addr = seg + (1 << 20), .size = 4096};
  CHECK(validator_alloc(&v, &a, 1 << 20, err) == 0);
  CHECK(validator_alloc(&v, &b, 4096, err) < 0);
  CHECK_CONTAINS(err, "overlaps");
  CHECK(validator_alloc(&v, &c, 4096, err) == 0);   /* adjacent is fine */
  struct block under = {.addr = seg - 512, .size = 1024};
  CHECK(validator_alloc(&v, &under, 1024, err) < 0);
  CHECK_CONTAINS(err, "outside");
  struct block odd = {.addr = seg + (2 << 20) + 1, .size = 16};
  CHECK(validator_alloc(&v, &odd, 16, err) < 0);
  CHECK_CONTAINS(err, "aligned");
  struct block small = {.addr = seg + (3 << 20), .size = 100};
  CHECK(validator_alloc(&v, &small, 200, err) < 0);
  CHECK_CONTAINS(err, "smaller");
  CHECK(validator_free(&v, &a, err) == 0);
  CHECK(validator_free(&v, &a, err) < 0);           /* not live any more */
  validator_release(&v);
  dev_free(&d, seg, 4 << 20);
  device_close(&d);
}

TEST(validator_catches_leak_after_destroy) {
  struct device d;
  setup(&d);
  void *a;
  char err[FB_ERRLEN];
  CHECK(raw_allocator.create(&a, &d, NULL, err) == 0);
  struct validator v;
  validator_init(&v, &raw_allocator, a, &d);
  struct block b;
  CHECK(raw_allocator.alloc(a, 1000, 0, &b) == 0);
  uint64_t leaked;
  dev_malloc(&d, 777, &leaked);          /* memory the strategy does not know it holds */
  CHECK(validator_counts(&v, err) < 0);
  CHECK_CONTAINS(err, "holds 1000 bytes, the device layer counts 1777");
  raw_allocator.free(a, &b);
  raw_allocator.destroy(a);
  CHECK(validator_final(&v, err) < 0);
  CHECK_CONTAINS(err, "still holds 777 bytes");
  dev_free(&d, leaked, 777);
  CHECK(validator_final(&v, err) == 0);
  validator_release(&v);
  device_close(&d);
}
