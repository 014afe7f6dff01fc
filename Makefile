# The README's two commands: `make run` and `make test`. Both install what is missing
# (scripts/bootstrap.sh), configure and build.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# `make fuzz`: seconds per harness
FUZZ_SECONDS ?= 600
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# CTest runs one test more than the cores: many tests wait (time limits, FIFOs, a Slurm
# cluster, a database server), and the extra one takes the core they leave idle. The fuzz
# harnesses, which only compute, run JOBS at a time.
TEST_JOBS  ?= $(shell echo $$(( $(JOBS) + 1 )))

.PHONY: all bootstrap bootstrap-test build build-asan build-runtime build-fuzz test test-release \
        test-asan test-fuzz fuzz run bench install uninstall clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

# What the tests need beyond the build (a browser for the HTML report's test).
bootstrap-test:
	@bash scripts/bootstrap.sh test

build: bootstrap
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The sanitizer tree takes the Release tree's CUDA plugin when there is one instead of
# running nvcc again (CMakeLists.txt, TKB_CUDA_PLUGIN, says why that loses nothing).
build-asan: bootstrap
	plugin=$(abspath $(BUILD))/libtkbench-cuda.so; [ -f "$$plugin" ] || plugin=; \
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTKB_SANITIZE=ON -DTKB_CUDA_PLUGIN="$$plugin" >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# CTest lists the skipped tests but not why: a test that skips (exit 77, e.g. no OpenCL
# device here) prints "SKIPPED: <reason>", which CTest keeps in its log. Printed after
# every ctest, passed or failed.
SKIP_REASONS = awk '/^[0-9]+\/[0-9]+ Testing: /{t=$$3} /^SKIPPED/{print t ": " $$0}' \
               Testing/Temporary/LastTest.log 2>/dev/null || true

test-release: build bootstrap-test
	cd $(BUILD) && { ctest --output-on-failure -j $(TEST_JOBS); rc=$$?; $(SKIP_REASONS); exit $$rc; }

# The sanitizer run sets TKB_TEST_QUICK so exhaustive 2^32 sweeps take a stride, and leaves
# out the leaks of PoCL's and LLVM's own (tests/lsan.supp).
test-asan: build-asan bootstrap-test
	cd $(ASAN_BUILD) && { TKB_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest --output-on-failure \
	  -j $(TEST_JOBS); rc=$$?; $(SKIP_REASONS); exit $$rc; }

# The libFuzzer harnesses (tests/fuzz) in a clang tree of their own: a short run of each
# (10 s) as a test, side by side (each harness fuzzes on one thread), and `make fuzz` for
# long runs (FUZZ_SECONDS per harness).
build-fuzz: bootstrap-test
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DTKB_FUZZ=ON \
	  -DTKB_CUDA=OFF -DTKB_CUDA_EMU=OFF >/dev/null
	cmake --build $(FUZZ_BUILD) --target fuzz_all -j $(JOBS)

test-fuzz:
	@if command -v clang >/dev/null 2>&1; then $(MAKE) --no-print-directory build-fuzz && \
	  cd $(FUZZ_BUILD) && ctest -R '^fuzz_' --output-on-failure -j $(JOBS); \
	else echo "test-fuzz: SKIPPED: no clang (scripts/bootstrap.sh installs it as root)"; fi

fuzz: build-fuzz
	bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# `make test`: the three trees' tests, each tree's whatever the one before gave (every
# failing tree is listed at the end). The sanitizer and fuzz trees are built while the
# Release tree's tests run, at the lowest priority (nice 19): many of those tests wait
# (time limits, FIFOs, a Slurm cluster, a database server) and the builds take the core
# they leave idle, and little else. The builds' output goes to $(BUILD)/other-trees.log,
# shown when one fails.
OTHER_TREES_LOG = $(BUILD)/other-trees.log
test: build bootstrap-test
	@{ nice -n 19 $(MAKE) --no-print-directory build-asan && \
	   { ! command -v clang >/dev/null 2>&1 || nice -n 19 $(MAKE) --no-print-directory build-fuzz; }; \
	 } >$(OTHER_TREES_LOG) 2>&1 & trees=$$!; \
	failed=; \
	$(MAKE) --no-print-directory test-release || failed="$$failed release"; \
	if ! wait $$trees; then cat $(OTHER_TREES_LOG); echo "make test: building the sanitizer or fuzz tree failed"; exit 1; fi; \
	$(MAKE) --no-print-directory test-asan || failed="$$failed sanitizer"; \
	$(MAKE) --no-print-directory test-fuzz || failed="$$failed fuzz"; \
	if [ -n "$$failed" ]; then echo "make test: FAILED in the tree(s):$$failed"; exit 1; fi

# A quick look at the cpu kernels: the `cpu`-tagged entries of the cpu implementations
# (not the float64 references, the numerics' truth, whose times say nothing of the
# kernels), forward and forward_and_vjp, each until its median is known to +-5% (one
# experiment, one warm-up), the whole run within 50 s. README's "Start here" says why;
# `tkbench run` alone runs every impl and mode to +-1% in 3 experiments, within 3 minutes.
RUN_FLAGS ?= --mode forward,forward_and_vjp --impl cpu --stop ci:max_noise=5% --experiments 1 \
             --warmup once --budget 50

# Every `make run` is also recorded in the results store, so the second already has a
# history to look at (`tkbench history list`, `tkbench history show --filter NAME`).
HISTORY ?= results/history.sqlite

run: build-runtime
	@mkdir -p results
	$(BUILD)/tkbench run $(RUN_FLAGS) --out results/latest.json --history $(HISTORY)
	@echo "history: $(BUILD)/tkbench history list --history $(HISTORY) (or history show --filter NAME)"

# Only what `run` and `install` use: the libraries, tkbench, the backend plugins and the
# man page (the CMake target `runtime`), not the tests, examples and bench programs.
build-runtime: bootstrap
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target runtime

# make install [PREFIX=/usr/local] [DESTDIR=...]: GNU layout under PREFIX (README's
# "Install"); the prefix is configured into the build too, so that programs linking
# libtkbench.a find the plugins there. make uninstall removes what the last install
# from $(BUILD) wrote ($(BUILD)/install_manifest.txt).
PREFIX ?= /usr/local
install: bootstrap
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(abspath $(PREFIX)) >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target runtime
	cmake --install $(BUILD)

uninstall:
	cmake -DMANIFEST=$(BUILD)/install_manifest.txt -P cmake/tkb_uninstall.cmake

bench: build
	bash bench/run_all.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
