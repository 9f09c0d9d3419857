/* test_workloads.c - the synthetic generators: each one's event-stream contract
 * (deterministic, rewindable, frees match live allocations, ids unique among live
 * blocks, ITER events, everything freed by the end, unknown keys rejected), and the
 * figures their mechanisms promise: train_loop's peak against the real gpt_train
 * snapshot, leaky_losses' slope, varlen's varying sizes, ddp_buckets' rank imbalance.
 * Live requested bytes are computed here from the events, independently of the harness. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "workload.h"

/* ---- a live-block map: id -> size (open addressing, backward-shift deletion) ---- */
struct live_map { uint64_t *key, *val; unsigned char *used; size_t cap, n; };

static size_t slot_of(const struct live_map *m, uint64_t id) {
  uint64_t h = id * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 20) & (m->cap - 1);
}

static int map_grow(struct live_map *m) {
  struct live_map old = *m;
  m->cap = old.cap ? old.cap * 2 : 1024;
  m->key = calloc(m->cap, sizeof *m->key);
  m->val = calloc(m->cap, sizeof *m->val);
  m->used = calloc(m->cap, 1);
  m->n = 0;
  if (!m->key || !m->val || !m->used) return -1;
  for (size_t i = 0; i < old.cap; i++)
    if (old.used[i]) {
      size_t s = slot_of(m, old.key[i]);
      while (m->used[s]) s = (s + 1) & (m->cap - 1);
      m->used[s] = 1, m->key[s] = old.key[i], m->val[s] = old.val[i], m->n++;
    }
  free(old.key), free(old.val), free(old.used);
  return 0;
}

static int map_find(const struct live_map *m, uint64_t id, size_t *at) {
  if (!m->cap) return 0;
  for (size_t s = slot_of(m, id); m->used[s]; s = (s + 1) & (m->cap - 1))
    if (m->key[s] == id) {
      *at = s;
      return 1;
    }
  return 0;
}

static int map_put(struct live_map *m, uint64_t id, uint64_t size) {
  if ((m->n + 1) * 2 > m->cap && map_grow(m)) return -1;
  size_t s = slot_of(m, id);
  while (m->used[s]) s = (s + 1) & (m->cap - 1);
  m->used[s] = 1, m->key[s] = id, m->val[s] = size, m->n++;
  return 0;
}

static void map_erase(struct live_map *m, size_t s) {
  m->used[s] = 0;
  m->n--;
  for (size_t j = (s + 1) & (m->cap - 1); m->used[j]; j = (j + 1) & (m->cap - 1)) {
    size_t want = slot_of(m, m->key[j]);
    /* move j back to the hole if its home is not in (s, j] cyclically */
    if ((j > s && (want <= s || want > j)) || (j < s && want <= s && want > j)) {
      m->key[s] = m->key[j], m->val[s] = m->val[j], m->used[s] = 1, m->used[j] = 0;
      s = j;
    }
  }
}

static void map_free(struct live_map *m) {
  free(m->key), free(m->val), free(m->used);
  memset(m, 0, sizeof *m);
}

/* ---- one pass over a workload's events, checked ---- */
#define MAX_ITERS 4096
struct stream {
  uint64_t hash, events, allocs, frees, iters, empty_caches;
  uint64_t live, peak;
  uint64_t iter_live[MAX_ITERS];      /* live requested bytes at each ITER */
  uint64_t iter_alloc[MAX_ITERS];     /* bytes allocated during each iteration */
  uint64_t iter_peak[MAX_ITERS];      /* peak live during each iteration */
  double slope;                       /* least squares over ITER k >= 2 (the harness's definition) */
  char fail[FB_ERRLEN];
};

static void hash_mix(uint64_t *h, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    *h ^= (v >> (8 * i)) & 0xff;
    *h *= 0x100000001b3ull;
  }
}

static double slope_of(const uint64_t *y, uint64_t n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
  for (uint64_t i = 2; i < n; i++, k++) {
    sx += (double)i, sy += (double)y[i], sxx += (double)i * (double)i, sxy += (double)i * (double)y[i];
  }
  if (k < 2) return NAN;
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

/* reads the open workload to its end; 0 ok, -1 with s->fail set */
static int drain(struct workload *w, struct stream *s) {
  memset(s, 0, sizeof *s);
  s->hash = 0xcbf29ce484222325ull;
  struct live_map live = {0};
  struct event ev;
  char err[FB_ERRLEN];
  uint64_t iter_start_alloc = 0, total_alloc = 0;
  int rc;
  while ((rc = workload_next(w, &ev, err)) == 1) {
    s->events++;
    hash_mix(&s->hash, ev.op), hash_mix(&s->hash, ev.id), hash_mix(&s->hash, ev.size), hash_mix(&s->hash, ev.stream);
    size_t at;
    switch (ev.op) {
    case OP_ALLOC:
      if (!ev.size) { snprintf(s->fail, sizeof s->fail, "event %llu: alloc of 0 bytes", (unsigned long long)s->events); goto bad; }
      if (map_find(&live, ev.id, &at)) { snprintf(s->fail, sizeof s->fail, "event %llu: id %llu allocated while live", (unsigned long long)s->events, (unsigned long long)ev.id); goto bad; }
      if (map_put(&live, ev.id, ev.size)) { snprintf(s->fail, sizeof s->fail, "out of memory"); goto bad; }
      s->allocs++;
      s->live += ev.size;
      total_alloc += ev.size;
      if (s->live > s->peak) s->peak = s->live;
      if (s->iters < MAX_ITERS && s->live > s->iter_peak[s->iters]) s->iter_peak[s->iters] = s->live;
      break;
    case OP_FREE:
      if (!map_find(&live, ev.id, &at)) { snprintf(s->fail, sizeof s->fail, "event %llu: free of id %llu, not live", (unsigned long long)s->events, (unsigned long long)ev.id); goto bad; }
      s->live -= live.val[at];
      map_erase(&live, at);
      s->frees++;
      break;
    case OP_ITER:
      if (s->iters < MAX_ITERS) {
        s->iter_live[s->iters] = s->live;
        s->iter_alloc[s->iters] = total_alloc - iter_start_alloc;
      }
      iter_start_alloc = total_alloc;
      s->iters++;
      break;
    case OP_EMPTY_CACHE:
      s->empty_caches++;
      break;
    }
  }
  if (rc < 0) { snprintf(s->fail, sizeof s->fail, "next() failed: %.400s", err); goto bad; }
  if (live.n) { snprintf(s->fail, sizeof s->fail, "%zu blocks (%llu bytes) still live at the end", live.n, (unsigned long long)s->live); goto bad; }
  s->slope = slope_of(s->iter_live, s->iters < MAX_ITERS ? s->iters : MAX_ITERS);
  map_free(&live);
  return 0;
bad:
  map_free(&live);
  return -1;
}

static int open_spec(struct workload *w, const char *spec, int rank, int world, uint64_t seed, char *err) {
  char name[64];
  const char *colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  snprintf(name, sizeof name, "%.*s", (int)n, spec);
  const struct workload_ops *ops = workload_find(name);
  if (!ops) {
    snprintf(err, FB_ERRLEN, "no workload '%s' registered", name);
    return -1;
  }
  struct workload_ctx ctx = {.rank = rank, .world = world, .seed = seed, .trace_device = -1};
  return workload_open(w, ops, spec, &ctx, 85017493504ull, err);
}

/* opens spec and drains it into s (heap: struct stream is large); NULL with err set */
static struct stream *run_spec(const char *spec, int rank, int world, uint64_t seed, char *err) {
  struct workload w;
  if (open_spec(&w, spec, rank, world, seed, err)) return NULL;
  struct stream *s = malloc(sizeof *s);
  if (drain(&w, s)) {
    snprintf(err, FB_ERRLEN, "%.100s: %.400s", spec, s->fail);
    free(s);
    s = NULL;
  }
  workload_close(&w);
  return s;
}

/* ---- the contract every generator keeps ---- */
static void check_contract(const char *spec, int random) {
  char err[FB_ERRLEN];
  struct workload w;
  CHECK_MSG(!open_spec(&w, spec, 0, 1, 1, err), "%s: open: %s", spec, err);
  struct stream *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  int ok1 = !drain(&w, a);
  if (!ok1) test_fail(__FILE__, __LINE__, "%s: %s", spec, a->fail);
  int rw = workload_rewind(&w, err);
  int ok2 = !rw && !drain(&w, b);
  if (!ok2) test_fail(__FILE__, __LINE__, "%s after rewind: %s", spec, rw ? err : b->fail);
  workload_close(&w);
  if (ok1 && ok2) {
    if (a->hash != b->hash || a->events != b->events)
      test_fail(__FILE__, __LINE__, "%s: rewind gave a different stream (%llu vs %llu events)", spec,
                (unsigned long long)a->events, (unsigned long long)b->events);
    if (a->iters < 3) test_fail(__FILE__, __LINE__, "%s: only %llu ITER events", spec, (unsigned long long)a->iters);
    if (a->allocs != a->frees) test_fail(__FILE__, __LINE__, "%s: %llu allocs, %llu frees", spec, (unsigned long long)a->allocs, (unsigned long long)a->frees);
    /* a fresh open with the same seed: the same stream; another seed: another one if random */
    struct stream *c = run_spec(spec, 0, 1, 1, err), *d = run_spec(spec, 0, 1, 2, err);
    if (!c || !d) test_fail(__FILE__, __LINE__, "%s: %s", spec, err);
    else {
      if (c->hash != a->hash) test_fail(__FILE__, __LINE__, "%s: same seed, different stream", spec);
      if (random && d->hash == a->hash) test_fail(__FILE__, __LINE__, "%s: seeds 1 and 2 gave the same stream", spec);
      if (!random && d->hash != a->hash) test_fail(__FILE__, __LINE__, "%s: not random, yet the seed changed the stream", spec);
    }
    free(c), free(d);
  }
  free(a), free(b);
  /* unknown keys are rejected, naming the key and listing the known ones */
  char bad[256];
  snprintf(bad, sizeof bad, "%s%sbogus_key=1", spec, strchr(spec, ':') ? "," : ":");
  CHECK_MSG(open_spec(&w, bad, 0, 1, 1, err) != 0, "%s: unknown key accepted", bad);
  CHECK_CONTAINS(err, "unknown parameter 'bogus_key'");
  CHECK_CONTAINS(err, "iters");
}

#define CONTRACT_TEST(gen, spec, random) \
  TEST(workload_##gen##_contract) { check_contract(spec, random); }

CONTRACT_TEST(train_loop, "train_loop", 0)
CONTRACT_TEST(train_loop_math_keep_grads, "train_loop:attention=math,set_to_none=0,layers=2,seq=256,iters=5", 0)

/* ---- train_loop against the real gpt_train snapshot ---- */

/* tests/data/gpt_train.pickle.gz: peak of live requested bytes (sum of alloc sizes,
 * frees at free_completed), computed with python3 from the pickle */
#define GPT_TRAIN_TRACE_PEAK_REQUESTED 9786720264ull

TEST(workload_train_loop_peak_matches_gpt_train_trace) {
  char err[FB_ERRLEN];
  struct stream *s = run_spec("train_loop:vocab=32000,hidden=1024,layers=8,heads=16,ffn=4096,batch=16,seq=512,"
                              "dtype_bytes=4,optimizer=adamw,iters=12", 0, 1, 1, err);
  CHECK_MSG(s, "%s", err);
  double ratio = (double)s->peak / (double)GPT_TRAIN_TRACE_PEAK_REQUESTED;
  printf("    train_loop peak_requested %llu vs gpt_train trace %llu: %+.2f%%\n", (unsigned long long)s->peak,
         (unsigned long long)GPT_TRAIN_TRACE_PEAK_REQUESTED, (ratio - 1) * 100);
  uint64_t iters = s->iters;
  free(s);
  CHECK_EQ(iters, 12);
  CHECK_MSG(fabs(ratio - 1) <= 0.10, "peak %.4fx the trace's", ratio);
}

TEST(workload_train_loop_has_no_leak) {
  char err[FB_ERRLEN];
  struct stream *s = run_spec("train_loop:layers=2,iters=8", 0, 1, 1, err);
  CHECK_MSG(s, "%s", err);
  double slope = s->slope;
  uint64_t first = s->iter_live[2], last = s->iter_live[7];
  free(s);
  CHECK_MSG(fabs(slope) < 0.5, "slope %.3f bytes/iter", slope);
  CHECK_EQ(first, last);
}

/* AdamW's states come at the first step, set_to_none=0 keeps gradients: what is live at
 * the step boundary is parameters + grads + 2 states + the script's batch/logits/loss */
TEST(workload_train_loop_steady_state_is_params_grads_states) {
  char err[FB_ERRLEN];
  const uint64_t L = 2, H = 256, FF = 1024, V = 1000, B = 4, S = 64;
  uint64_t per_block = 3 * H * H + 3 * H + H * H + H + FF * H + FF + H * FF + H + 4 * H;
  uint64_t params = (2 * V * H + L * per_block) * 4;
  uint64_t script = B * S * 8 * 2;   /* the batch: int64 inputs and targets (logits and loss dropped) */
  char spec[256];
  snprintf(spec, sizeof spec, "train_loop:layers=%llu,hidden=%llu,heads=4,ffn=%llu,vocab=%llu,batch=%llu,seq=%llu,iters=4",
           (unsigned long long)L, (unsigned long long)H, (unsigned long long)FF, (unsigned long long)V,
           (unsigned long long)B, (unsigned long long)S);
  struct stream *adam = run_spec(spec, 0, 1, 1, err);
  CHECK_MSG(adam, "%s", err);
  uint64_t at_iter = adam->iter_live[1];
  free(adam);
  CHECK_EQ(at_iter, 4 * params + script);
  char sgd[300];
  snprintf(sgd, sizeof sgd, "%s,optimizer=sgd", spec);
  struct stream *s = run_spec(sgd, 0, 1, 1, err);
  CHECK_MSG(s, "%s", err);
  at_iter = s->iter_live[1];
  free(s);
  CHECK_EQ(at_iter, 2 * params + script);
}

/* the math attention path materializes batch*heads*seq*seq scores: the peak grows by
 * at least one layer's saved softmax over the SDPA path */
TEST(workload_train_loop_math_attention_saves_scores) {
  char err[FB_ERRLEN];
  struct stream *a = run_spec("train_loop:layers=2,seq=512,batch=4,iters=3", 0, 1, 1, err);
  struct stream *b = run_spec("train_loop:layers=2,seq=512,batch=4,iters=3,attention=math", 0, 1, 1, err);
  CHECK_MSG(a && b, "%s", err);
  uint64_t pa = a->peak, pb = b->peak;
  free(a), free(b);
  uint64_t probs = 4ull * 16 * 512 * 512 * 4;
  CHECK_MSG(pb >= pa + 2 * probs - 2 * (4ull * 16 * 512 * 4), "sdpa %llu, math %llu", (unsigned long long)pa, (unsigned long long)pb);
}

/* ---- leaky_losses: the slope the harness will report equals the leak by construction ---- */

/* tests/data/leaky_losses.pickle.gz, computed with python3 from the pickle: least-squares
 * slope of live requested bytes at each SGD.step END annotation (steps >= 2), live bytes at
 * the first step's end, and the bytes the script had preloaded on the GPU before training
 * (two 32 MiB tensors and a 1 MiB one, live from the trace's start to its end) */
#define LEAKY_TRACE_SLOPE 2052.0
#define LEAKY_TRACE_LIVE_AFTER_STEP0 374656836ull
#define LEAKY_TRACE_PRELOADED 68157440ull

static void check_leak(const char *spec, double expected) {
  char err[FB_ERRLEN];
  struct stream *s = run_spec(spec, 0, 1, 1, err);
  CHECK_MSG(s, "%s", err);
  double slope = s->slope;
  free(s);
  CHECK_MSG(fabs(slope - expected) < 1e-6 * (expected > 1 ? expected : 1), "%s: slope %.3f, built to leak %.1f", spec, slope, expected);
}

TEST(workload_leaky_losses_slope_is_the_leak_by_construction) {
  check_leak("leaky_losses", 4 + 256 * 8);
  check_leak("leaky_losses:keep_outputs=0,keep_logs=3,iters=40", 4 + 3 * 4);
  check_leak("leaky_losses:keep_loss=0,keep_outputs=0,iters=40", 0);
  check_leak("leaky_losses:dtype_bytes=2,keep_outputs=0,iters=40", 2);
  check_leak("leaky_losses:model=gpt,layers=2,hidden=256,heads=4,ffn=1024,vocab=1000,batch=4,seq=64,iters=12,keep_logs=2",
             4 + 4 * 64 * 8 + 2 * 4);
}

TEST(workload_leaky_losses_matches_the_recorded_run) {
  char err[FB_ERRLEN];
  struct stream *s = run_spec("leaky_losses", 0, 1, 1, err);
  CHECK_MSG(s, "%s", err);
  double slope = s->slope;
  uint64_t live0 = s->iter_live[0], iters = s->iters;
  free(s);
  printf("    leaky_losses: slope %.1f B/iter (trace %.1f); live after step 0 %llu + preloaded %llu (trace %llu)\n", slope,
         LEAKY_TRACE_SLOPE, (unsigned long long)live0, (unsigned long long)LEAKY_TRACE_PRELOADED,
         (unsigned long long)LEAKY_TRACE_LIVE_AFTER_STEP0);
  CHECK_EQ(iters, 300);
  CHECK(fabs(slope - LEAKY_TRACE_SLOPE) < 1e-6);
  /* the recorded script still referenced the step's logits (256 x 1000 fp32) there; our
   * step drops them before its ITER */
  CHECK_EQ(live0 + LEAKY_TRACE_PRELOADED + 256 * 1000 * 4, LEAKY_TRACE_LIVE_AFTER_STEP0);
}

CONTRACT_TEST(leaky_losses, "leaky_losses:iters=20", 0)
CONTRACT_TEST(leaky_losses_gpt, "leaky_losses:model=gpt,layers=2,hidden=256,heads=4,ffn=1024,batch=4,seq=64,iters=6,keep_logs=2", 0)

CONTRACT_TEST(varlen, "varlen:iters=10", 1)
CONTRACT_TEST(varlen_bucketed, "varlen:dist=bucketed,buckets=[64,192,320],iters=8,layers=2", 1)
CONTRACT_TEST(varlen_lognormal, "varlen:dist=lognormal,mu=5,sigma=1,iters=8,layers=2", 1)
CONTRACT_TEST(checkpointing, "checkpointing", 0)
CONTRACT_TEST(amp, "amp", 0)
CONTRACT_TEST(amp_fp16_checkpointed, "amp:amp_dtype=fp16,checkpoint_every=3,attention=math,layers=4,seq=256,iters=4", 0)
CONTRACT_TEST(eval_accumulate, "eval_accumulate", 0)
CONTRACT_TEST(model_switch, "model_switch", 0)
CONTRACT_TEST(grad_accumulation, "grad_accumulation", 0)
CONTRACT_TEST(ddp_buckets, "ddp_buckets", 0)
CONTRACT_TEST(ddp_buckets_views, "ddp_buckets:hook=allreduce,gradient_as_bucket_view=1,layers=2,iters=4", 0)
CONTRACT_TEST(zero_shard, "zero_shard", 0)
CONTRACT_TEST(zero_shard_stage1, "zero_shard:stage=1,layers=2,iters=4", 0)
CONTRACT_TEST(offload, "offload", 0)
CONTRACT_TEST(offload_params, "offload:target=params", 0)

/* ---- what each mechanism promises ---- */

/* peak and live-at-ITER of one spec (rank/world given) */
static int figures(const char *spec, int rank, int world, uint64_t *peak, uint64_t *iter_live1, char *err) {
  struct stream *s = run_spec(spec, rank, world, 1, err);
  if (!s) return -1;
  *peak = s->peak;
  if (iter_live1) *iter_live1 = s->iters > 1 ? s->iter_live[1] : 0;
  free(s);
  return 0;
}

TEST(workload_varlen_sizes_vary_per_iteration) {
  char err[FB_ERRLEN];
  const char *specs[] = {"varlen:iters=12", "varlen:dist=bucketed,iters=12", "varlen:dist=lognormal,iters=12"};
  for (int k = 0; k < 3; k++) {
    struct stream *s = run_spec(specs[k], 0, 1, 7, err);
    CHECK_MSG(s, "%s", err);
    int distinct = 0;
    for (uint64_t i = 0; i < 12; i++) {
      int seen = 0;
      for (uint64_t j = 0; j < i; j++) seen |= s->iter_peak[j] == s->iter_peak[i];
      distinct += !seen;
    }
    free(s);
    CHECK_MSG(distinct >= 6, "%s: only %d distinct per-iteration peaks in 12", specs[k], distinct);
  }
  /* each rank draws its own shapes */
  struct stream *a = run_spec("varlen:iters=6", 0, 2, 7, err), *b = run_spec("varlen:iters=6", 1, 2, 7, err);
  CHECK_MSG(a && b, "%s", err);
  int differ = a->hash != b->hash;
  free(a), free(b);
  CHECK(differ);
}

TEST(workload_varlen_rejects_bad_buckets) {
  char err[FB_ERRLEN];
  struct workload w;
  CHECK(open_spec(&w, "varlen:dist=bucketed,buckets=[128,x]", 0, 1, 1, err) != 0);
  CHECK_CONTAINS(err, "buckets");
  CHECK(open_spec(&w, "varlen:dist=zipf", 0, 1, 1, err) != 0);
  CHECK_CONTAINS(err, "uniform|bucketed|lognormal");
}

/* a small-vocabulary shape where the blocks' saved activations dominate the peak */
#define ACT_HEAVY "layers=8,hidden=512,heads=8,ffn=2048,vocab=512,batch=8,seq=512,iters=3"
#define ACT_U (8ull * 512 * 512 * 4)   /* one batch*seq*hidden fp32 activation */

TEST(workload_checkpointing_keeps_only_segment_inputs) {
  char err[FB_ERRLEN];
  uint64_t full, ck2, ck1, ck8;
  CHECK_MSG(!figures("train_loop:" ACT_HEAVY, 0, 1, &full, NULL, err), "%s", err);
  CHECK_MSG(!figures("checkpointing:every=2," ACT_HEAVY, 0, 1, &ck2, NULL, err), "%s", err);
  CHECK_MSG(!figures("checkpointing:every=1," ACT_HEAVY, 0, 1, &ck1, NULL, err), "%s", err);
  CHECK_MSG(!figures("checkpointing:every=8," ACT_HEAVY, 0, 1, &ck8, NULL, err), "%s", err);
  printf("    peak: no checkpointing %.0f U, every=1 %.0f U, every=2 %.0f U, every=8 %.0f U\n", (double)full / ACT_U,
         (double)ck1 / ACT_U, (double)ck2 / ACT_U, (double)ck8 / ACT_U);
  /* 8 blocks x ~13 saved U without; with every=2: 4 segment inputs + one segment's recomputed 2 x 13 U */
  CHECK_MSG(full > ck2 + 50 * ACT_U, "every=2 saves only %.1f U", ((double)full - (double)ck2) / ACT_U);
  CHECK(ck1 < ck2);
  /* one segment of all 8 blocks: the recomputation burst rebuilds all of them at once */
  CHECK(ck8 > ck2);
  CHECK(ck8 <= full + 2 * ACT_U);
}

TEST(workload_checkpointing_recomputes_in_backward) {
  char err[FB_ERRLEN];
  struct stream *a = run_spec("train_loop:" ACT_HEAVY, 0, 1, 1, err), *b = run_spec("checkpointing:every=2," ACT_HEAVY, 0, 1, 1, err);
  CHECK_MSG(a && b, "%s", err);
  uint64_t alloc_a = a->iter_alloc[1], alloc_b = b->iter_alloc[1];
  free(a), free(b);
  /* each block's forward runs twice: allocated bytes per iteration grow by ~ one forward */
  CHECK_MSG(alloc_b > alloc_a + 8 * 10 * ACT_U, "%llu vs %llu", (unsigned long long)alloc_b, (unsigned long long)alloc_a);
}

/* does the stream allocate a block of exactly `size` in iteration 1? */
static int allocates_size(const char *spec, uint64_t size, uint64_t *count, char *err) {
  struct workload w;
  if (open_spec(&w, spec, 0, 1, 1, err)) return -1;
  struct event ev;
  uint64_t iters = 0;
  *count = 0;
  int rc;
  while ((rc = workload_next(&w, &ev, err)) == 1) {
    if (ev.op == OP_ITER) iters++;
    else if (ev.op == OP_ALLOC && iters == 1 && ev.size == size) (*count)++;
  }
  workload_close(&w);
  return rc < 0 ? -1 : 0;
}

TEST(workload_amp_casts_weights_every_step) {
  char err[FB_ERRLEN];
  uint64_t H = 1024, n_amp, n_fp32, n_master;
  /* in_proj weight: bf16 copy 3H*H*2 bytes, one per block per forward; masters stay fp32 */
  CHECK_MSG(!allocates_size("amp", 3 * H * H * 2, &n_amp, err), "%s", err);
  CHECK_MSG(!allocates_size("train_loop", 3 * H * H * 2, &n_fp32, err), "%s", err);
  CHECK_MSG(!allocates_size("amp:checkpoint_every=2", 3 * H * H * 2, &n_master, err), "%s", err);
  CHECK_EQ(n_amp, 8 * 2);   /* the cast, and the low-precision weight gradient before its fp32 cast */
  CHECK_EQ(n_fp32, 0);
  CHECK_EQ(n_master, 8 * 3);  /* recomputation casts again */
  uint64_t peak_amp, peak_fp32, peak_ck, live_amp, live_fp32;
  CHECK_MSG(!figures("amp:" ACT_HEAVY, 0, 1, &peak_amp, &live_amp, err), "%s", err);
  CHECK_MSG(!figures("train_loop:" ACT_HEAVY, 0, 1, &peak_fp32, &live_fp32, err), "%s", err);
  CHECK_MSG(!figures("amp:checkpoint_every=2," ACT_HEAVY, 0, 1, &peak_ck, NULL, err), "%s", err);
  CHECK_EQ(live_amp, live_fp32);   /* fp32 masters, grads and states: the same at the step boundary */
  CHECK(peak_amp < peak_fp32);
  CHECK(peak_ck < peak_amp);
}

TEST(workload_amp_fp16_adds_grad_scaler) {
  char err[FB_ERRLEN];
  uint64_t bf16, fp16;
  CHECK_MSG(!allocates_size("amp:layers=2,iters=3", 4, &bf16, err), "%s", err);
  CHECK_MSG(!allocates_size("amp:layers=2,iters=3,amp_dtype=fp16", 4, &fp16, err), "%s", err);
  CHECK_EQ(fp16, bf16 + 3);   /* scaled loss, found_inf, inv_scale each step */
}

TEST(workload_eval_accumulate_keeps_outputs_until_the_pass_ends) {
  char err[FB_ERRLEN];
  uint64_t train, keep_logits, keep_preds, live_train, live_eval;
  CHECK_MSG(!figures("train_loop:layers=2", 0, 1, &train, &live_train, err), "%s", err);
  CHECK_MSG(!figures("eval_accumulate:layers=2,eval_every=2,eval_batches=6", 0, 1, &keep_logits, &live_eval, err), "%s", err);
  CHECK_MSG(!figures("eval_accumulate:layers=2,eval_every=2,eval_batches=6,keep=preds", 0, 1, &keep_preds, NULL, err), "%s", err);
  uint64_t logits = 16ull * 512 * 32000 * 4;
  CHECK_EQ(live_eval, live_train);                  /* the pass is gone by the step boundary */
  CHECK_MSG(keep_logits >= live_train + 12 * logits, "peak %llu", (unsigned long long)keep_logits);  /* 6 kept + their cat */
  CHECK(keep_preds < keep_logits);
  CHECK_EQ(keep_preds, train);                      /* predictions are small: training's peak stands */
}

TEST(workload_model_switch_frees_a_before_b) {
  char err[FB_ERRLEN];
  struct workload w;
  CHECK_MSG(!open_spec(&w, "model_switch:layers=2,iters=3,b_layers=3,b_iters=4", 0, 1, 1, err), "%s", err);
  struct live_map live = {0};
  struct event ev;
  uint64_t bytes = 0, iters = 0, empties = 0, live_at_empty = 1;
  while (workload_next(&w, &ev, err) == 1) {
    size_t at;
    if (ev.op == OP_ALLOC) { map_put(&live, ev.id, ev.size); bytes += ev.size; }
    else if (ev.op == OP_FREE && map_find(&live, ev.id, &at)) { bytes -= live.val[at]; map_erase(&live, at); }
    else if (ev.op == OP_ITER) iters++;
    else if (ev.op == OP_EMPTY_CACHE) { empties++; live_at_empty = bytes; CHECK(iters == 3); }
  }
  workload_close(&w);
  map_free(&live);
  CHECK_EQ(empties, 1);
  CHECK_EQ(live_at_empty, 0);
  CHECK_EQ(iters, 7);
  struct stream *s = run_spec("model_switch:layers=2,iters=3,b_layers=3,b_iters=4", 0, 1, 1, err);
  CHECK_MSG(s, "%s", err);
  uint64_t a_live = s->iter_live[2], b_live = s->iter_live[6];
  free(s);
  CHECK(b_live > a_live);   /* B: 3 blocks of width 1536 against A's 2 of 1024 */
  struct workload w2;
  CHECK(open_spec(&w2, "model_switch:b_heads=7", 0, 1, 1, err) != 0);   /* 1536 % 7 */
  CHECK_CONTAINS(err, "heads=7");
}

TEST(workload_grad_accumulation_accumulates_in_place) {
  char err[FB_ERRLEN];
  uint64_t one, four, live_one, live_four;
  CHECK_MSG(!figures("train_loop:batch=8,layers=2,iters=4", 0, 1, &one, &live_one, err), "%s", err);
  CHECK_MSG(!figures("grad_accumulation:batch=8,layers=2,iters=4,accum=4", 0, 1, &four, &live_four, err), "%s", err);
  uint64_t H = 1024, params = (2 * 32000 * H + 2 * (12 * H * H + 13 * H)) * 4;
  CHECK_EQ(live_four, live_one);   /* one set of gradients, whatever the number of micro-batches */
  /* later micro-batches reach the loss with every gradient alive (train_loop's were set to
   * None), plus the loss/accum scalar held through backward */
  CHECK_EQ(four, one + params + 4);
  uint64_t n_grad;
  CHECK_MSG(!allocates_size("grad_accumulation:batch=8,layers=2,iters=4,accum=4", 32000 * H * 4, &n_grad, err), "%s", err);
  /* embedding + head: per micro-batch one grad (new or temporary), + AdamW's temporary; no new states */
  CHECK_EQ(n_grad, 2 * 4 + 2);
}

TEST(workload_ddp_buckets_hold_one_copy_of_the_gradients) {
  char err[FB_ERRLEN];
  uint64_t peak, live_ddp, live_plain;
  CHECK_MSG(!figures("train_loop:layers=2,iters=4", 0, 1, &peak, &live_plain, err), "%s", err);
  CHECK_MSG(!figures("ddp_buckets:layers=2,iters=4,hook=allreduce", 0, 1, &peak, &live_ddp, err), "%s", err);
  uint64_t H = 1024, params = (2 * 32000 * H + 2 * (12 * H * H + 13 * H)) * 4;
  CHECK_EQ(live_ddp, live_plain + params);
  CHECK_MSG(!figures("ddp_buckets:layers=2,iters=4,hook=allreduce,gradient_as_bucket_view=1", 0, 1, &peak, &live_ddp, err), "%s", err);
  CHECK_EQ(live_ddp, live_plain);   /* grads are the buckets */
}

TEST(workload_ddp_buckets_ranks_differ_with_imbalance) {
  char err[FB_ERRLEN];
  uint64_t peak[4], even[4];
  for (int r = 0; r < 4; r++) {
    CHECK_MSG(!figures("ddp_buckets:layers=2,iters=3,imbalance=0.5", r, 4, &peak[r], NULL, err), "%s", err);
    CHECK_MSG(!figures("ddp_buckets:layers=2,iters=3", r, 4, &even[r], NULL, err), "%s", err);
  }
  printf("    ddp_buckets world=4 imbalance=0.5 peaks: %.3f %.3f %.3f %.3f GB\n", peak[0] / 1e9, peak[1] / 1e9,
         peak[2] / 1e9, peak[3] / 1e9);
  for (int r = 1; r < 4; r++) {
    CHECK(peak[r] > peak[r - 1]);
    CHECK_EQ(even[r], even[0]);
  }
  CHECK_EQ(peak[0], even[0]);
}

TEST(workload_zero_shard_shards_states_and_grads) {
  char err[FB_ERRLEN];
  uint64_t peak, plain, s1w1, s1w4, s2w4;
  CHECK_MSG(!figures("train_loop:layers=2,iters=3", 0, 1, &peak, &plain, err), "%s", err);
  CHECK_MSG(!figures("zero_shard:layers=2,iters=3,stage=1", 0, 1, &peak, &s1w1, err), "%s", err);
  CHECK_MSG(!figures("zero_shard:layers=2,iters=3,stage=1", 1, 4, &peak, &s1w4, err), "%s", err);
  CHECK_MSG(!figures("zero_shard:layers=2,iters=3,stage=2", 1, 4, &peak, &s2w4, err), "%s", err);
  uint64_t H = 1024, params = (2 * 32000 * H + 2 * (12 * H * H + 13 * H)) * 4;
  /* world 1: states whole, plus DeepSpeed's fp32 partition copy and the gradient partition */
  CHECK_EQ(s1w1, plain + 2 * params);
  /* world 4: master, gradient partition, exp_avg, exp_avg_sq are quarters */
  CHECK_EQ(s1w4, plain - 2 * params + 4 * (params / 4));
  CHECK_EQ(s2w4, s1w4 - params);   /* stage 2: no full gradients */
}

TEST(workload_offload_moves_memory_off_the_gpu) {
  char err[FB_ERRLEN];
  uint64_t plain, act, par, live_par;
  CHECK_MSG(!figures("train_loop:" ACT_HEAVY, 0, 1, &plain, NULL, err), "%s", err);
  CHECK_MSG(!figures("offload:" ACT_HEAVY, 0, 1, &act, NULL, err), "%s", err);
  CHECK_MSG(!figures("offload:target=params," ACT_HEAVY, 0, 1, &par, &live_par, err), "%s", err);
  CHECK_MSG(plain > act + 60 * ACT_U, "save_on_cpu saves only %.1f U", ((double)plain - (double)act) / ACT_U);
  CHECK_EQ(live_par, 2 * 8 * 512 * 8);   /* only the batch stays between steps */
  CHECK(par < plain);
  uint64_t nopf;
  CHECK_MSG(!figures("offload:target=params,prefetch=0," ACT_HEAVY, 0, 1, &nopf, NULL, err), "%s", err);
  CHECK(nopf <= par);
}

TEST(workload_generators_reject_bad_values) {
  char err[FB_ERRLEN];
  struct workload w;
  struct { const char *spec, *says; } bad[] = {
    {"train_loop:heads=3", "heads=3 must divide hidden=1024"},
    {"train_loop:layers=0", "'layers=0': expected 1..4096"},
    {"train_loop:optimizer=lion", "expected adamw, adam or sgd"},
    {"train_loop:attention=flash", "expected one of sdpa|math"},
    {"train_loop:dtype_bytes=3", "expected 1, 2, 4 or 8"},
    {"train_loop:batch=1048576,seq=4194304", "exceed 2^48 bytes"},
    {"checkpointing:every=0", "'every=0': expected 1..4096"},
    {"amp:amp_dtype=fp8", "bf16|fp16"},
    {"leaky_losses:model=cnn", "mlp|gpt"},
    {"varlen:batch_min=8,batch_max=4", "'batch_max=4': expected 8.."},
    {"ddp_buckets:imbalance=-1", "imbalance"},
    {"zero_shard:stage=3", "'stage=3': expected 1..2"},
    {"offload:target=optimizer", "activations|params"},
    {"eval_accumulate:keep=hidden", "logits|preds"},
    {"grad_accumulation:accum=0", "'accum=0'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_MSG(open_spec(&w, bad[i].spec, 0, 1, 1, err) != 0, "%s accepted", bad[i].spec);
    CHECK_CONTAINS(err, bad[i].says);
  }
  CHECK(open_spec(&w, "ddp_buckets", 4, 4, 1, err) != 0);   /* rank outside the world */
  CHECK_CONTAINS(err, "rank 4");
}
