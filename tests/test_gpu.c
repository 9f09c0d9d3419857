/* test_gpu.c - the CUDA device on a real GPU (`make test-gpu`; skipped without a GPU,
 * failed under FB_GPU_REQUIRED=1): open, cudaMalloc and reserved counting, the VMM round
 * trip and one physical page mapped twice, caps, a real out-of-memory, errors naming the
 * call, the cudaMemPool calls, --touch/--verify catching an overlapping write; then
 * replays on cuda with --validate --verify whose peak_reserved must equal the same run on
 * sim (raw and caching), `async` on sim (the pool model) against the driver's pool with
 * the worst difference printed, and `async` replays that must complete validated. Every
 * test name contains "gpu". */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "device.h"
#include "replay.h"
#ifdef FB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MiB (1ull << 20)

static int open_gpu(struct device *d, char *err) {
  int rc = device_open(d, &(struct device_config){.kind = "cuda", .index = 0}, err);
  if (!rc) d->track_ranges = 1;
  return rc;
}

#define OPEN_GPU(d)                                                              \
  char err_[FB_ERRLEN] = "";                                                     \
  CHECK_MSG(open_gpu(&(d), err_) == 0, "cuda device 0 does not open: %s", err_)

/* an address inside [lo, hi) named in a message as "at 0x..." */
static int names_address_in(const char *msg, uint64_t lo, uint64_t hi) {
  const char *p = strstr(msg, " at 0x");
  if (!p) return 0;
  uint64_t a = strtoull(p + 4, NULL, 16);
  return a >= lo && a < hi;
}

GPU_TEST(gpu_device_opens_with_name_total_and_pool) {
  struct device d;
  OPEN_GPU(d);
  CHECK_STR(d.ops->name, "cuda");
  CHECK(d.name[0] != 0);
  CHECK(d.total > (1ull << 30));
  CHECK_EQ(d.usable, 0);               /* the driver itself enforces what is usable */
  CHECK_EQ(d.reserved, 0);
  CHECK(dev_has_pool(&d));             /* every GPU the suite targets has memory pools */
  CHECK(d.ops->touch && d.ops->verify_write && d.ops->verify_check && d.ops->sync);
  int drv = 0, rt = 0;
#ifdef FB_HAVE_CUDA
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
#endif
  printf("gpu: device 0: %s, total %llu bytes, CUDA driver %d.%d, runtime %d.%d\n", d.name,
         (unsigned long long)d.total, drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
  device_close(&d);
}

GPU_TEST(gpu_malloc_free_counts_reserved_and_time) {
  struct device d;
  OPEN_GPU(d);
  uint64_t a = 0, b = 0;
  CHECK(dev_malloc(&d, 1000, &a) == 0);
  CHECK(dev_malloc(&d, 5 * MiB, &b) == 0);
  CHECK(a && b && a != b);
  CHECK_EQ(a % 256, 0);
  CHECK_EQ(b % 256, 0);
  CHECK_EQ(d.reserved, 1000 + 5 * MiB);
  CHECK_EQ(d.peak_reserved, 1000 + 5 * MiB);
  CHECK_EQ(d.c.device_allocs, 2);
  CHECK(d.c.modeled_ns > 0);           /* measured time in cudaMalloc */
  CHECK(dev_holds(&d, b, 5 * MiB));
  /* it is real memory: a pattern written and read back */
  CHECK_MSG(d.ops->verify_write(&d, b, 5 * MiB, 0, 42) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, b, 5 * MiB, 0, 42) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_write(&d, a, 1000, 3, 43) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, a, 1000, 3, 43) == 0, "%s", d.err);
  dev_free(&d, a, 1000);
  CHECK_EQ(d.reserved, 5 * MiB);
  dev_free(&d, b, 5 * MiB);
  CHECK_EQ(d.reserved, 0);
  CHECK_EQ(d.c.device_frees, 2);
  CHECK_EQ(dev_ranges_held(&d), 0);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);   /* no error was left pending */
  device_close(&d);
}

GPU_TEST(gpu_vmm_reserve_create_map_unmap_release_round_trip) {
  struct device d;
  OPEN_GPU(d);
  uint64_t va = 0, h1 = 0, h2 = 0;
  CHECK_MSG(dev_va_reserve(&d, 8 * MiB, &va) == 0, "%s", d.err);
  CHECK_EQ(va % DEV_PAGE, 0);
  CHECK_MSG(dev_phys_create(&d, 2 * MiB, &h1) == 0, "%s", d.err);
  CHECK_MSG(dev_phys_create(&d, 2 * MiB, &h2) == 0, "%s", d.err);
  CHECK_EQ(d.reserved, 4 * MiB);
  CHECK_MSG(dev_map(&d, va, 2 * MiB, h1) == 0, "%s", d.err);
  CHECK_MSG(dev_map(&d, va + 2 * MiB, 2 * MiB, h2) == 0, "%s", d.err);
  CHECK_EQ(d.c.maps, 2);
  CHECK_EQ(d.reserved, 4 * MiB);       /* mapping takes no new memory */
  CHECK(dev_holds(&d, va, 4 * MiB));   /* two adjacent pages hold one 4 MiB block */
  CHECK_MSG(d.ops->touch(&d, va, 4 * MiB, 1) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_write(&d, va, 4 * MiB, 1, 5) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, va, 4 * MiB, 1, 5) == 0, "%s", d.err);
  dev_unmap(&d, va, 2 * MiB);
  dev_unmap(&d, va + 2 * MiB, 2 * MiB);
  dev_phys_release(&d, h1);
  dev_phys_release(&d, h2);
  dev_va_release(&d, va, 8 * MiB);
  CHECK_EQ(d.reserved, 0);
  CHECK_EQ(d.c.unmaps, 2);
  CHECK_EQ(d.c.device_frees, 2);
  CHECK_EQ(d.c.va_reserves, 1);
  CHECK_EQ(d.c.va_releases, 1);
  CHECK_EQ(dev_ranges_held(&d), 0);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);   /* none of the void calls failed */
  device_close(&d);
}

/* the sim's address order: each reservation below every earlier one (also after one is
 * given back), so strategies that break ties by address decide on cuda as on sim */
GPU_TEST(gpu_vmm_reservations_descend_like_sim) {
  struct device d, s;
  OPEN_GPU(d);
  CHECK(device_open(&s, &(struct device_config){.kind = "sim"}, s.err) == 0);
  uint64_t sizes[5] = {8 * MiB, 2 * MiB, 64 * MiB, 85017493504ull, 4 * MiB}, va[5], sv[5];
  for (int i = 0; i < 5; i++) {
    CHECK_MSG(dev_va_reserve(&d, sizes[i], &va[i]) == 0, "%s", d.err);
    CHECK(dev_va_reserve(&s, sizes[i], &sv[i]) == 0);
    printf("  reservation %d: %llu bytes at %#llx (sim %#llx)\n", i, (unsigned long long)sizes[i],
           (unsigned long long)va[i], (unsigned long long)sv[i]);
    if (i == 1) { dev_va_release(&d, va[1], sizes[1]); dev_va_release(&s, sv[1], sizes[1]); }
  }
  for (int i = 1; i < 5; i++) {
    CHECK_MSG(va[i] + sizes[i] <= va[i - 1],
              "reservation %d at %#llx is not below reservation %d at %#llx", i, (unsigned long long)va[i], i - 1,
              (unsigned long long)va[i - 1]);
  }
  for (int i = 0; i < 5; i++) {
    if (i != 1) { dev_va_release(&d, va[i], sizes[i]); dev_va_release(&s, sv[i], sizes[i]); }
  }
  device_close(&s);
  device_close(&d);
}

GPU_TEST(gpu_vmm_one_page_mapped_twice_is_reserved_once) {
  struct device d;
  OPEN_GPU(d);
  uint64_t va1 = 0, va2 = 0, h = 0;
  CHECK_MSG(dev_va_reserve(&d, 2 * MiB, &va1) == 0, "%s", d.err);
  CHECK_MSG(dev_va_reserve(&d, 2 * MiB, &va2) == 0, "%s", d.err);
  CHECK(va1 != va2);
  CHECK_MSG(dev_phys_create(&d, 2 * MiB, &h) == 0, "%s", d.err);
  CHECK_MSG(dev_map(&d, va1, 2 * MiB, h) == 0, "%s", d.err);
  CHECK_MSG(dev_map(&d, va2, 2 * MiB, h) == 0, "%s", d.err);
  CHECK_EQ(d.reserved, 2 * MiB);
  CHECK_EQ(d.peak_reserved, 2 * MiB);
  /* the two ranges are one memory: zeroing through va2 destroys a pattern written via va1 */
  CHECK_MSG(d.ops->verify_write(&d, va1, 2 * MiB, 0, 11) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, va1, 2 * MiB, 0, 11) == 0, "%s", d.err);
  CHECK_MSG(d.ops->touch(&d, va2, 2 * MiB, 0) == 0, "%s", d.err);
  CHECK(d.ops->verify_check(&d, va1, 2 * MiB, 0, 11) < 0);
  CHECK_CONTAINS(d.err, "overwritten");
  dev_unmap(&d, va1, 2 * MiB);
  dev_unmap(&d, va2, 2 * MiB);
  dev_phys_release(&d, h);
  dev_va_release(&d, va1, 2 * MiB);
  dev_va_release(&d, va2, 2 * MiB);
  CHECK_EQ(d.reserved, 0);
  CHECK_EQ(dev_ranges_held(&d), 0);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);
  device_close(&d);
}

GPU_TEST(gpu_cap_refuses_without_calling_cuda) {
  struct device d;
  OPEN_GPU(d);
  device_set_cap(&d, 4 * MiB);
  uint64_t a = 0, h = 0;
  CHECK_EQ(dev_malloc(&d, 8 * MiB, &a), FB_OOM);
  CHECK_EQ(dev_phys_create(&d, 6 * MiB, &h), FB_OOM);
  CHECK_EQ(d.c.device_allocs, 0);
  CHECK_EQ(d.c.modeled_ns, 0);         /* no CUDA call was timed: none was made */
  CHECK_EQ(d.reserved, 0);
  CHECK(dev_malloc(&d, 3 * MiB, &a) == 0);
  CHECK_EQ(dev_malloc(&d, 2 * MiB, &h), FB_OOM);   /* 3 + 2 MiB > 4 MiB */
  dev_free(&d, a, 3 * MiB);
  CHECK_EQ(d.reserved, 0);
  device_close(&d);
}

GPU_TEST(gpu_real_out_of_memory_is_fb_oom_and_the_device_goes_on) {
  struct device d;
  OPEN_GPU(d);
  uint64_t a = 0;
  CHECK_EQ(dev_malloc(&d, d.total + (1ull << 30), &a), FB_OOM);   /* no cap: the driver says no */
  CHECK_EQ(d.reserved, 0);
  CHECK_EQ(d.c.device_allocs, 0);
  CHECK_MSG(dev_malloc(&d, 64 * MiB, &a) == 0, "after an OOM: %s", d.err);
  CHECK_MSG(d.ops->verify_write(&d, a, 64 * MiB, 0, 9) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, a, 64 * MiB, 0, 9) == 0, "%s", d.err);
  dev_free(&d, a, 64 * MiB);
  CHECK_EQ(d.reserved, 0);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);
  device_close(&d);
}

GPU_TEST(gpu_errors_name_the_call) {
  struct device d;
  OPEN_GPU(d);
  uint64_t va = 0, h = 0;
  CHECK_MSG(dev_va_reserve(&d, 2 * MiB, &va) == 0, "%s", d.err);
  /* the common layer refuses a handle it never created */
  CHECK(dev_map(&d, va, 2 * MiB, 0x1234567) < 0);
  CHECK_CONTAINS(d.err, "cuMemMap");
  CHECK_EQ(d.c.maps, 0);
  /* the driver refuses half a page: the backend names the call and CUDA's reason */
  CHECK_MSG(dev_phys_create(&d, 2 * MiB, &h) == 0, "%s", d.err);
  d.err[0] = 0;
  int rc = d.ops->map(&d, va, 1 * MiB, h);
  CHECK(rc < 0);
  CHECK_CONTAINS(d.err, "cuMemMap(");
  CHECK_CONTAINS(d.err, "error ");
  /* and the device goes on working */
  CHECK_MSG(dev_map(&d, va, 2 * MiB, h) == 0, "%s", d.err);
  CHECK_MSG(d.ops->touch(&d, va, 2 * MiB, 0) == 0, "%s", d.err);
  dev_unmap(&d, va, 2 * MiB);
  dev_phys_release(&d, h);
  dev_va_release(&d, va, 2 * MiB);
  CHECK_EQ(d.reserved, 0);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);
  device_close(&d);
}

GPU_TEST(gpu_pool_alloc_free_trim_reserved_from_the_pool) {
  struct device d;
  OPEN_GPU(d);
  CHECK_MSG(d.ops->pool_config(&d, UINT64_MAX, 0) == 0, "%s", d.err);
  uint64_t a = 0, b = 0, res = 0, used = 0;
  CHECK_MSG(dev_pool_alloc(&d, 1 * MiB, 0, &a) == 0, "%s", d.err);
  CHECK_MSG(dev_pool_alloc(&d, 3 * MiB, 5, &b) == 0, "%s", d.err);
  CHECK(a != b);
  CHECK(dev_holds(&d, a, 1 * MiB) && dev_holds(&d, b, 3 * MiB));
  d.ops->pool_usage(&d, &res, &used);
  CHECK(used >= 4 * MiB);
  CHECK(res >= used);
  CHECK_EQ(d.reserved, res);           /* reserved is what the pool reports */
  CHECK_EQ(d.pool_reserved, res);
  CHECK_MSG(d.ops->touch(&d, b, 3 * MiB, 5) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_write(&d, b, 3 * MiB, 5, 77) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, b, 3 * MiB, 5, 77) == 0, "%s", d.err);
  uint64_t held = d.reserved;
  dev_pool_free(&d, a, 0);
  dev_pool_free(&d, b, 5);
  CHECK_EQ(d.reserved, held);          /* threshold "keep all": freeing releases nothing */
  dev_pool_trim(&d, 0);
  CHECK_EQ(d.reserved, 0);             /* cudaMemPoolTrimTo(0) after a synchronize */
  d.ops->pool_usage(&d, &res, &used);
  CHECK_EQ(used, 0);
  CHECK_EQ(res, 0);
  CHECK_EQ(d.peak_reserved, held);
  CHECK_EQ(dev_ranges_held(&d), 0);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);
  device_close(&d);
}

GPU_TEST(gpu_pool_max_size_is_the_cap) {
  struct device d;
  OPEN_GPU(d);
  device_set_cap(&d, 64 * MiB);
  CHECK_MSG(d.ops->pool_config(&d, UINT64_MAX, d.cap) == 0, "%s", d.err);
  uint64_t a = 0, b = 0;
  CHECK_MSG(dev_pool_alloc(&d, 32 * MiB, 0, &a) == 0, "%s", d.err);
  CHECK_EQ(dev_pool_alloc(&d, 64 * MiB, 0, &b), FB_OOM);     /* 96 MiB > maxSize */
  CHECK(d.reserved <= 64 * MiB);
  dev_pool_free(&d, a, 0);
  CHECK_MSG(dev_pool_alloc(&d, 32 * MiB, 0, &b) == 0, "after the pool's OOM: %s", d.err);
  dev_pool_free(&d, b, 0);
  dev_pool_trim(&d, 0);
  CHECK_EQ(d.reserved, 0);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);
  device_close(&d);
}

GPU_TEST(gpu_verify_catches_an_overlapping_write) {
  struct device d;
  OPEN_GPU(d);
  uint64_t base = 0;
  CHECK_MSG(dev_malloc(&d, 8 * MiB, &base) == 0, "%s", d.err);
  uint64_t A = base, B = base + 1 * MiB;          /* B overlaps A's second half */
  CHECK_MSG(d.ops->verify_write(&d, A, 2 * MiB, 3, 1) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, A, 2 * MiB, 3, 1) == 0, "A alone: %s", d.err);
  CHECK(d.ops->verify_check(&d, A, 2 * MiB, 3, 2) < 0);       /* the tag is part of the pattern */
  CHECK_MSG(d.ops->verify_write(&d, B, 2 * MiB, 3, 2) == 0, "%s", d.err);
  CHECK(d.ops->verify_check(&d, A, 2 * MiB, 3, 1) < 0);
  CHECK_CONTAINS(d.err, "verify");
  CHECK_MSG(names_address_in(d.err, B, A + 2 * MiB), "the address named is not in the overlap: %s", d.err);
  CHECK_MSG(d.ops->verify_check(&d, B, 2 * MiB, 3, 2) == 0, "B, written last: %s", d.err);
  /* small blocks are sampled whole: 256 bytes of overlap are caught */
  uint64_t s1 = base + 6 * MiB, s2 = s1 + 256;
  CHECK_MSG(d.ops->verify_write(&d, s1, 512, 3, 3) == 0, "%s", d.err);
  CHECK_MSG(d.ops->verify_write(&d, s2, 512, 3, 4) == 0, "%s", d.err);
  CHECK(d.ops->verify_check(&d, s1, 512, 3, 3) < 0);
  CHECK_MSG(names_address_in(d.err, s2, s1 + 512), "%s", d.err);
  /* --touch of an overlapping block is caught too */
  CHECK_MSG(d.ops->verify_write(&d, A, 2 * MiB, 3, 1) == 0, "%s", d.err);
  CHECK_MSG(d.ops->touch(&d, A + 1536 * 1024, 1 * MiB, 3) == 0, "%s", d.err);
  CHECK(d.ops->verify_check(&d, A, 2 * MiB, 3, 1) < 0);
  CHECK_MSG(names_address_in(d.err, A + 1536 * 1024, A + 2 * MiB), "%s", d.err);
  dev_free(&d, base, 8 * MiB);
  CHECK_MSG(d.ops->sync(&d) == 0, "%s", d.err);
  device_close(&d);
}

/* ---- replays on cuda: the same policy must give the same memory figures as on sim ---- */

struct replay_input { const char *workload, *trace; };

static const struct replay_input replay_inputs[] = {
  {"script:events=a1=1MiB/a2=512@7/a3=25MiB/a4=3000/f1/a5=700KiB@7/f3/a6=12MiB/i/f2/f4/a7=30MiB@7/f6/f5/e/f7/i,repeat=40", NULL},
  {"train_loop", NULL},
  {NULL, "tests/data/gpt_train.pickle.gz"},
  {NULL, "tests/data/leaky_losses.pickle.gz"},
  {NULL, "tests/data/resnet_varsize.pickle.gz"},
  {NULL, "tests/data/gpt_train_short_frames.pickle"},
  {NULL, "tests/data/leaky_losses.rmm.csv"},
};

static int replay_on(const char *kind, const struct replay_input *in, const char *allocator, uint64_t cap,
                     struct run_result *r) {
  struct run_spec s = {.workload = in->workload, .trace = in->trace, .trace_device = -1, .world = 1, .seed = 1,
                       .allocator = allocator, .device = {.kind = kind}, .cap_bytes = cap,
                       .on_oom = ON_OOM_STOP, .validate = 1, .verify = !strcmp(kind, "cuda"), .quiet = 1};
  run_result_init(r);
  return replay_run(&s, r);
}

static const char *input_name(const struct replay_input *in) { return in->trace ? in->trace : in->workload; }

/* Replays every input with `allocator` on sim and on cuda (--validate, and --verify on
 * cuda), uncapped and, where cap_frac > 0, capped at cap_frac of the sim run's peak
 * reserved; the figures must agree. Inputs sim cannot run yet (a workload or trace reader
 * not built) are named and left out; with none left the test is skipped. */
static void compare_with_sim(const char *allocator, double cap_frac) {
  if (!allocator_find(allocator)) SKIP("strategy not built yet");
  int compared = 0;
  for (size_t i = 0; i < sizeof replay_inputs / sizeof replay_inputs[0]; i++) {
    const struct replay_input *in = &replay_inputs[i];
    for (int capped = 0; capped <= (cap_frac > 0); capped++) {
      static struct run_result sim, gpu;
      if (replay_on("sim", in, allocator, 0, &sim) == 2) {
        printf("  note: %s on %s not compared: sim says %s\n", allocator, input_name(in), sim.status);
        break;
      }
      CHECK_MSG(!strcmp(sim.status, "ok"), "%s on %s (sim): %s", allocator, input_name(in), sim.status);
      uint64_t cap = capped ? (uint64_t)(cap_frac * (double)sim.peak_reserved) : 0;
      if (capped) replay_on("sim", in, allocator, cap, &sim);
      int rc = replay_on("cuda", in, allocator, cap, &gpu);
      CHECK_MSG(rc == 0, "%s on %s (cuda, cap %llu): exit class %d: %s", allocator, input_name(in),
                (unsigned long long)cap, rc, gpu.status);
      CHECK_MSG(!strcmp(gpu.status, sim.status), "%s on %s, cap %llu: status %s on cuda, %s on sim", allocator,
                input_name(in), (unsigned long long)cap, gpu.status, sim.status);
      CHECK_MSG(gpu.peak_reserved == sim.peak_reserved,
                "%s on %s, cap %llu: peak_reserved %llu on cuda, %llu on sim (%+.4f%%)", allocator, input_name(in),
                (unsigned long long)cap, (unsigned long long)gpu.peak_reserved, (unsigned long long)sim.peak_reserved,
                100.0 * ((double)gpu.peak_reserved - (double)sim.peak_reserved) / (double)sim.peak_reserved);
      CHECK_EQ(gpu.peak_requested, sim.peak_requested);
      CHECK_EQ(gpu.peak_allocated, sim.peak_allocated);
      CHECK_EQ(gpu.events, sim.events);
      CHECK_EQ(gpu.oom_count, sim.oom_count);
      CHECK_EQ(gpu.device_allocs, sim.device_allocs);
      CHECK_EQ(gpu.cache_flushes, sim.cache_flushes);
      CHECK_STR(gpu.device, "cuda:0");
      CHECK(gpu.modeled_driver_ns > 0);
      compared++;
    }
  }
  if (!compared) SKIP("no input replays on sim yet");
}

GPU_TEST(gpu_replay_raw_matches_sim) { compare_with_sim("raw", 0); }

GPU_TEST(gpu_replay_caching_matches_sim) { compare_with_sim("caching", 0.8); }

/* expandable maps 2/20 MiB pages into one reservation per (stream, pool): the same
 * decisions through the real VMM calls */
GPU_TEST(gpu_replay_expandable_matches_sim) { compare_with_sim("expandable", 0.8); }

/* stitch maps pages into many reservations and breaks best-fit ties by address across
 * them: equal only because the cuda device asks for the sim's address order */
GPU_TEST(gpu_replay_stitch_matches_sim) { compare_with_sim("stitch", 0.8); }

/* cupy takes one of equal free chunks by cudaMalloc order, not by device address: on
 * train_resnet at 5,835,113,472 bytes (the mincap `make bench` could not confirm on an
 * H100 while the order went by address: 5.41 GiB reserved on cuda, 5.43 GiB on sim) and
 * on every replay input, sim and cuda must agree */
GPU_TEST(gpu_replay_cupy_matches_sim) {
  compare_with_sim("cupy", 0.8);
  static const struct replay_input resnet = {"train_resnet", NULL};
  static struct run_result sim, gpu;
  uint64_t caps[] = {5835113472ull, 0};
  for (int i = 0; i < 2; i++) {
    CHECK(replay_on("sim", &resnet, "cupy", caps[i], &sim) == 0);
    CHECK_MSG(replay_on("cuda", &resnet, "cupy", caps[i], &gpu) == 0, "%s", gpu.status);
    CHECK_MSG(gpu.peak_reserved == sim.peak_reserved, "train_resnet x cupy at cap %llu: cuda %llu, sim %llu",
              (unsigned long long)caps[i], (unsigned long long)gpu.peak_reserved, (unsigned long long)sim.peak_reserved);
    CHECK_EQ(gpu.device_allocs, sim.device_allocs);
  }
}

/* CUDA graphs' private pools (issue 43): the graphed jobs recorded with PyTorch 2.11, both
 * sets, replayed with the recorded allocator (caching or expandable, as recorded) on cuda
 * give sim's figures: the pools are the allocator's, the device only maps what it asks */
GPU_TEST(gpu_replay_graph_pools_match_sim) {
  static const char *const sets[] = {"recorded/pools", "recorded/graphs/heldout"};
  static const char *const jobs[] = {"graphed", "step_graph", "mempool", "compiled"};
  int compared = 0;
  for (int s = 0; s < 2; s++)
    for (int j = 0; j < 4; j++)
      for (int e = 0; e < 2; e++) {
        char path[160];
        snprintf(path, sizeof path, "%s/%s%s.pickle.gz", sets[s], jobs[j], e ? "_exp" : "");
        static const struct replay_input none = {0};
        struct replay_input in = none;
        in.trace = test_data(path);
        static struct run_result sim, gpu;
        CHECK_MSG(replay_on("sim", &in, "recorded", 0, &sim) == 0, "%s (sim): %s", path, sim.status);
        CHECK_MSG(replay_on("cuda", &in, "recorded", 0, &gpu) == 0, "%s (cuda): %s", path, gpu.status);
        CHECK_MSG(gpu.peak_reserved == sim.peak_reserved, "%s: peak reserved cuda %llu, sim %llu", path,
                  (unsigned long long)gpu.peak_reserved, (unsigned long long)sim.peak_reserved);
        CHECK_EQ(gpu.peak_allocated, sim.peak_allocated);
        CHECK_EQ(gpu.device_allocs, sim.device_allocs);
        printf("  %-40s peak reserved %llu on cuda and sim\n", path, (unsigned long long)gpu.peak_reserved);
        compared++;
      }
  CHECK_EQ(compared, 16);
}

/* async: the pool model on sim against the driver's pool on cuda (blocks written in stream
 * order, the default), every input and a few more generators: one line per input and the
 * worst difference. The model is fitted to the driver's reserved, not its addresses
 * (docs/async-pool.md): the goal is 2%; the test fails beyond ASYNC_SIM_TOLERANCE or two
 * of the pool's 32 MiB granules, whichever is larger: the driver itself varies by a granule
 * between runs of one sequence (leaky_losses as a snapshot and as its RMM log, the same
 * events: 536870912 and 503316480 on one H100 run), which on a 15-granule input is 6.7%;
 * and by more on some inputs (ddp_buckets: 11.34 GB and 11.56 GB in two runs), so an
 * input beyond that is replayed on cuda up to twice more and judged by its closest run. */
#define ASYNC_SIM_TOLERANCE 0.10
#define ASYNC_SIM_GRANULES 2
static double async_diff(uint64_t sim, uint64_t gpu) { return ((double)sim - (double)gpu) / (double)gpu; }
static double async_granules(uint64_t sim, uint64_t gpu) { return fabs((double)sim - (double)gpu) / (double)(32ull << 20); }
static int async_beyond(uint64_t sim, uint64_t gpu) {
  return fabs(async_diff(sim, gpu)) > ASYNC_SIM_TOLERANCE && async_granules(sim, gpu) > ASYNC_SIM_GRANULES;
}
GPU_TEST(gpu_replay_async_sim_vs_cuda) {
  static const struct replay_input more[] = {
    {"leaky_losses", NULL}, {"ddp_buckets", NULL}, {"random:events=20000,live=200,streams=2", NULL},
  };
  size_t n1 = sizeof replay_inputs / sizeof replay_inputs[0], n = n1 + sizeof more / sizeof more[0];
  double worst = 0;
  const char *worst_in = "";
  int compared = 0, beyond = 0;
  char beyond_in[256] = "";
  for (size_t i = 0; i < n; i++) {
    const struct replay_input *in = i < n1 ? &replay_inputs[i] : &more[i - n1];
    static struct run_result sim, gpu;
    struct run_spec s = {.workload = in->workload, .trace = in->trace, .trace_device = -1, .world = 1, .seed = 1,
                         .allocator = "async", .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .validate = 1, .quiet = 1};
    run_result_init(&sim);
    if (replay_run(&s, &sim) == 2) continue;
    s.device.kind = "cuda";
    s.validate = 0;   /* as `fragbench run` replays (the checks slow the host, and the driver's figure
                         moves with the host's pace: docs/async-pool.md, finding 11); validated apart */
    run_result_init(&gpu);
    int rc = replay_run(&s, &gpu);
    CHECK_MSG(rc == 0 && !strcmp(gpu.status, "ok") && !strcmp(sim.status, "ok"), "async on %s: cuda %s, sim %s",
              input_name(in), gpu.status, sim.status);
    double d = async_diff(sim.peak_reserved, gpu.peak_reserved);
    uint64_t lo = gpu.peak_reserved, hi = gpu.peak_reserved, closest = gpu.peak_reserved;
    for (int again = 0; again < 2 && async_beyond(sim.peak_reserved, closest); again++) {   /* the driver's own spread */
      run_result_init(&gpu);
      if (replay_run(&s, &gpu) || strcmp(gpu.status, "ok")) break;
      if (gpu.peak_reserved < lo) lo = gpu.peak_reserved;
      if (gpu.peak_reserved > hi) hi = gpu.peak_reserved;
      double d2 = async_diff(sim.peak_reserved, gpu.peak_reserved);
      if (fabs(d2) < fabs(d)) { d = d2; closest = gpu.peak_reserved; }
    }
    printf("  async %-48.48s cuda %14llu  sim %14llu  %+7.2f%%", input_name(in), (unsigned long long)closest,
           (unsigned long long)sim.peak_reserved, 100 * d);
    if (lo != hi) printf("  (cuda varied %llu .. %llu over reruns)", (unsigned long long)lo, (unsigned long long)hi);
    printf("\n");
    if (fabs(d) >= fabs(worst)) { worst = d; worst_in = input_name(in); }
    if (async_beyond(sim.peak_reserved, closest)) {
      beyond++;
      snprintf(beyond_in, sizeof beyond_in, "%s (%+.2f%%, %.0f granules)", input_name(in), 100 * d,
               async_granules(sim.peak_reserved, closest));
    }
    compared++;
  }
  if (!compared) SKIP("no input replays on sim yet");
  printf("  async sim vs cuda: worst difference %+.2f%% (%s), %d inputs\n", 100 * worst, worst_in, compared);
  CHECK_MSG(!beyond, "async sim vs cuda: %d input(s) beyond %.0f%% and %d granules, e.g. %s", beyond,
            100 * ASYNC_SIM_TOLERANCE, ASYNC_SIM_GRANULES, beyond_in);
}

/* async on cuda: the runs must complete validated and verified, and hand everything back */
GPU_TEST(gpu_replay_async_validated) {
  int ran = 0;
  for (size_t i = 0; i < sizeof replay_inputs / sizeof replay_inputs[0]; i++) {
    const struct replay_input *in = &replay_inputs[i];
    static struct run_result sim, gpu;
    if (replay_on("sim", in, "raw", 0, &sim) == 2) continue;   /* input not readable yet */
    int rc = replay_on("cuda", in, "async", 0, &gpu);
    CHECK_MSG(rc == 0 && !strcmp(gpu.status, "ok"), "async on %s: exit class %d: %s", input_name(in), rc, gpu.status);
    CHECK_EQ(gpu.peak_requested, sim.peak_requested);
    CHECK(gpu.peak_reserved >= gpu.peak_requested);
    CHECK_EQ(gpu.completed, 1);
    ran++;
  }
  if (!ran) SKIP("no input replays on sim yet");
  /* a cap below the peak: the pool's maxSize makes it an OOM row, not an error */
  const struct replay_input *in = &replay_inputs[0];
  static struct run_result gpu;
  int rc = replay_on("cuda", in, "async", 16 * MiB, &gpu);
  CHECK_MSG(rc == 0 && !strcmp(gpu.status, "oom"), "async capped at 16 MiB: exit class %d: %s", rc, gpu.status);
  /* the cap bounds the bytes in use, as PyTorch's async backend does; the pool itself
   * reserves in 32 MiB steps, which may pass a smaller cap (measured on an H100) */
  CHECK_MSG(gpu.peak_allocated <= 16 * MiB, "async capped at 16 MiB handed out %llu bytes", (unsigned long long)gpu.peak_allocated);
  printf("  async capped at 16 MiB: peak allocated %llu, peak reserved %llu\n", (unsigned long long)gpu.peak_allocated,
         (unsigned long long)gpu.peak_reserved);
}
