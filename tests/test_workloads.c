/* test_workloads.c - the synthetic generators' event-stream contract (deterministic,
 * rewindable, frees match live allocations, ids unique among live blocks, ITER events,
 * everything freed by the end, unknown keys rejected; tests/workload_stream.c), and the
 * figures checked against real recordings: train_loop's peak against the gpt_train
 * snapshot, leaky_losses' slope and live bytes against its snapshot. What each
 * mechanism promises is in test_workload_mechanisms.c, the job parameters that combine
 * them in test_workload_jobs.c. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "workload_stream.h"

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
