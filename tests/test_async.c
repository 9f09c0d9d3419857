/* test_async.c - the `async` strategy without a GPU: its parameters, its replay on the
 * simulated device (the pool model; the model's own rules are in test_async_model.c), and
 * its wiring to the device layer's pool calls (threshold, maxSize = cap, streams, trim,
 * reserved from the pool) against a recording pool put on a sim device. The real pool is
 * tested in test_gpu.c. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "allocator.h"
#include "replay.h"
#include "model_bound.h"
#include "async_model.h"

extern const struct allocator_ops async_allocator;

static int check_params(const char *text, char *err) {
  char name[64];
  struct params p;
  if (params_parse_spec(text, name, sizeof name, &p, err)) return -1;
  p.percent_base = 1000;
  return params_check(&p, async_allocator.params, "async", err);
}

TEST(async_params_reject_bad_release_threshold) {
  char err[FB_ERRLEN];
  CHECK(check_params("async:release_threshold=lots", err) < 0);
  CHECK_CONTAINS(err, "release_threshold=lots");
  CHECK_CONTAINS(err, "byte size");
  CHECK(check_params("async:release_threshold=-1", err) < 0);
  CHECK(check_params("async:release_threshold=1GiB", err) == 0);
  CHECK(check_params("async:release_threshold=0", err) == 0);
  CHECK(check_params("async:release_threshold=10%", err) == 0);
  CHECK(check_params("async:threshold=1", err) < 0);
  CHECK_CONTAINS(err, "unknown parameter 'threshold'");
  CHECK_CONTAINS(err, "release_threshold");
}

TEST(async_is_registered_and_stream_ordered) {
  const struct allocator_ops *a = allocator_find("async");
  CHECK(a == &async_allocator);
  CHECK(!(a->flags & ALLOC_NEEDS_POOL));          /* runs everywhere: the model on sim */
  CHECK(a->flags & ALLOC_STREAM_ORDERED);         /* touched by default on cuda */
  CHECK_STR(a->anchor, "cudaMallocAsync / cudaMemPool");
}

TEST(async_params_reject_bad_model_settings) {
  char err[FB_ERRLEN];
  CHECK(check_params("async:granule=32MiB,subclasses=8", err) == 0);
  CHECK(check_params("async:subclasses=many", err) < 0);
  struct device d;
  CHECK(device_open(&d, &(struct device_config){.kind = "sim"}, err) == 0);
  const char *bad[] = {"async:subclasses=3", "async:subclasses=0", "async:granule=3MiB"};
  for (int i = 0; i < 3; i++) {
    char name[64];
    struct params p;
    CHECK(params_parse_spec(bad[i], name, sizeof name, &p, err) == 0);
    p.percent_base = d.total;
    CHECK(params_check(&p, async_allocator.params, "async", err) == 0);
    void *a = NULL;
    CHECK_MSG(async_allocator.create(&a, &d, &p, err) < 0, "%s was accepted", bad[i]);
    CHECK(strstr(err, "subclasses=") || strstr(err, "granule="));
  }
  CHECK_EQ(d.reserved, 0);
  device_close(&d);
}

TEST(async_replay_on_sim_runs_the_model_validated) {
  struct run_spec s = {.workload = "script:events=a1=1MiB/a2=40MiB/f1/a3=1MiB/f2/f3", .allocator = "async",
                       .trace_device = -1, .world = 1, .seed = 1, .device = {.kind = "sim"}, .validate = 1, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.completed, 1);
  CHECK_EQ(r.allocs, 3);
  CHECK_EQ(r.peak_reserved, 64ull << 20);         /* 41 MiB packed from the start: two chunks */
  CHECK_EQ(r.device_allocs, 2);                   /* one physical 32 MiB page per chunk */
  CHECK_EQ(r.maps, 2);
}

/* the model's two bounds (model_bound.h): 64 MiB freed, then 96 MiB past the top. Without
 * recycling the freed chunks' pages the pool maps 192 MiB; recycling them, 128 MiB. The row
 * keeps the first figure and its model_err covers both, each with the residual error. */
TEST(async_sim_row_range_covers_both_bounds_of_the_model) {
  static const char *const specs[] = {"async", "async:recycle=1"};
  uint64_t peak[2];
  double err[2];
  for (int i = 0; i < 2; i++) {
    struct run_spec s = {.workload = "script:events=a1=64MiB/a2=1MiB/f1/a3=96MiB/f2/f3", .allocator = specs[i],
                         .trace_device = -1, .world = 1, .seed = 1, .device = {.kind = "sim"}, .quiet = 1};
    struct run_result r;
    run_result_init(&r);
    CHECK_EQ(replay_run(&s, &r), 0);
    CHECK(r.model_err == AMODEL_ERR);            /* the engine's replay alone: the residual, no second bound */
    model_bound_row(&s, &r);                      /* the step of the caller that writes the row */
    CHECK_STR(r.status, "ok");
    peak[i] = r.peak_reserved;
    err[i] = r.model_err;
  }
  CHECK_EQ(peak[0], 192ull << 20);
  CHECK_EQ(peak[1], 128ull << 20);
  CHECK(fabs(err[0] - model_bound_err(192ull << 20, 128ull << 20, 192ull << 20, AMODEL_ERR)) < 1e-12);
  CHECK(192.0 * (1 - err[0]) <= 128.0 * (1 - AMODEL_ERR) + 1e-9);   /* the low bound inside the range */
  CHECK(fabs(err[1] - AMODEL_ERR) < 1e-12);                 /* the row names the bound itself: its residual alone */
  /* nothing freed: both bounds agree, the residual alone */
  struct run_spec s = {.workload = "script:events=a1=64MiB/a2=1MiB/a3=96MiB", .allocator = "async", .trace_device = -1,
                       .world = 1, .seed = 1, .device = {.kind = "sim"}, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_EQ(replay_run(&s, &r), 0);
  model_bound_row(&s, &r);
  CHECK(fabs(r.model_err - AMODEL_ERR) < 1e-12);
}

TEST(model_bound_err_covers_both_figures_with_the_residual) {
  CHECK(fabs(model_bound_err(100, 100, 100, 0.1) - 0.1) < 1e-12);
  CHECK(fabs(model_bound_err(100, 50, 100, 0.1) - 0.55) < 1e-12);   /* 100 - 45 */
  CHECK(fabs(model_bound_err(100, 100, 150, 0.1) - 0.65) < 1e-12);  /* 165 - 100 */
  CHECK(model_bound_err(0, 0, 0, 0.1) == 0.1);
}

/* a snapshot whose frees waited for a side stream (record_stream): the reader marks them,
 * the async model frees them as every stream's, the other strategies as before */
TEST(async_record_stream_frees_replay_validated) {
  static const char *const strategies[] = {"async", "caching", "expandable"};
  for (int i = 0; i < 3; i++) {
    struct run_spec s = {.trace = "tests/variants/record_stream.pickle", .allocator = strategies[i], .trace_device = -1,
                         .world = 1, .seed = 1, .device = {.kind = "sim"}, .validate = 1, .quiet = 1};
    struct run_result r;
    run_result_init(&r);
    CHECK_EQ(replay_run(&s, &r), 0);
    CHECK_STR(r.status, "ok");
    CHECK_EQ(r.skipped_events, 0);
    if (i == 0) CHECK(r.model_err > 0);           /* the model's figure, within a measured error */
    else CHECK(r.model_err == 0);                  /* the algorithm itself: exact */
  }
}

/* the same on the GPU: each marked free goes through PyTorch's unifying stream (events on
 * every stream of the replay, cudaFreeAsync on it); any CUDA error fails the row */
GPU_TEST(gpu_async_record_stream_frees_on_a_unifying_stream) {
  struct run_spec s = {.trace = "tests/variants/record_stream.pickle", .allocator = "async", .trace_device = -1,
                       .world = 1, .seed = 1, .device = {.kind = "cuda"}, .validate = 1, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_MSG(replay_run(&s, &r) == 0, "%s", r.status);
  CHECK_STR(r.status, "ok");
  CHECK_EQ(r.completed, 1);
  CHECK(r.model_err == 0);                       /* measured, not modelled */
}

/* ---- a recording pool on a sim device: the strategy's side of the contract ---- */

struct rec_pool {
  struct device d;                  /* first: the pool calls get &rec->d */
  struct device_ops ops;
  uint64_t threshold, max_size;
  int configs, allocs, frees, trims;
  uint64_t last_stream, last_keep;
  uint64_t reserved, used, next_addr;  /* used: pages held by live blocks */
  int fail_next;                    /* the next pool_alloc reports out of memory */
};

static struct rec_pool *rec_of(struct device *d) { return (struct rec_pool *)d; }

static int rec_config(struct device *d, uint64_t thr, uint64_t max) {
  struct rec_pool *r = rec_of(d);
  r->configs++;
  r->threshold = thr;
  r->max_size = max;
  return 0;
}

static int rec_alloc(struct device *d, uint64_t size, uint64_t stream, uint64_t *addr) {
  struct rec_pool *r = rec_of(d);
  r->allocs++;
  r->last_stream = stream;
  if (r->fail_next) { r->fail_next = 0; return FB_OOM; }
  uint64_t take = (size + DEV_PAGE - 1) / DEV_PAGE * DEV_PAGE;
  r->next_addr += take;
  *addr = r->next_addr - take;
  r->used += take;                  /* each block takes whole 2 MiB pages of the pool */
  if (r->used > r->reserved) r->reserved = r->used;
  return 0;
}

static void rec_free(struct device *d, uint64_t addr, uint64_t stream) {
  struct rec_pool *r = rec_of(d);
  (void)addr;
  r->frees++;
  r->last_stream = stream;
  r->used -= DEV_PAGE;              /* the tests free blocks of at most one page */
}

static void rec_trim(struct device *d, uint64_t keep) {
  struct rec_pool *r = rec_of(d);
  r->trims++;
  r->last_keep = keep;
  uint64_t floor = keep > r->used ? keep : r->used;
  if (r->reserved > floor) r->reserved = floor;
}

static void rec_usage(struct device *d, uint64_t *reserved, uint64_t *used) {
  *reserved = rec_of(d)->reserved;
  *used = rec_of(d)->used;
}

static int open_rec(struct rec_pool *r, uint64_t cap) {
  char err[FB_ERRLEN];
  memset(r, 0, sizeof *r);
  if (device_open(&r->d, &(struct device_config){.kind = "sim"}, err)) return -1;
  r->ops = *r->d.ops;
  r->ops.pool_alloc = rec_alloc;
  r->ops.pool_free = rec_free;
  r->ops.pool_trim = rec_trim;
  r->ops.pool_usage = rec_usage;
  r->ops.pool_config = rec_config;
  r->d.ops = &r->ops;
  r->d.track_ranges = 1;
  r->next_addr = 1ull << 40;
  device_set_cap(&r->d, cap);
  return 0;
}

static int create_async(struct rec_pool *r, const char *spec, void **a) {
  char name[64], err[FB_ERRLEN];
  struct params p;
  if (params_parse_spec(spec, name, sizeof name, &p, err)) return -1;
  p.percent_base = r->d.total;
  if (params_check(&p, async_allocator.params, "async", err)) return -1;
  return async_allocator.create(a, &r->d, &p, err);
}

TEST(async_default_keeps_all_and_the_cap_is_max_size) {
  struct rec_pool *r = calloc(1, sizeof *r);
  CHECK(open_rec(r, 64ull << 20) == 0);
  void *a = NULL;
  CHECK(create_async(r, "async", &a) == 0);
  CHECK_EQ(r->configs, 1);
  CHECK_EQ(r->threshold, UINT64_MAX);
  CHECK_EQ(r->max_size, 64ull << 20);
  async_allocator.destroy(a);
  device_close(&r->d);
  CHECK(open_rec(r, 0) == 0);
  CHECK(create_async(r, "async:release_threshold=1GiB", &a) == 0);
  CHECK_EQ(r->threshold, 1ull << 30);
  CHECK_EQ(r->max_size, 0);
  async_allocator.destroy(a);
  device_close(&r->d);
  free(r);
}

TEST(async_blocks_use_their_stream_and_reserved_follows_the_pool) {
  struct rec_pool *r = calloc(1, sizeof *r);
  CHECK(open_rec(r, 0) == 0);
  void *a = NULL;
  CHECK(create_async(r, "async", &a) == 0);
  struct block b1, b2;
  CHECK(async_allocator.alloc(a, 1 << 20, 7, &b1) == 0);
  CHECK_EQ(r->last_stream, 7);
  CHECK_EQ(b1.size, 1 << 20);
  CHECK_EQ(b1.stream, 7);
  CHECK(async_allocator.alloc(a, 1 << 20, 9, &b2) == 0);
  CHECK_EQ(r->d.reserved, 2 * DEV_PAGE);          /* as the pool reports it */
  CHECK(dev_holds(&r->d, b1.addr, b1.size));
  struct alloc_stats st = {0};
  async_allocator.stats(a, &st);
  CHECK_EQ(st.held, r->d.reserved);
  async_allocator.free(a, &b1);
  CHECK_EQ(r->last_stream, 7);                    /* freed on the block's own stream */
  async_allocator.free(a, &b2);
  CHECK_EQ(r->last_stream, 9);
  CHECK_EQ(r->d.reserved, 2 * DEV_PAGE);          /* keep all: nothing released on free */
  CHECK_EQ(r->d.peak_reserved, 2 * DEV_PAGE);
  async_allocator.empty_cache(a);
  CHECK_EQ(r->trims, 1);
  CHECK_EQ(r->last_keep, 0);                      /* cudaMemPoolTrimTo(0) */
  CHECK_EQ(r->d.reserved, 0);
  CHECK_EQ(dev_ranges_held(&r->d), 0);
  async_allocator.destroy(a);
  CHECK_EQ(r->trims, 2);                          /* destroy gives everything back */
  device_close(&r->d);
  free(r);
}

TEST(async_out_of_memory_is_not_retried) {
  struct rec_pool *r = calloc(1, sizeof *r);
  CHECK(open_rec(r, 0) == 0);
  void *a = NULL;
  CHECK(create_async(r, "async", &a) == 0);
  struct block b;
  r->fail_next = 1;
  CHECK_EQ(async_allocator.alloc(a, 1 << 20, 0, &b), FB_OOM);
  CHECK_EQ(r->allocs, 1);                         /* PyTorch's backend raises at once */
  CHECK_EQ(r->trims, 0);
  CHECK(async_allocator.alloc(a, 1 << 20, 0, &b) == 0);
  async_allocator.free(a, &b);
  async_allocator.destroy(a);
  device_close(&r->d);
  free(r);
}
