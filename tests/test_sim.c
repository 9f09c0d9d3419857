/* test_sim.c - the simulated device: addresses, caps, the usable limit, reserved
 * counting, VMM calls, modeled driver time, failure injection. */
#include "test.h"
#include "device.h"

static int open_sim(struct device *d, uint64_t total, uint64_t usable) {
  char err[FB_ERRLEN];
  struct device_config cfg = {.kind = "sim", .sim_total = total, .sim_usable = usable};
  int rc = device_open(d, &cfg, err);
  d->track_ranges = 1;
  return rc;
}

TEST(sim_defaults_are_an_h100) {
  struct device d;
  CHECK(open_sim(&d, 0, 0) == 0);
  CHECK_EQ(d.total, 85017493504ull);
  CHECK_EQ(d.usable, 84230209536ull);
  device_close(&d);
}

TEST(sim_addresses_descend_2mib_aligned_fresh_space_first) {
  struct device d;
  open_sim(&d, 0, 0);
  uint64_t a, b, c;
  CHECK(dev_malloc(&d, 512, &a) == 0);
  CHECK(dev_malloc(&d, 3 << 20, &b) == 0);
  CHECK_EQ(a, (1ull << 47) - (2ull << 20));
  CHECK_EQ(b, a - (4ull << 20));      /* 3 MiB takes 4 MiB of address space */
  CHECK_EQ(b % (2ull << 20), 0);
  dev_free(&d, a, 512);
  CHECK(dev_malloc(&d, 512, &c) == 0);
  CHECK(c != a);                       /* fresh space first: not reused while it lasts */
  CHECK(c < b);
  dev_free(&d, b, 3 << 20);
  dev_free(&d, c, 512);
  device_close(&d);
}

TEST(sim_reserved_counts_bytes_held) {
  struct device d;
  open_sim(&d, 0, 0);
  uint64_t a, b;
  dev_malloc(&d, 1000, &a);
  dev_malloc(&d, 5000, &b);
  CHECK_EQ(d.reserved, 6000);
  dev_free(&d, a, 1000);
  CHECK_EQ(d.reserved, 5000);
  CHECK_EQ(d.peak_reserved, 6000);
  CHECK_EQ(d.c.device_allocs, 2);
  CHECK_EQ(d.c.device_frees, 1);
  dev_free(&d, b, 5000);
  CHECK_EQ(dev_ranges_held(&d), 0);
  device_close(&d);
}

TEST(sim_cap_is_a_memory_fraction) {
  struct device d;
  open_sim(&d, 0, 0);
  device_set_cap(&d, 10 << 20);
  uint64_t a, b;
  CHECK(dev_malloc(&d, 6 << 20, &a) == 0);
  CHECK(dev_malloc(&d, 5 << 20, &b) == FB_OOM);   /* 11 MiB > 10 MiB */
  CHECK(dev_malloc(&d, 4 << 20, &b) == 0);        /* exactly the cap is allowed */
  CHECK_EQ(d.reserved, 10 << 20);
  dev_free(&d, a, 6 << 20);
  dev_free(&d, b, 4 << 20);
  device_close(&d);
}

TEST(sim_usable_limit_ooms_below_total) {
  struct device d;
  open_sim(&d, 100 << 20, 60 << 20);
  uint64_t a;
  CHECK(dev_malloc(&d, 61 << 20, &a) == FB_OOM);
  CHECK(dev_malloc(&d, 60 << 20, &a) == 0);
  dev_free(&d, a, 60 << 20);
  device_close(&d);
}

TEST(sim_vmm_counts_physical_once) {
  struct device d;
  open_sim(&d, 0, 0);
  uint64_t va1, va2, h;
  CHECK(dev_va_reserve(&d, 8 << 20, &va1) == 0);
  CHECK(dev_va_reserve(&d, 8 << 20, &va2) == 0);
  CHECK(dev_phys_create(&d, 2 << 20, &h) == 0);
  CHECK_EQ(d.reserved, 2 << 20);
  CHECK(dev_map(&d, va1, 2 << 20, h) == 0);
  CHECK(dev_map(&d, va2 + (2 << 20), 2 << 20, h) == 0);   /* the same page twice */
  CHECK_EQ(d.reserved, 2 << 20);
  CHECK(dev_holds(&d, va1, 2 << 20));
  CHECK(!dev_holds(&d, va1, 4 << 20));                     /* second page of va1 not mapped */
  CHECK(dev_map(&d, va1, 2 << 20, h) < 0);                 /* already mapped there */
  dev_unmap(&d, va1, 2 << 20);
  dev_unmap(&d, va2 + (2 << 20), 2 << 20);
  dev_phys_release(&d, h);
  CHECK_EQ(d.reserved, 0);
  dev_va_release(&d, va1, 8 << 20);
  dev_va_release(&d, va2, 8 << 20);
  CHECK_EQ(d.c.maps, 2);
  CHECK_EQ(d.c.unmaps, 2);
  CHECK_EQ(dev_ranges_held(&d), 0);
  device_close(&d);
}

TEST(sim_vmm_granularity_and_cap) {
  struct device d;
  open_sim(&d, 0, 0);
  uint64_t h;
  CHECK(dev_phys_create(&d, 3 << 20, &h) < 0);            /* not a 2 MiB multiple */
  CHECK_CONTAINS(d.err, "2 MiB");
  device_set_cap(&d, 20 << 20);
  CHECK(dev_phys_create(&d, 20 << 20, &h) == 0);
  uint64_t h2;
  CHECK(dev_phys_create(&d, 2 << 20, &h2) == FB_OOM);
  dev_phys_release(&d, h);
  device_close(&d);
}

TEST(sim_models_driver_time) {
  struct device d;
  open_sim(&d, 0, 0);
  uint64_t a, b;
  dev_malloc(&d, 4096, &a);
  CHECK_EQ(d.c.modeled_ns, 2550);      /* half of the 5.1 us small pair */
  dev_malloc(&d, 1 << 20, &b);
  CHECK_EQ(d.c.modeled_ns, 2550 + 29300);
  dev_free(&d, a, 4096);
  dev_free(&d, b, 1 << 20);
  CHECK_EQ(d.c.modeled_ns, 2 * (2550 + 29300));   /* 5.1 us + 58.6 us per pair */
  device_close(&d);
}

TEST(sim_failure_injection_rate) {
  struct device d;
  open_sim(&d, 0, 0);
  d.fail_rate = 0.25;
  d.track_ranges = 0;
  int fails = 0;
  for (int i = 0; i < 4000; i++) {
    uint64_t a;
    int rc = dev_malloc(&d, 512, &a);
    if (rc == FB_OOM) fails++;
    else dev_free(&d, a, 512);
  }
  CHECK(fails > 800 && fails < 1200);
  CHECK_EQ(d.c.injected_failures, fails);
  device_close(&d);
}

TEST(device_cuda_without_gpu_is_an_error) {
  char err[FB_ERRLEN];
  if (test_gpu_visible(NULL)) SKIP("a GPU is visible");
  struct device d;
  struct device_config cfg = {.kind = "cuda"};
  CHECK(device_open(&d, &cfg, err) < 0);
  CHECK(err[0] != 0);
}
