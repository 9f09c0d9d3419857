/* fuzz_native.c - libFuzzer target for the native trace reader (built by tests/fuzz/run.sh). */
#include "fuzz_common.h"
#define FUZZ_TEXT 1
#include "fuzz_mutate.h"

extern const struct workload_ops native_trace_workload;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_reader(&native_trace_workload, native_trace_open_src, data, size);
}
