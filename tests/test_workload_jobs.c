/* test_workload_jobs.c - one workload describes one job: the job parameters of the GPT
 * generators (ckpt=, amp=, accum=, arch=gpt; train_loop's zero= and offload=) keep the contract, agree with the separate
 * workloads they combine (checkpointing, amp), leave every default stream as it was,
 * and move the peak the way the mechanism says; train_resnet's parameter count is
 * torchvision's ResNet-50 (25,557,032). */
#include <stdlib.h>
#include "test.h"
#include "workload_stream.h"

#define CONTRACT_TEST(gen, spec, random) \
  TEST(workload_##gen##_contract) { check_contract(spec, random); }

#define SMALL "layers=2,hidden=256,heads=4,ffn=1024,vocab=2048,batch=4,seq=128,iters=3"
CONTRACT_TEST(train_loop_gpt_arch, "train_loop:arch=gpt," SMALL, 0)
CONTRACT_TEST(train_loop_gpt_bf16_ckpt, "train_loop:arch=gpt,amp=bf16,ckpt=1," SMALL, 0)
CONTRACT_TEST(train_loop_fp16_ckpt2_accum2, "train_loop:amp=fp16,ckpt=2,accum=2,layers=4,hidden=256,heads=4,ffn=1024,vocab=2048,batch=4,seq=128,iters=3", 0)
CONTRACT_TEST(varlen_gpt_bf16_accum, "varlen:arch=gpt,amp=bf16,accum=2,iters=6,layers=2,seq_step=1", 1)
CONTRACT_TEST(checkpointing_amp, "checkpointing:amp=bf16,layers=4,iters=3", 0)
CONTRACT_TEST(grad_accumulation_ckpt_amp, "grad_accumulation:ckpt=1,amp=bf16,layers=2,iters=3", 0)
CONTRACT_TEST(train_loop_zero2, "train_loop:zero=2," SMALL, 0)
CONTRACT_TEST(train_loop_offload_params, "train_loop:offload=params," SMALL, 0)
CONTRACT_TEST(train_resnet, "train_resnet:batch=4,size=64,iters=3", 0)
CONTRACT_TEST(train_resnet_101_plain_sgd, "train_resnet:depth=101,batch=2,size=96,iters=3,momentum=0,ws_mb=4", 0)

static int same_stream(const char *a, const char *b, char *err) {
  struct stream *x = run_spec(a, 0, 1, 1, err), *y = run_spec(b, 0, 1, 1, err);
  int same = x && y && x->hash == y->hash && x->events == y->events;
  if (!x || !y) same = -1;
  free(x), free(y);
  return same;
}

TEST(workload_job_defaults_leave_the_stream_as_it_was) {
  char err[FB_ERRLEN];
  CHECK_EQ(same_stream("train_loop:" SMALL, "train_loop:ckpt=0,amp=off,accum=1,arch=encoder," SMALL, err), 1);
  CHECK_EQ(same_stream("varlen:iters=5", "varlen:iters=5,ckpt=0,amp=off,accum=1", err), 1);
  CHECK_EQ(same_stream("checkpointing:" SMALL, "checkpointing:amp=off," SMALL, err), 1);
  CHECK_EQ(same_stream("amp:" SMALL, "amp:accum=1," SMALL, err), 1);
}

/* checkpointing each block on its own (ckpt=1) is checkpointing in segments of one block;
 * autocast through `amp=` is the amp workload */
TEST(workload_job_parameters_agree_with_the_separate_workloads) {
  char err[FB_ERRLEN];
  CHECK_EQ(same_stream("train_loop:ckpt=1," SMALL, "checkpointing:every=1," SMALL, err), 1);
  CHECK_EQ(same_stream("train_loop:amp=bf16," SMALL, "amp:" SMALL, err), 1);
  CHECK_EQ(same_stream("train_loop:amp=fp16,ckpt=1," SMALL, "amp:amp_dtype=fp16,checkpoint_every=1," SMALL, err), 1);
  CHECK_EQ(same_stream("checkpointing:amp=bf16,every=2," SMALL, "amp:checkpoint_every=2," SMALL, err), 1);
  CHECK_EQ(same_stream("train_loop:ckpt=2,layers=4,hidden=256,heads=4,ffn=1024,vocab=2048,batch=4,seq=128,iters=3",
                       "checkpointing:every=2,layers=4,hidden=256,heads=4,ffn=1024,vocab=2048,batch=4,seq=128,iters=3", err), 0);
}

#define ACT "arch=gpt,layers=8,hidden=512,heads=8,ffn=2048,vocab=512,batch=8,seq=512,iters=3"

/* train_loop:zero= and offload= are zero_shard's and offload's generators, on every rank */
TEST(workload_job_zero_and_offload_are_the_separate_workloads) {
  char err[FB_ERRLEN];
  CHECK_EQ(same_stream("train_loop:zero=2," SMALL, "zero_shard:stage=2," SMALL, err), 1);
  CHECK_EQ(same_stream("train_loop:zero=1," SMALL, "zero_shard:stage=1," SMALL, err), 1);
  CHECK_EQ(same_stream("train_loop:offload=params," SMALL, "offload:target=params," SMALL, err), 1);
  CHECK_EQ(same_stream("train_loop:offload=activations," SMALL, "offload:target=activations," SMALL, err), 1);
  struct stream *a = run_spec("train_loop:zero=2," SMALL, 1, 4, 1, err), *b = run_spec("zero_shard:stage=2," SMALL, 1, 4, 1, err);
  CHECK_MSG(a && b, "%s", err);
  CHECK_EQ(a->hash, b->hash);   /* rank 1 of 4: the same shard */
  free(a), free(b);
}

TEST(workload_job_checkpointing_lowers_the_peak_by_block) {
  char err[FB_ERRLEN];
  uint64_t none, every2, every1;
  CHECK_MSG(!figures("train_loop:" ACT, 0, 1, &none, NULL, err), "%s", err);
  CHECK_MSG(!figures("train_loop:ckpt=2," ACT, 0, 1, &every2, NULL, err), "%s", err);
  CHECK_MSG(!figures("train_loop:ckpt=1," ACT, 0, 1, &every1, NULL, err), "%s", err);
  CHECK_MSG(every1 < every2 && every2 < none, "%llu %llu %llu", (unsigned long long)every1, (unsigned long long)every2,
            (unsigned long long)none);
}

TEST(workload_job_accum_splits_the_batch) {
  char err[FB_ERRLEN];
  uint64_t b8, b4, b8a2;
  CHECK_MSG(!figures("train_loop:" ACT, 0, 1, &b8, NULL, err), "%s", err);
  CHECK_MSG(!figures("train_loop:arch=gpt,layers=8,hidden=512,heads=8,ffn=2048,vocab=512,batch=4,seq=512,iters=3", 0, 1, &b4, NULL, err),
            "%s", err);
  CHECK_MSG(!figures("train_loop:accum=2," ACT, 0, 1, &b8a2, NULL, err), "%s", err);
  /* a micro-batch's activations, with the first micro-batch's gradients already live */
  CHECK_MSG(b8a2 < b8 && b8a2 > b4, "%llu %llu %llu", (unsigned long long)b4, (unsigned long long)b8a2, (unsigned long long)b8);
}

/* arch=gpt: GELU saves fc1's output and fc2 saves GELU's: two batch*seq*ffn fp32 tensors
 * per block in the forward, where relu has one; and a max(seq, 1024) x hidden position
 * table among the parameters */
TEST(workload_job_gpt_arch_keeps_two_ffn_tensors_per_block) {
  char err[FB_ERRLEN];
  uint64_t F = 8ull * 512 * 2048 * 4, U = 8ull * 512 * 512 * 4, gpt = 0, pos = 0, pg, pe;
  CHECK_MSG(!allocates_size("train_loop:" ACT, F, &gpt, err), "%s", err);
  /* per block: forward 2; backward fc2's input gradient, GELU's, fc1's bias workspace */
  CHECK_EQ(gpt, 8 * 5);
  /* saved per block: gpt x, ln1, qkv (3), attention, x+attn, ln2 = 8U and 2F (= 16U at
   * ffn 4x); encoder x, the transposed copy, qkv (3), attention, its transposed copy,
   * x+attn, ln2 = 9U and F (13U): 2U per block more, at least */
  CHECK_MSG(!figures("train_loop:" ACT, 0, 1, &pg, NULL, err), "%s", err);
  CHECK_MSG(!figures("train_loop:arch=encoder,layers=8,hidden=512,heads=8,ffn=2048,vocab=512,batch=8,seq=512,iters=3", 0, 1, &pe, NULL, err),
            "%s", err);
  CHECK_MSG(pg >= pe + 8 * 2 * U, "%llu vs %llu", (unsigned long long)pg, (unsigned long long)pe);
  /* the position table, 1024 x 192 fp32 (no other tensor of this shape has that size):
   * its gradient and AdamW's foreach temporary, once per iteration; none in the encoder */
  uint64_t enc = 0;
  CHECK_MSG(!allocates_size("train_loop:arch=gpt,seq=256,layers=1,hidden=192,heads=4,ffn=512,vocab=2048,batch=2,iters=3", 1024 * 192 * 4,
                            &pos, err), "%s", err);
  CHECK_EQ(pos, 2);
  CHECK_MSG(!allocates_size("train_loop:seq=256,layers=1,hidden=192,heads=4,ffn=512,vocab=2048,batch=2,iters=3", 1024 * 192 * 4, &enc,
                            err), "%s", err);
  CHECK_EQ(enc, 0);
}

/* torchvision's resnet50(): 25,557,032 parameters (fp32: 102,228,128 bytes); momentum
 * buffers add one copy of them at the first step, and nothing after */
TEST(workload_train_resnet_momentum_is_one_copy_of_resnet50s_parameters) {
  char err[FB_ERRLEN];
  uint64_t peak_m, peak_p, live_m, live_p;
  CHECK_MSG(!figures("train_resnet:batch=2,size=64,iters=3", 0, 1, &peak_m, &live_m, err), "%s", err);
  CHECK_MSG(!figures("train_resnet:batch=2,size=64,iters=3,momentum=0", 0, 1, &peak_p, &live_p, err), "%s", err);
  CHECK_EQ(live_m - live_p, 25557032ull * 4);
  struct stream *s = run_spec("train_resnet:batch=2,size=64,iters=4", 0, 1, 1, err);
  CHECK_MSG(s != NULL, "%s", err);
  CHECK_EQ(s->iter_live[1], s->iter_live[2]);   /* steady state: no leak */
  CHECK_EQ(s->iter_live[2], s->iter_live[3]);
  free(s);
}

TEST(workload_train_resnet_peak_grows_with_batch_and_size) {
  char err[FB_ERRLEN];
  uint64_t a, b, c;
  CHECK_MSG(!figures("train_resnet:batch=4,size=128,iters=3", 0, 1, &a, NULL, err), "%s", err);
  CHECK_MSG(!figures("train_resnet:batch=8,size=128,iters=3", 0, 1, &b, NULL, err), "%s", err);
  CHECK_MSG(!figures("train_resnet:batch=8,size=224,iters=3", 0, 1, &c, NULL, err), "%s", err);
  CHECK(a < b && b < c);
}

TEST(workload_job_parameters_reject_bad_values) {
  char err[FB_ERRLEN];
  struct workload w;
  struct { const char *spec, *says; } bad[] = {
    {"train_loop:amp=fp8", "off|bf16|fp16"},
    {"train_loop:arch=rnn", "encoder|gpt"},
    {"train_loop:accum=0", "'accum=0': expected 1..4096"},
    {"train_loop:ckpt=5000", "'ckpt=5000': expected 0..4096"},
    {"varlen:amp=int8", "off|bf16|fp16"},
    {"train_loop:zero=3", "'zero=3': expected 0..2"},
    {"train_loop:offload=disk", "none|activations|params"},
    {"train_loop:zero=2,amp=bf16", "combine with none of"},
    {"train_loop:zero=1,offload=params", "combine with none of"},
    {"train_resnet:depth=34", "'depth=34'"},
    {"train_resnet:depth=60", "expected 50, 101 or 152"},
    {"train_resnet:batch=0", "'batch=0'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_MSG(open_spec(&w, bad[i].spec, 0, 1, 1, err) != 0, "%s accepted", bad[i].spec);
    CHECK_CONTAINS(err, bad[i].says);
  }
}
