/* test_caching_traces.c - end to end: the bundled real PyTorch snapshots replayed with
 * `caching` on the sim device must make PyTorch's own decisions. PyTorch's figures
 * (torch.cuda.memory_stats() of the recorded runs, tests/data/reference.csv, backend
 * caching) are matched exactly: peak reserved, peak allocated, cudaMalloc count and
 * retries; and peak reserved equals the peak of the trace's own segment events. */
#include <stdlib.h>
#include "test.h"
#include "replay.h"

struct torch_ref { uint64_t peak_allocated, peak_reserved, device_allocs, retries; };

/* the trace's row with torch_backend=caching in reference.csv; 0 or -1 */
static int load_ref(const char *trace, struct torch_ref *ref) {
  char *csv = test_read_file(test_data("reference.csv"));
  if (!csv) return -1;
  int found = -1;
  char name[128], backend[32];
  unsigned long long pa, pr, nd, nr;
  for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
    if (sscanf(line, "%127[^,],%31[^,],%llu,%llu,%llu,%llu", name, backend, &pa, &pr, &nd, &nr) == 6 &&
        !strcmp(name, trace) && !strcmp(backend, "caching")) {
      *ref = (struct torch_ref){pa, pr, nd, nr};
      found = 0;
    }
  }
  free(csv);
  return found;
}

static void replay_matches_pytorch(const char *trace, const char *file) {
  struct torch_ref ref = {0, 0, 0, 0};
  CHECK_MSG(load_ref(trace, &ref) == 0, "no caching row for %s in reference.csv", trace);
  struct run_spec s = {.trace = test_data(file), .allocator = "caching", .trace_device = -1, .world = 1,
                       .seed = 1, .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .validate = 1, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  CHECK_MSG(replay_run(&s, &r) == 0, "%s: %s", file, r.status);
  CHECK_STR(r.status, "ok");
  double gap = ((double)r.peak_reserved - (double)ref.peak_reserved) / (double)ref.peak_reserved;
  CHECK_MSG(r.peak_reserved == ref.peak_reserved, "%s: peak reserved %llu, PyTorch %llu (%+.3f%%)", trace,
            (unsigned long long)r.peak_reserved, (unsigned long long)ref.peak_reserved, 100 * gap);
  CHECK_EQ(r.peak_reserved, r.trace_peak_reserved);
  CHECK_EQ(r.peak_allocated, ref.peak_allocated);
  CHECK_EQ(r.device_allocs, ref.device_allocs);
  CHECK_EQ(r.cache_flushes, ref.retries);
}

TEST(caching_trace_gpt_train_matches_pytorch) { replay_matches_pytorch("gpt_train", "gpt_train.pickle.gz"); }
TEST(caching_trace_leaky_losses_matches_pytorch) { replay_matches_pytorch("leaky_losses", "leaky_losses.pickle.gz"); }
TEST(caching_trace_resnet_varsize_matches_pytorch) { replay_matches_pytorch("resnet_varsize", "resnet_varsize.pickle.gz"); }
TEST(caching_trace_gpt_short_frames_matches_pytorch) {
  replay_matches_pytorch("gpt_train_short_frames", "gpt_train_short_frames.pickle");
}
