/* test_workload_mechanisms.c - what each generator's mechanism promises: varlen's
 * varying sizes, checkpointing's kept inputs and recomputation, autocast's casts and
 * GradScaler, eval_accumulate, model_switch, grad_accumulation in place, ddp_buckets'
 * copies and rank imbalance, ZeRO's shards, offload; and bad values rejected. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "workload_stream.h"

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
