# The two commands README.md gives: `make run` and `make test`.
# Both install what is missing (scripts/bootstrap), configure, build, run.
BUILD ?= build
# cmake --build runs make under make: without this every sub-make says
# "Entering directory" twice per target.
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60
ARM64_BUILD ?= build-arm64
CONFORMANCE_EVERY ?= 1
INSN_ISA ?= generic,auto
INSN_ARGS ?=

.PHONY: all bootstrap build install run test test-asan test-tsan test-32 test-32-core test-arm64 fuzz bench bench-insn bench-serve zoo device-check clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# Installs into PREFIX (cmake --install; default /usr/local): the
# command, libberth, the modules, the headers and the Python package,
# which Debian's python3 then imports (PREFIX/lib/python3.X/dist-packages
# is on its path for /usr/local; for another prefix, add it to PYTHONPATH).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The main job: the sample pages read with PP-OCR's detector, angle
# classifier and recognizer (config/ocr-cpu.ini), each page written with
# its boxes drawn into $(BUILD)/pages; the single-line samples read with
# --lines. The models are fetched, verified and converted once into
# $(BUILD)/cache. Then one page again on the vulkan backend (lavapipe
# where there is no GPU): the same binary and models, one line of config
# changed.
run: build
	scripts/ocr-models --cache $(BUILD)/cache
	$(BUILD)/apps/ocr/berth-ocr config/ocr-cpu.ini $(BUILD)/cache/package/assets/ppocr_keys_v1.txt samples/pages/*.png --draw $(BUILD)/pages
	@echo "--- single lines (--lines):"
	$(BUILD)/apps/ocr/berth-ocr --lines config/ocr-cpu.ini $(BUILD)/cache/package/assets/ppocr_keys_v1.txt samples/*.png samples/*.jpg
	@echo "--- the same pipeline on config/ocr-vulkan.ini (use = vulkan, cpu):"
	$(BUILD)/apps/ocr/berth-ocr config/ocr-vulkan.ini $(BUILD)/cache/package/assets/ppocr_keys_v1.txt samples/pages/receipt.png
	@echo "annotated pages: $(BUILD)/pages/*.png"

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# The suite again under AddressSanitizer and UndefinedBehaviorSanitizer.
# It shares the plain build's model cache rather than fetching again, and
# leaves out the ONNX node tests, the sample pages and the device-check
# bundle on lavapipe (minutes unsanitized, several times that
# sanitized), and serve_memory, whose bound on the server's RSS would
# measure ASan's quarantine of freed bodies; the vulkan backend's own
# tests, the real-model zoo and the OCR line comparison still run
# sanitized.
test-asan:
	$(MAKE) test BUILD=$(BUILD)-asan CMAKE_FLAGS="$(CMAKE_FLAGS) -DBERTH_SANITIZE=ON -DBERTH_OCR_CACHE=$(abspath $(BUILD))/cache" CTEST_ARGS="-E 'conformance_vulkan|ocr_pages_vulkan|device_check_quick|serve_memory'"

# The cpu backend's, the executor's and the berth command's tests under
# ThreadSanitizer (clang), with the berth run checks that drive the cpu
# worker pool at 2 and 4 threads (ctest label tsan). Only what those tests
# need is built. The two tests that define malloc themselves cannot run
# under it and are left out (label replaces_malloc). Any report fails the
# test it happens in.
test-tsan:
	@scripts/bootstrap --ci
	CC=clang cmake -S . -B $(BUILD)-tsan -DBERTH_TSAN=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD)-tsan -j$(JOBS) --target tsan_targets
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir $(BUILD)-tsan --output-on-failure \
		-j$(JOBS) -L '^tsan$$' -LE '^replaces_malloc$$' $(CTEST_ARGS)

# The whole tree as a 32-bit (i386) program, where size_t is 32-bit and
# file offsets are not: libberth, the cpu backend, the berth command and
# berth serve, the examples and every test of theirs, warnings as errors,
# the vulkan backend off (no i386 Vulkan), each program run under
# qemu-i386 (the tests' scripts start them through build-32/emulated/).
# Left out: the tests labelled peer, which fetch the model zoo and
# onnxruntime-node over the network, and the OCR of the five sample pages
# (ocr_pages*: detector, classifier and recognizer on whole pages), which
# under qemu-i386 takes longer than those tests' 540 seconds on 2 cores;
# the line samples are still read end to end (ocr_samples, ocr_batch,
# ocr_samples_int8); and ocr_split_explain, whose --explain plans every
# bucket of the recognizer at once (7.7 GB on x86-64), more than a 32-bit
# process can hold, which berth refuses by its memory limit. The OCR
# models come from the x86-64 build's cache (fetched there once, the same
# files on any machine).
# Needs gcc-multilib, qemu-user and the i386 libraries
# cmake/i686-linux-gnu.cmake names.
test-32:
	@scripts/bootstrap --32
	cmake -S . -B $(BUILD)-32 -DCMAKE_TOOLCHAIN_FILE=cmake/i686-linux-gnu.cmake -DBERTH_CORE_ONLY=OFF \
		-DBERTH_BACKEND_VULKAN=OFF -DBERTH_WERROR=ON -DBERTH_OCR_CACHE=$(abspath $(BUILD))/cache $(CMAKE_FLAGS)
	cmake --build $(BUILD)-32 -j$(JOBS)
	ctest --test-dir $(BUILD)-32 --output-on-failure -j$(JOBS) -LE '^peer$$' -E '^(ocr_pages.*|ocr_split_explain)$$' $(CTEST_ARGS)

# The engine alone as a 32-bit program, what CI runs (the whole tree's
# run above takes about half an hour under qemu-i386 on 2 cores): libberth,
# the cpu backend and their tests (archive, config, graph,
# specialize, loader, executor, npy, cpu; -DBERTH_CORE_ONLY=ON), which need only
# inih and OpenBLAS for i386.
test-32-core:
	@scripts/bootstrap --32-core
	cmake -S . -B $(BUILD)-32core -DCMAKE_TOOLCHAIN_FILE=cmake/i686-linux-gnu.cmake -DBERTH_CORE_ONLY=ON \
		-DBERTH_BACKEND_VULKAN=OFF -DBERTH_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD)-32core -j$(JOBS)
	ctest --test-dir $(BUILD)-32core --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# The arm64 cross build (cmake/aarch64-linux-gnu.cmake), warnings as
# errors, run under qemu-user: the test programs, the first example
# compared with the x86-64 build's, the qemu plugin that counts executed
# instructions (make bench-insn) checked against a loop of known length,
# and the cpu conformance cases (the first of every CONFORMANCE_EVERY).
# The x86-64 build gives the reference output and the plugin; only berth,
# the cpu backend and the plugin are built there.
test-arm64:
	@scripts/bootstrap --arm64
	cmake -S . -B $(ARM64_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DBERTH_WERROR=ON \
		-DBERTH_QEMU_INSN_PLUGIN=$(abspath $(BUILD))/bench/qemu_insn.so $(CMAKE_FLAGS)
	cmake --build $(ARM64_BUILD) -j$(JOBS)
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS) --target berth berth-cpu qemu_insn
	scripts/test-arm64 $(ARM64_BUILD) $(BUILD) $(CONFORMANCE_EVERY)

# libFuzzer targets (clang), each for FUZZ_SECONDS on a copy of its seed corpus.
fuzz:
	@scripts/bootstrap --ci
	CC=clang cmake -S . -B $(BUILD)-fuzz -DBERTH_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD)-fuzz -j$(JOBS) --target fuzz_targets
	scripts/fuzz $(BUILD)-fuzz $(FUZZ_SECONDS)

# berth against onnxruntime-node (bench/, docs/bench.md): installs
# onnxruntime-node into $(BUILD)/bench/node and gnuplot-nox if missing,
# generates and converts the models, writes $(BUILD)/bench/report.md and
# ratios.png. About 12 minutes on 2 shared cores.
bench: build
	/usr/bin/python3 bench/bench.py --build $(BUILD)

# berth serve under Debian's wrk against loopback (bench/serve_wrk.py):
# requests/s and p50/p99 at 1, 8 and 64 keep-alive clients on the first
# graph and the OCR recognizer, then a 10-minute soak with the server's
# RSS sampled (it fails when the RSS grows). Writes
# $(BUILD)/bench/serve-wrk.md. About 12 minutes.
bench-serve: build
	@scripts/bootstrap --bench
	scripts/ocr-models --cache $(BUILD)/cache
	mkdir -p $(BUILD)/bench
	/usr/bin/python3 bench/serve_wrk.py --build $(BUILD) --out $(BUILD)/bench/serve-wrk.md

# Executed arm64 instructions per inference run for each cpu backend isa
# of INSN_ISA (bench/insn_count.py, docs/bench.md), where there is no
# arm64 machine: the arm64 cross build's berth under qemu-user with the
# host build's qemu_insn plugin, on a few of make bench's models. Writes
# $(BUILD)/bench/insn/report.md. About 6 minutes on 2 shared cores.
# INSN_ARGS passes more (--runs N, --only ROW,..., --threads N).
bench-insn:
	@scripts/bootstrap --arm64
	cmake -S . -B $(ARM64_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DBERTH_WERROR=ON \
		-DBERTH_QEMU_INSN_PLUGIN=$(abspath $(BUILD))/bench/qemu_insn.so $(CMAKE_FLAGS)
	cmake --build $(ARM64_BUILD) -j$(JOBS) --target berth berth-cpu
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS) --target qemu_insn
	/usr/bin/python3 bench/insn_count.py --arm64 $(ARM64_BUILD) --host $(BUILD) --isa $(INSN_ISA) $(INSN_ARGS)

# The real-model zoo (tests/models/zoo.ini) fetched, converted and run on
# onnxruntime-node into $(BUILD)/zoo, for `berth check MODULE --models
# $(BUILD)/zoo` on any module (make test does this for cpu and vulkan).
zoo: build
	sh tests/ocr/peer_setup.sh $(BUILD)/peer
	/usr/bin/python3 tests/models/zoo_prepare.py --cache $(BUILD)/cache --out $(BUILD)/zoo --peer $(BUILD)/peer

# The bundle tools/device-check runs on a GPU machine with no network:
# $(BUILD)/device-check.tar.xz (then: tools/device-check run FILE there).
device-check: zoo
	tools/device-check pack --build $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz $(BUILD)-32 $(BUILD)-32core $(ARM64_BUILD)
