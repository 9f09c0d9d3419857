# fragbench - build, test, bench. `make` builds build/fragbench; `make test` runs the unit,
# replay and bad-input tests; `make bench` runs the suite into results/bench-<stamp>/.
#
#   CUDA_HOME=/usr/local/cuda   where the CUDA toolkit lives (cuda_runtime.h + libcudart_static.a);
#                               without it the binary is sim-only (CUDA=0 forces that)
#   SAN=1                       build into build/san with AddressSanitizer + UBSan
#   TSAN=1                      build into build/tsan with ThreadSanitizer
#   MPI=1 MPI_HOME=...          build the harness with MPI (rows gathered to rank 0)

CC        ?= gcc
# Every build uses each core unless make is given -j itself (a fresh `make test` compiles
# some 235 files; one at a time, that was half its time on a 2-core machine) - when one
# goal or none is named: goals named together run one after another as before (`make
# clean test` must not remove what test builds, nor `make bench report` report half a run).
NPROC     := $(shell nproc 2>/dev/null || echo 1)
ifeq ($(filter-out 0 1,$(words $(MAKECMDGOALS))),)
  MAKEFLAGS += -j$(NPROC)
endif
CUDA_HOME ?= /usr/local/cuda
MPI_HOME  ?= /usr/lib/x86_64-linux-gnu/openmpi
ifeq ($(origin CUDA), undefined)
  CUDA := $(if $(wildcard $(CUDA_HOME)/include/cuda_runtime.h),$(if $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a),$(if $(wildcard harness/device/device_cuda.c),1,0),0),0)
endif

OPT      ?= -O2
# One folder per concept; includes are by file name, so each folder is on the path.
INCLUDE_DIRS := harness/cli harness/report harness/engine harness/common harness/device allocators workloads
CFLAGS   := -std=c11 -D_GNU_SOURCE $(OPT) -g -Wall -Wextra -Werror $(addprefix -I,$(INCLUDE_DIRS)) -MMD -MP
LDLIBS   := -lm -lpthread -lz
BUILD    := build

ifeq ($(SAN),1)
  BUILD  := build/san
  CFLAGS += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(TSAN),1)
  BUILD  := build/tsan
  CFLAGS += -O1 -fsanitize=thread
  LDFLAGS += -fsanitize=thread
endif
ifeq ($(MPI),1)
  BUILD  := $(BUILD)/mpi
  CC     := $(if $(wildcard $(MPI_HOME)/bin/mpicc),$(MPI_HOME)/bin/mpicc,mpicc)
  CFLAGS += -DFB_HAVE_MPI
endif
ifeq ($(CUDA),1)
  CFLAGS += -DFB_HAVE_CUDA -isystem $(CUDA_HOME)/include
  LDLIBS += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt
endif

ALL_C     := $(wildcard harness/*/*.c allocators/*.c workloads/*.c)
CUDA_C    := $(filter %_cuda.c,$(ALL_C))
MPI_C     := $(filter %_mpi.c,$(ALL_C))
LIB_C     := $(filter-out harness/cli/main.c $(CUDA_C) $(MPI_C),$(ALL_C))
ifeq ($(CUDA),1)
  LIB_C   += $(CUDA_C)
endif
ifeq ($(MPI),1)
  LIB_C   += $(MPI_C)
endif
TEST_C    := $(wildcard tests/*.c)
LIB_O     := $(LIB_C:%.c=$(BUILD)/obj/%.o)
TEST_O    := $(TEST_C:%.c=$(BUILD)/obj/%.o)

BIN       := $(BUILD)/fragbench
TESTBIN   := $(BUILD)/fragbench-tests

.PHONY: all test test-browser test-san test-gpu validate bench perf fuzz plots report regress baseline clean
all: $(BIN)

# report.html's chart script, compiled in as a C string (edit the .js)
harness/report/html_charts_js.c: harness/report/html_charts.js harness/report/js2c.awk
	awk -v name=html_charts_js -f harness/report/js2c.awk $< > $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BIN): $(LIB_O) $(BUILD)/obj/harness/cli/main.o
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(TESTBIN): $(LIB_O) $(TEST_O)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The unit, replay, fidelity and bad-input tests. Closing line: N passed, N failed, N skipped.
test: $(BIN) $(TESTBIN)
	$(TESTBIN) $(T)

# explain --html and report.html opened in a headless Chromium (tests/browser/run.sh: needs
# chromium and node; screenshots in build/browser/). Not part of `make test`.
test-browser: $(BIN)
	FRAGBENCH=$(BIN) RUN='$(RUN)' sh tests/browser/run.sh

# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer.
test-san:
	$(MAKE) SAN=1 test

# On a GPU host: device tests and cuda-vs-sim replays, one summary line.
test-gpu: $(BIN) $(TESTBIN)
	FB_GPU_REQUIRED=1 $(TESTBIN) gpu

# On a GPU host: the bundled traces and a few generators through the real allocators
# (JAX/XLA BFC, CuPy's pool, PyTorch's three backends) and through fragbench's strategy
# for each, one line per figure; closing line: N within 1%, M outside.
validate: $(BIN)
	sh tests/validate/run.sh $(BIN)

bench: $(BIN)
	TRACES='$(TRACES)' WORKLOADS='$(WORKLOADS)' ALLOCATORS='$(ALLOCATORS)' FIT='$(FIT)' FIT_LIMIT='$(FIT_LIMIT)' sh scripts/bench.sh $(BIN)

perf: $(BIN)
	sh scripts/perf.sh $(BIN)

fuzz:
	sh tests/fuzz/run.sh

plots: $(BIN)
	FRAGBENCH=$(BIN) sh plots/plots.sh $(RUN)

report: $(BIN)
	FRAGBENCH=$(BIN) sh plots/report.sh $(RUN)

regress: $(BIN)
	sh tests/regress.sh $(BIN)

baseline: $(BIN)
	sh tests/regress.sh $(BIN) --refresh

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
