/* test_stress.c - stress mode and fault injection: every registered strategy stays
 * consistent when device allocations fail at random (single-threaded replay and stress),
 * 2 and 4 threads on one instance pass the validator, and the checks stress relies on
 * do catch an overlap across threads and a lost block. Run through the library API
 * (stress_run, replay_run); nothing here asserts a timing. */
#include <stdlib.h>
#include "test.h"
#include "replay.h"
#include "stress.h"

#define MiB (1ull << 20)

static int online_on_sim(const struct allocator_ops *a) { return !(a->flags & (ALLOC_NEEDS_POOL | ALLOC_OFFLINE)); }

static void stress_spec_init(struct stress_spec *s, const char *allocator) {
  memset(s, 0, sizeof *s);
  s->allocator = allocator;
  s->trace_device = -1;
  s->device.kind = "sim";
  s->threads = 1;
  s->seconds = 1;
  s->validate = 1;
  s->seed = 7;
}

static const double rates[] = {0.001, 0.01, 0.1};

/* one thread, a fixed number of calls: deterministic; uncapped, then under a 512 MiB cap
 * (64 live blocks of up to 64 MiB: the strategy's own release-and-retry runs too) */
TEST(stress_fault_injection_leaves_every_strategy_consistent) {
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    if (!online_on_sim(a)) continue;
    uint64_t injected_at_01 = 0;
    for (int capped = 0; capped < 2; capped++)
      for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
        struct stress_spec s;
        stress_spec_init(&s, a->name);
        s.ops_per_thread = 20000;
        s.fail_rate = rates[k];
        s.cap_bytes = capped ? 512 * MiB : 0;
        struct stress_result *r = malloc(sizeof *r);
        int cls = stress_run(&s, r);
        int ok = cls == 0 && !strcmp(r->status, "ok") && !strcmp(r->validator, "passed");
        uint64_t ops = r->t[0].ops, inj = r->injected_failures, tinj = r->t[0].injected;
        char status[256];
        snprintf(status, sizeof status, "%.250s", r->status);
        free(r);
        CHECK_MSG(ok, "%s, fail-rate %g, cap %s: %s", a->name, rates[k], capped ? "512 MiB" : "none", status);
        CHECK(ops >= 20000);
        CHECK_EQ(tinj, inj);            /* one thread: all of them happened in its calls */
        if (rates[k] == 0.1) injected_at_01 += inj;
      }
    CHECK_MSG(injected_at_01 > 0, "%s: no device failure injected at rate 0.1", a->name);
  }
}

/* raw has no recovery: every injected failure is an OOM, and nothing else is */
TEST(stress_fault_injection_raw_oom_per_failure) {
  struct stress_spec s;
  stress_spec_init(&s, "raw");
  s.ops_per_thread = 20000;
  s.fail_rate = 0.01;
  struct stress_result *r = malloc(sizeof *r);
  int cls = stress_run(&s, r);
  uint64_t ooms = r->t[0].ooms, inj = r->injected_failures;
  free(r);
  CHECK_EQ(cls, 0);
  CHECK(inj > 20);                      /* ~10000 allocs x 0.01 */
  CHECK_EQ(ooms, inj);
}

/* the single-threaded replay path with injected failures: --on-oom skip goes on, the
 * validator passes, the device is empty at the end */
TEST(replay_fault_injection_every_strategy) {
  const char *wl = "script:events=a1=700KiB/a2=3MiB@1/a3=12MiB/f2/a4=5000000/a5=300/f1/a6=25MiB/f4/a7=9MiB@1/f3/e/f5/f6/f7,repeat=200";
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    if (a->flags & ALLOC_NEEDS_POOL) continue;
    for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
      struct run_spec s;
      memset(&s, 0, sizeof s);
      s.workload = wl;
      s.trace_device = -1;
      s.world = 1;
      s.seed = 3;
      s.allocator = a->name;
      s.device.kind = "sim";
      s.validate = 1;
      s.quiet = 1;
      s.on_oom = ON_OOM_SKIP;
      s.fail_rate = rates[k];
      struct run_result r;
      run_result_init(&r);
      int cls = replay_run(&s, &r);
      CHECK_MSG(cls == 0, "%s, fail-rate %g: %s", a->name, rates[k], r.status);
      CHECK_MSG(r.completed == 1, "%s, fail-rate %g: %s", a->name, rates[k], r.status);
      CHECK_EQ(r.events, 15 * 200);     /* 7 allocs, 7 frees, 1 empty_cache a round */
      if (!strcmp(a->name, "raw") && rates[k] == 0.1) CHECK(r.oom_count > 0);
    }
  }
}

/* N threads, each strategy for a share of ~2 s, failures injected, under a cap that
 * makes the strategies release and retry while other threads wait on the lock */
static void stress_all(int threads) {
  int n = 0;
  for (int i = 0; allocator_table[i]; i++) n += online_on_sim(allocator_table[i]);
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    if (!online_on_sim(a)) continue;
    struct stress_spec s;
    stress_spec_init(&s, a->name);
    s.threads = threads;
    s.seconds = 2.0 / n;
    s.fail_rate = 0.01;
    s.cap_bytes = 2048 * MiB;
    struct stress_result *r = malloc(sizeof *r);
    int cls = stress_run(&s, r);
    char status[600];
    snprintf(status, sizeof status, "%.290s / validator %.290s", r->status, r->validator);
    int all_ran = 1;
    for (int t = 0; t < threads; t++)
      if (!r->t[t].ops || r->t[t].stream != (uint64_t)t + 1 || r->t[t].allocs < r->t[t].frees) all_ran = 0;
    uint64_t checks = r->checks;
    free(r);
    CHECK_MSG(cls == 0 && !strncmp(status, "ok / validator passed", 21), "%s, %d threads: %s", a->name, threads, status);
    CHECK_MSG(all_ran, "%s: a thread did nothing, or used the wrong stream", a->name);
    CHECK(checks >= 1);
  }
}

LONG_TEST(stress_2_threads_every_strategy) { stress_all(2); }
LONG_TEST(stress_4_threads_every_strategy) { stress_all(4); }

/* trace-derived: each thread replays the workload on its own stream, pass after pass */
TEST(stress_trace_derived_passes) {
  struct stress_spec s;
  stress_spec_init(&s, "caching");
  if (!allocator_find("caching")) s.allocator = "raw";
  s.workload = "script:events=a1=700KiB/a2=3MiB/a3=12MiB/f2/a4=5000000/f1/i/f3/f4/a5=1MiB,repeat=4";
  s.threads = 3;
  s.ops_per_thread = 3000;
  s.fail_rate = 0.01;
  struct stress_result *r = malloc(sizeof *r);
  int cls = stress_run(&s, r);
  char status[256];
  snprintf(status, sizeof status, "%.250s", r->status);
  uint64_t passes[3] = {r->t[0].passes, r->t[1].passes, r->t[2].passes};
  uint64_t skipped[3] = {r->t[0].skipped, r->t[1].skipped, r->t[2].skipped};
  free(r);
  CHECK_MSG(cls == 0, "%s", status);
  /* a pass: 9 calls in round 1, 8 in rounds 2..4 (a5 is still live: its alloc is skipped),
   * and the free of a5 at the end of the pass: 34 calls */
  for (int t = 0; t < 3; t++) {
    CHECK(passes[t] >= 3000 / 34 - 1);
    CHECK(skipped[t] >= 3 * passes[t] && skipped[t] <= 3 * (passes[t] + 1));
  }
}

/* ---- the checks themselves: a broken strategy must fail stress ---- */

struct broken { struct device *d; uint64_t base, held; int leak_on_destroy; };

static int broken_create(void **a, struct device *d, const struct params *p, char *err) {
  (void)p; (void)err;
  struct broken *b = calloc(1, sizeof *b);
  b->d = d;
  *a = b;
  return 0;
}
/* every block at the same address: overlaps as soon as two are live */
static int same_addr_alloc(void *a, uint64_t size, uint64_t stream, struct block *out) {
  struct broken *b = a;
  if (!b->base) {
    int rc = dev_malloc(b->d, 64 * MiB, &b->base);
    if (rc) return rc;
    b->held = 64 * MiB;
  }
  if (size > 64 * MiB) return FB_OOM;
  *out = (struct block){.addr = b->base, .size = size, .stream = stream};
  return 0;
}
static void nothing_free(void *a, struct block *blk) { (void)a; (void)blk; }
/* one cudaMalloc per block, never given back: holds agree, but destroy leaves it all */
static int leaky_alloc(void *a, uint64_t size, uint64_t stream, struct block *out) {
  struct broken *b = a;
  uint64_t addr;
  int rc = dev_malloc(b->d, size, &addr);
  if (rc) return rc;
  b->held += size;
  *out = (struct block){.addr = addr, .size = size, .stream = stream};
  return 0;
}
static void broken_empty(void *a) { (void)a; }
static void broken_query(void *a, uint64_t *l, uint64_t *f) { (void)a; *l = *f = 0; }
static void broken_stats(void *a, struct alloc_stats *st) { st->held = ((struct broken *)a)->held; st->cache_flushes = 0; }
static void same_addr_destroy(void *a) {
  struct broken *b = a;
  if (b->base) dev_free(b->d, b->base, 64 * MiB);
  free(b);
}
static void leaky_destroy(void *a) { free(a); }

static const struct allocator_ops same_addr_ops = {
  .name = "same_addr", .help = "broken on purpose", .anchor = "test", .alignment = 256,
  .create = broken_create, .alloc = same_addr_alloc, .free = nothing_free, .empty_cache = broken_empty,
  .query = broken_query, .stats = broken_stats, .destroy = same_addr_destroy,
};
static const struct allocator_ops leaky_ops = {
  .name = "leaky", .help = "broken on purpose", .anchor = "test", .alignment = 256,
  .create = broken_create, .alloc = leaky_alloc, .free = nothing_free, .empty_cache = broken_empty,
  .query = broken_query, .stats = broken_stats, .destroy = leaky_destroy,
};

TEST(stress_catches_an_overlap_across_threads) {
  struct stress_spec s;
  stress_spec_init(&s, NULL);
  s.ops = &same_addr_ops;
  s.threads = 2;
  s.seconds = 0.2;
  s.max_size = 4096;
  struct stress_result *r = malloc(sizeof *r);
  int cls = stress_run(&s, r);
  char status[600], validator[600];
  snprintf(status, sizeof status, "%.250s", r->status);
  snprintf(validator, sizeof validator, "%.590s", r->validator);
  free(r);
  CHECK_EQ(cls, 1);
  CHECK_CONTAINS(status, "overlaps live block");
  CHECK_CONTAINS(validator, "failed");
}

TEST(stress_catches_a_lost_block) {
  for (int validate = 0; validate < 2; validate++) {
    struct stress_spec s;
    stress_spec_init(&s, NULL);
    s.ops = &leaky_ops;
    s.threads = 2;
    s.ops_per_thread = 200;
    s.validate = validate;
    struct stress_result *r = malloc(sizeof *r);
    int cls = stress_run(&s, r);
    char status[600];
    snprintf(status, sizeof status, "%.250s", r->status);
    free(r);
    CHECK_MSG(cls == 1, "validate=%d: exit class %d: %s", validate, cls, status);
    CHECK_CONTAINS(status, validate ? "after destroy() the device still holds" : "lost block");
  }
}

TEST(stress_cli_reports_per_thread_and_skips_gpu_only) {
  char out[512], err[512];
  snprintf(out, sizeof out, "%s/stress.out", test_tmpdir());
  snprintf(err, sizeof err, "%s/stress.err", test_tmpdir());
  int rc = test_cli(out, err, "stress", "--allocator", "raw", "--threads", "2", "--seconds", "0.2", "--fail-rate",
                    "0.01", "--validate", "--device", "sim", NULL);
  char *o = test_read_file(out), *e = test_read_file(err);
  int ok = rc == 0 && o && strstr(o, "result: ok") && strstr(o, "validator: passed");
  if (!ok) test_fail(__FILE__, __LINE__, "exit %d; stdout: %.600s; stderr: %.300s", rc, o ? o : "", e ? e : "");
  if (o && ok) {
    ok = strstr(o, "\n     0      1 ") && strstr(o, "\n     1      2 ") && strstr(o, "\n total");
    if (!ok) test_fail(__FILE__, __LINE__, "per-thread lines missing: %.600s", o);
  }
  free(o);
  free(e);
  if (!ok) return;
  if (allocator_find("async")) {   /* the pool model on sim, one stream per thread */
    rc = test_cli(out, err, "stress", "--allocator", "async", "--threads", "2", "--seconds", "0.1", "--fail-rate", "0.01",
                  "--validate", "--device", "sim", NULL);
    o = test_read_file(out);
    int ran = rc == 0 && o && strstr(o, "result: ok") && strstr(o, "validator: passed");
    CHECK_MSG(ran, "async on sim: exit %d: %.600s", rc, o ? o : "");
    free(o);
  }
  CHECK_EQ(test_cli(NULL, NULL, "stress", "--threads", "2", "--device", "sim", NULL), 2);
  CHECK_EQ(test_cli(NULL, NULL, "stress", "--allocator", "nosuch", "--device", "sim", "--seconds", "0.1", NULL), 2);
}
