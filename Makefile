# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
TORCH_VERSION := 2.13.0

.PHONY: demo test install install-test build test-sanitize test-cuda-emu test-sanitize-cuda-emu bench clean

## make demo: install minitorch (editable, with its dependencies) and run the main job
demo: install
	$(PYTHON) -m minitorch

install:
	$(PIP) install -q -e .

## make test: install the test dependencies (PyTorch CPU as the reference) and run pytest, then
## the CUDA tests again on the emulated CUDA device (cuda/emu/: the backend's kernels and library
## calls run on the CPU), so the CUDA backend is tested where there is no GPU
test: install-test
	$(PYTHON) -m pytest
	$(MAKE) test-cuda-emu

EMU_ENV = MINITORCH_CUDA_EMU=1
## tests/cuda on the emulated device (about 50 s; it needs the _C_cuda_emu extension, built by
## default wherever g++ is)
test-cuda-emu:
	$(EMU_ENV) $(PYTHON) -m pytest -p no:cacheprovider tests/cuda

install-test:
	$(PIP) install -q -e '.[test]'
	$(PIP) install -q torch==$(TORCH_VERSION)

## rebuild the extension in place after editing csrc/ (what `pip install -e .` ran)
build:
	$(PYTHON) setup.py -q build_ext --inplace

## the test suite under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs this too);
## --capture=sys leaves fd 2 alone so a sanitizer's report reaches the log.
## LeakSanitizer is on: malloc_context_size=2 keeps each allocation's stack to malloc and its
## caller, so tests/lsan.supp can drop the interpreter's and libraries' own leaks by that caller
## while a block allocated by _C itself still fails the run (a deeper stack reaches Python's
## frames and would be suppressed). For a longer stack of a reported leak, rerun its test with
## malloc_context_size=30 and without the suppressions. PYTHONMALLOC=malloc puts Python's objects
## on the heap LeakSanitizer scans: in pymalloc's arenas, a tensor that a live Python object still
## holds at exit would look leaked.
SANITIZE_ENV = PYTHONMALLOC=malloc LD_PRELOAD="$$(gcc -print-file-name=libasan.so)" \
	ASAN_OPTIONS=detect_leaks=1:malloc_context_size=2:abort_on_error=1:allocator_may_return_null=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	MINITORCH_SANITIZE_RUN=1 MINITORCH_HYPOTHESIS=ci MINITORCH_TEST_NO_TORCH=1
TESTS ?=
## RESTORE=0 leaves the sanitizer build in place (CI, which ends there, saves a full rebuild)
RESTORE ?= 1
test-sanitize:
	MINITORCH_SANITIZE=1 MINITORCH_CUDA_EMU=0 $(PYTHON) setup.py -q build_ext --inplace --force
	$(SANITIZE_ENV) $(PYTHON) -m pytest -p no:cacheprovider --capture=sys $(TESTS)
	if [ "$(RESTORE)" = 1 ]; then $(PYTHON) setup.py -q build_ext --inplace --force; fi

## tests/cuda on the emulated device under the sanitizers (an out-of-bounds access of a kernel
## to device memory is a heap overflow there); about 3.5 minutes, so not part of test-sanitize
test-sanitize-cuda-emu:
	MINITORCH_SANITIZE=1 MINITORCH_CUDA=0 $(PYTHON) setup.py -q build_ext --inplace --force
	$(SANITIZE_ENV) $(EMU_ENV) $(PYTHON) -m pytest -p no:cacheprovider --capture=sys tests/cuda
	$(PYTHON) setup.py -q build_ext --inplace --force

bench:
	$(PYTHON) benchmarks/bench_overhead.py

clean:
	rm -rf build minitorch/*.so *.egg-info
