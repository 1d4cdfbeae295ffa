# EvoKernels: the two quick-start commands are `make demo` and `make test`.
# Each step also runs on its own: deps, data, build, test, demo, bench, bundle.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps data configure build build-all test demo bench bundle release-configure release-check install package fuzz fuzz-smoke clean

all: build

deps:
	bash scripts/install-deps.sh

data: deps
	bash scripts/fetch-data.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

# The three tools only (Release), no tests run.
build: configure
	cmake --build $(BUILD_DIR) --target evk_apps -j $(JOBS)

# Everything: tools, tests, benchmarks.
build-all: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: data build-all
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
	@if command -v $(FUZZ_CXX) >/dev/null 2>&1; then $(MAKE) fuzz-smoke; \
	 else echo "make test: $(FUZZ_CXX) not found, fuzz smoke run skipped"; fi

demo: data build
	bash scripts/demo.sh $(BUILD_DIR)

bench: build-all
	bash scripts/bench.sh $(BUILD_DIR)

# Release builds (install, package) go to their own folder and carry machine code (SASS) for every
# GPU architecture this nvcc supports and PTX of the newest (CMAKE_CUDA_ARCHITECTURES=portable), so
# the tools run on any NVIDIA GPU of Turing or later; `make build` and `make test` build for sm_90.
RELEASE_BUILD_DIR ?= build-release
release-configure: deps
	cmake -S . -B $(RELEASE_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=portable \
	  -DEVK_BUILD_TESTS=OFF -DEVK_BUILD_BENCH=OFF $(CMAKE_ARGS)

# CI's check that a release build carries every architecture: one kernel's fatbin built the release
# way, its entries read by evk_fatbin (a tool of the test build) against `nvcc --list-gpu-code`.
release-check: release-configure build-all
	bash scripts/release-check.sh $(RELEASE_BUILD_DIR) $(BUILD_DIR)

# Installs the tools, man pages, evolved variants, the drop-in NiftyReg/bwa commands (in
# PREFIX/lib/evokernels/{niftyreg,bwa}, off PATH) and the Python module into PREFIX.
PREFIX ?= /usr/local
install: release-configure
	cmake --build $(RELEASE_BUILD_DIR) --target evk_installable -j $(JOBS)
	cmake --install $(RELEASE_BUILD_DIR) --prefix $(PREFIX)

# The Debian package evokernels_<version>_<arch>.deb (CPack) in $(RELEASE_BUILD_DIR)/.
package: release-configure
	cmake --build $(RELEASE_BUILD_DIR) --target evk_installable -j $(JOBS)
	cd $(RELEASE_BUILD_DIR) && cpack -G DEB

# GPU tests, benchmarks and the tools for a GPU host without -dev packages: a separate build
# without OpenCV (so `stereo` travels too; it then reads PGM/PPM only).
# The Python module travels built for the GPU host's Python (3.12; no -dev packages there): the
# bundle build uses BUNDLE_PYTHON, by default a python3.12 here whose headers exist (else none).
BUNDLE_BUILD_DIR ?= build-bundle
BUNDLE_PYTHON ?= $(shell for p in python3.12 /root/.pyenv/versions/3.12*/bin/python3.12; do \
	  command -v $$p >/dev/null 2>&1 && $$p -c 'import sysconfig,os,sys; sys.exit(not os.path.exists(sysconfig.get_paths()["include"]+"/Python.h"))' 2>/dev/null && { command -v $$p; break; }; done)
bundle: deps
	cmake -S . -B $(BUNDLE_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DEVK_WITH_OPENCV=OFF \
	  $(if $(BUNDLE_PYTHON),-DPython_EXECUTABLE=$(BUNDLE_PYTHON),-DEVK_BUILD_PYTHON=OFF) $(CMAKE_ARGS)
	cmake --build $(BUNDLE_BUILD_DIR) -j $(JOBS)
	bash scripts/gpu-bundle.sh $(BUNDLE_BUILD_DIR)

# libFuzzer harnesses (fuzz/): a separate clang-16 build with -fsanitize=fuzzer,address,undefined.
# fuzz-smoke runs each over its seed corpus for a few seconds (part of `make test`); long runs:
# fuzz/run.sh long BUILD_DIR HARNESS RUNS (docs/ROBUSTNESS.md).
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_CC ?= clang-16
FUZZ_CXX ?= clang++-16
FUZZ_SECONDS ?= 5
# -O1 with line tables (LLVM's libFuzzer documentation builds its examples at -O1): ~20% less compile
# time than -O2 -g, and crash reports still name file and line.
FUZZ_OPT ?= -O1 -gline-tables-only -DNDEBUG
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(FUZZ_OPT)" \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(FUZZ_OPT)" -DCMAKE_C_COMPILER=$(FUZZ_CC) \
	  -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DEVK_FUZZ=ON -DEVK_ENABLE_CUDA=OFF -DEVK_BUILD_TESTS=OFF \
	  -DEVK_BUILD_BENCH=OFF -DEVK_WITH_OPENCV=OFF
	cmake --build $(FUZZ_BUILD_DIR) --target evk_fuzz -j $(JOBS)

fuzz-smoke: fuzz
	bash fuzz/run.sh smoke $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD_DIR) $(RELEASE_BUILD_DIR) $(BUNDLE_BUILD_DIR) $(FUZZ_BUILD_DIR) bundle
