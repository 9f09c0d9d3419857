/* fuzz_pytorch.c - libFuzzer target for the pytorch trace reader (built by tests/fuzz/run.sh). */
#include "fuzz_common.h"

extern const struct workload_ops pytorch_snapshot_workload;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_reader(&pytorch_snapshot_workload, pytorch_snapshot_open_src, data, size);
}
