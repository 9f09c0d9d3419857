/* test_advise_variations.c - the reruns advise judges settings on (variations.c): the
 * iterations of a trace that does not mark them are found where they are, the variations
 * are deterministic for a seed and differ between seeds, keep the warm-up and the end in
 * place, and are well-formed traces (every free frees a live block: a strict, validated
 * replay completes); a trace without repeating structure gets the recorded sequence only. */
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "variations.h"

/* a varlen job exported, its ITER events dropped into *iters (as event indices of the
 * trace without them), loaded */
static int export_without_iters(const char *workload, const char *name, const char *seed, struct event_buffer *b,
                                size_t *iters, int *niters) {
  char with[512], without[512], outp[512], errp[512], err[FB_ERRLEN];
  snprintf(with, sizeof with, "%s/%s_iter.csv", test_tmpdir(), name);
  snprintf(without, sizeof without, "%s/%s.csv", test_tmpdir(), name);
  snprintf(outp, sizeof outp, "%s/%s.out", test_tmpdir(), name);
  snprintf(errp, sizeof errp, "%s/%s.err", test_tmpdir(), name);
  if (test_cli(outp, errp, "export", "--workload", workload, "--seed", seed, "--out", with, NULL)) return -1;
  FILE *in = fopen(with, "r"), *out = fopen(without, "w");
  if (!in || !out) return -1;
  char line[256];
  long events = 0;
  *niters = 0;
  while (fgets(line, sizeof line, in)) {
    if (!strncmp(line, "iter", 4)) { if (*niters < 512) iters[(*niters)++] = (size_t)events; continue; }
    if (line[0] != '#' && strncmp(line, "op,", 3)) events++;
    fputs(line, out);
  }
  fclose(in);
  fclose(out);
  return event_buffer_load(b, without, -1, err);
}

TEST(variations_find_the_iterations_a_snapshot_does_not_mark) {
  struct event_buffer b;
  size_t truth[512];
  int nt;
  CHECK_EQ(export_without_iters("varlen:iters=12", "vl_find", "1", &b, truth, &nt), 0);
  CHECK_EQ(nt, 12);
  size_t *st;
  int period;
  char how[160];
  int k = variations_iterations(&b, &st, &period, how, sizeof how);
  CHECK_MSG(k >= 10 && k <= 13, "%d iterations found (%s), 12 run", k, how);
  /* every iteration found between the first and the last (teardown) is one step long */
  size_t step = truth[2] - truth[1];
  for (int i = 1; i + 2 < k; i++) CHECK_MSG(st[i + 1] - st[i] == step, "iteration %d: %zu events, a step has %zu", i,
                                            st[i + 1] - st[i], step);
  free(st);
  event_buffer_free(&b);
}

/* the training generators' steps, found without their ITER events: one iteration per step
 * (micro-batches, checkpointing, bucketed all-reduce, offload, sharded optimizer alike) */
TEST(variations_find_each_generators_steps) {
  static const char *const gens[] = {"checkpointing", "grad_accumulation", "amp", "ddp_buckets", "eval_accumulate",
                                     "offload", "train_loop", "zero_shard"};
  for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
    struct event_buffer b;
    size_t truth[512];
    int nt;
    CHECK_MSG(export_without_iters(gens[g], gens[g], "1", &b, truth, &nt) == 0, "%s", gens[g]);
    size_t *st;
    int period;
    char how[160];
    int k = variations_iterations(&b, &st, &period, how, sizeof how);
    CHECK_MSG(k == nt, "%s: %d iterations found (%s), %d steps run", gens[g], k, how, nt);
    free(st);
    event_buffer_free(&b);
  }
}

static int same_events(const struct event_buffer *a, const struct event_buffer *b) {
  if (a->n != b->n) return 0;
  for (size_t j = 0; j < a->n; j++) {
    const struct event *x = &a->ev[j], *y = &b->ev[j];
    if (x->op != y->op || x->id != y->id || x->size != y->size || x->stream != y->stream || x->device != y->device) return 0;
  }
  return 1;
}

TEST(variations_are_deterministic_well_formed_and_keep_warm_up_and_end) {
  struct event_buffer b;
  size_t truth[512];
  int nt;
  CHECK_EQ(export_without_iters("varlen:iters=12", "vl_build", "2", &b, truth, &nt), 0);
  struct variation_set a, a2, c;
  char err[FB_ERRLEN];
  CHECK_MSG(!variations_build(&b, 6, 7, &a, err), "%s", err);
  CHECK_MSG(!variations_build(&b, 6, 7, &a2, err), "%s", err);
  CHECK_MSG(!variations_build(&b, 6, 8, &c, err), "%s", err);
  CHECK_EQ(a.n, 6);
  CHECK(a.v[0].ev == b.ev);                               /* variation 0: the recorded sequence */
  int differ = 0, differ_seed = 0;
  for (int v = 1; v < a.n; v++) {
    CHECK(same_events(&a.v[v], &a2.v[v]));                 /* the same seed, the same variations */
    differ += !same_events(&a.v[v], &b);
    differ_seed += !same_events(&a.v[v], &c.v[v]);
    /* the warm-up kept in place (ops; sizes too but where every third variation drew its
     * step another shape; ids are fresh) and the end too */
    for (size_t j = 0; j < a.head_end; j++)
      CHECK(a.v[v].ev[j].op == b.ev[j].op && (v % 3 == 0 || a.v[v].ev[j].size == b.ev[j].size));
    size_t tail = b.n - a.tail_start;
    for (size_t j = 0; j < tail; j++) {
      const struct event *x = &a.v[v].ev[a.v[v].n - tail + j], *y = &b.ev[a.tail_start + j];
      if (x->op == OP_ALLOC) CHECK(y->op == OP_ALLOC && x->size == y->size);
    }
    /* a well-formed trace: a strict, validated replay completes without skipping anything */
    struct run_spec s = {.trace = "variation", .events = &a.v[v], .trace_device = -1, .world = 1, .seed = 1,
                         .allocator = "caching", .validate = 1, .strict = 1, .quiet = 1};
    s.device.kind = "sim";
    struct run_result r;
    run_result_init(&r);
    CHECK_MSG(replay_run(&s, &r) == 0, "variation %d: %s", v, r.status);
    CHECK_MSG(r.completed && !r.skipped_events, "variation %d: %s, %llu skipped", v, r.status, (unsigned long long)r.skipped_events);
  }
  CHECK_MSG(differ == a.n - 1, "%d of %d variations differ from the recording", differ, a.n - 1);
  CHECK(differ_seed > 0);
  CHECK(a.head_end > 0 && a.tail_iters >= 1);                 /* a warm-up (at least the prologue) and an end */
  variations_free(&a);
  variations_free(&a2);
  variations_free(&c);
  event_buffer_free(&b);
}

TEST(variations_without_repeating_structure_are_the_recording_alone) {
  char path[512], err[FB_ERRLEN];
  snprintf(path, sizeof path, "%s/flat.csv", test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f);
  fputs("# fragbench-trace v1\nop,id,size,stream,device\n", f);
  for (int i = 1; i <= 50; i++) fprintf(f, "alloc,%d,%d,0,0\n", i, 4096 * i);   /* grows, never frees */
  fclose(f);
  struct event_buffer b;
  CHECK_MSG(!event_buffer_load(&b, path, -1, err), "%s", err);
  struct variation_set vs;
  CHECK_MSG(!variations_build(&b, 20, 1, &vs, err), "%s", err);
  CHECK_EQ(vs.n, 1);
  CHECK(strstr(vs.how, "no repeating iteration structure") != NULL);
  variations_free(&vs);
  event_buffer_free(&b);
}

/* A rerun draws the shapes the job draws: no variation asks for more at once than the
 * recorded run, to within 1%. On resnet_varsize (image sizes drawn per step) the rescaled
 * draws did ask for up to 12% more before the rule (3.39 GiB against 3.03): draws were
 * redrawn here, and every variation kept is within the bound. */
TEST(variations_never_ask_for_more_than_the_recorded_run) {
  struct event_buffer b;
  char err[FB_ERRLEN];
  CHECK_MSG(event_buffer_load(&b, test_data("resnet_varsize.pickle.gz"), -1, err) == 0, "%s", err);
  struct variation_set vs;
  CHECK_MSG(variations_build(&b, 20, 1, &vs, err) == 0, "%s", err);
  CHECK_EQ(vs.n, 20);
  CHECK(vs.redrawn > 0);                                /* the rule acted: this trace's draws asked for more */
  CHECK_EQ(vs.peak[0], variations_peak_requested(&b));
  int below = 0;
  for (int v = 0; v < vs.n; v++) {
    CHECK_EQ(vs.peak[v], variations_peak_requested(&vs.v[v]));
    CHECK_MSG((double)vs.peak[v] <= (double)vs.peak[0] * 1.01, "variation %d asks %llu, the recorded run %llu", v,
              (unsigned long long)vs.peak[v], (unsigned long long)vs.peak[0]);
    below += vs.peak[v] < vs.peak[0];
  }
  CHECK(below > 0);                                     /* still variations, not copies of the recording */
  variations_free(&vs);
  event_buffer_free(&b);
}

/* the peak the rule bounds: the most requested bytes live at once */
TEST(variations_peak_requested_counts_live_bytes) {
  struct event ev[] = {
    {.op = OP_ALLOC, .id = 1, .size = 100}, {.op = OP_ALLOC, .id = 2, .size = 50}, {.op = OP_FREE, .id = 1},
    {.op = OP_ALLOC, .id = 3, .size = 120},
    {.op = OP_FREE, .id = 9},                            /* a free of a block never seen frees nothing */
    {.op = OP_FREE, .id = 2}, {.op = OP_ALLOC, .id = 1, .size = 10},   /* an id used again after its free */
  };
  struct event_buffer b = {.ev = ev, .n = sizeof ev / sizeof ev[0]};
  CHECK_EQ(variations_peak_requested(&b), 170);
}
