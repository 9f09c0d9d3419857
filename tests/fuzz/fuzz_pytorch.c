/* fuzz_pytorch.c - libFuzzer target for the pytorch trace reader (built by tests/fuzz/run.sh). */
#include "fuzz_common.h"
#define FUZZ_TEXT 0
#include "fuzz_mutate.h"

extern const struct workload_ops pytorch_snapshot_workload;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_reader(&pytorch_snapshot_workload, pytorch_snapshot_open_src, data, size);
}
