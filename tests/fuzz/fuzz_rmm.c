/* fuzz_rmm.c - libFuzzer target for the rmm trace reader (built by tests/fuzz/run.sh). */
#include "fuzz_common.h"
#define FUZZ_TEXT 1
#include "fuzz_mutate.h"

extern const struct workload_ops rmm_log_workload;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_reader(&rmm_log_workload, rmm_log_open_src, data, size);
}
