# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
TORCH_VERSION := 2.13.0
# What setup.py imports, installed into this Python so that pip builds here (--no-build-isolation)
# and reuses the objects in build/: a second install, make test after make demo, compiles nothing.
BUILD_REQS := "setuptools>=68" wheel "scipy-openblas32>=0.3.34.481" "numpy>=1.24"
EDITABLE := $(PIP) install -q --no-build-isolation -e

.PHONY: demo test install install-test build build-reqs test-cpu test-wheel test-sanitize test-cuda-emu \
	test-cuda-emu-async test-sanitize-cuda-emu bench clean clang-format format format-check

## make demo: install minitorch (editable, with its dependencies and what the examples use) and
## run the main job
demo: install
	$(PYTHON) -m minitorch

install: build
	$(EDITABLE) '.[examples]'

## make test: also the emulated CUDA device (cuda/emu/: the backend's kernels and library calls
## on the CPU) and the test dependencies (PyTorch CPU as the reference); pytest, then the CUDA
## tests again on the emulated device, so the CUDA backend is tested where there is no GPU
test: install-test
	$(PYTHON) -m pytest $(PYTEST_PAR)
	$(MAKE) test-cuda-emu
	$(MAKE) test-cuda-emu-async

## pytest's runs use one process per CPU core (pytest-xdist's -n auto, from the test extras; tests
## are handed out as workers free up, each worker a fresh interpreter with the conftest's set-up);
## PYTEST_WORKERS=0 runs the suite in one process, PYTEST_WORKERS=N in N. Without pytest-xdist
## (a target run before make test installed it), one process
PYTEST_WORKERS ?= auto
PYTEST_PAR = $(if $(filter 0,$(PYTEST_WORKERS)),,$(shell $(PYTHON) -c 'import xdist' 2> /dev/null && printf -- '-n %s' $(PYTEST_WORKERS)))
EMU_ENV = MINITORCH_CUDA_EMU=1
## tests/cuda on the emulated device (about 50 s; it needs the _C_cuda_emu extension, which
## make test builds)
test-cuda-emu:
	$(EMU_ENV) $(PYTHON) -m pytest $(PYTEST_PAR) -p no:cacheprovider tests/cuda

## tests/cuda again with the emulated device asynchronous (MINITORCH_EMU_ASYNC=1: each stream's
## work runs on its own worker thread, the host returns from a launch before the kernel ran), so
## a missing stream wait or host synchronisation shows as wrong data; and tests/emu, the emulated
## runtime's own tests, in that mode
test-cuda-emu-async:
	$(EMU_ENV) MINITORCH_EMU_ASYNC=1 $(PYTHON) -m pytest $(PYTEST_PAR) -p no:cacheprovider tests/cuda tests/emu

install-test: build-reqs
	$(EMU_ENV) $(PYTHON) setup.py -q build_ext --inplace
	$(EMU_ENV) $(EDITABLE) '.[test,examples]'
	$(PIP) install -q torch==$(TORCH_VERSION)

build-reqs:
	$(PIP) install -q $(BUILD_REQS)

## (re)build the extensions in place after editing csrc/ or cuda/: compiles what changed, in
## parallel, and says what it compiles; MINITORCH_CUDA_EMU=1 make build adds the emulated device
build: build-reqs
	$(PYTHON) setup.py -q build_ext --inplace

## the configuration most users have: no CUDA backend at all (MINITORCH_CUDA=0): every test file
## that refers to CUDA, and tests/install. The others run the same _C with CUDA absent in both
## builds (make test's plain run has no device), so make test has run them already. tests/cuda
## comes last, as in the whole suite: its conftest sets the session's cudnn.allow_tf32.
## Then the test build (make test's) is put back (a relink: the objects are kept)
CPU_ONLY_TESTS = tests/install $$(grep -rlE 'cuda' tests --include='test_*.py' | grep -v '^tests/cuda/' | sort) tests/cuda
test-cpu:
	MINITORCH_CUDA=0 $(PYTHON) setup.py -q build_ext --inplace
	MINITORCH_CUDA=0 $(PYTHON) -m pytest $(PYTEST_PAR) -p no:cacheprovider $(CPU_ONLY_TESTS)
	$(EMU_ENV) $(PYTHON) setup.py -q build_ext --inplace

## the wheel as a user gets it: built (without the emulated device), installed in a fresh virtual
## environment and used from outside the checkout (tests/install/smoke.py)
WHEEL_VENV := build/wheel-venv
test-wheel: build-reqs
	rm -rf dist $(WHEEL_VENV)
	env -u MINITORCH_CUDA_EMU $(PIP) wheel -q --no-build-isolation --no-deps -w dist .
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install -q dist/minitorch-*.whl
	cd "$$(mktemp -d)" && $(CURDIR)/$(WHEEL_VENV)/bin/python $(CURDIR)/tests/install/smoke.py

## the test suite under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs this too);
## --capture=sys leaves fd 2 alone so a sanitizer's report reaches the log.
## LeakSanitizer is on: malloc_context_size=2 keeps each allocation's stack to malloc and its
## caller, so tests/lsan.supp can drop the interpreter's and libraries' own leaks by that caller
## while a block allocated by _C itself still fails the run (a deeper stack reaches Python's
## frames and would be suppressed). For a longer stack of a reported leak, rerun its test with
## malloc_context_size=30 and without the suppressions. PYTHONMALLOC=malloc puts Python's objects
## on the heap LeakSanitizer scans: in pymalloc's arenas, a tensor that a live Python object still
## holds at exit would look leaked. A child process whose LeakSanitizer crashes in its own
## exit-time tracer (a sanitizer race, no leak report) is run again by tests/conftest.py.
SANITIZE_ENV = PYTHONMALLOC=malloc LD_PRELOAD="$$(gcc -print-file-name=libasan.so)" \
	ASAN_OPTIONS=detect_leaks=1:malloc_context_size=2:abort_on_error=1:allocator_may_return_null=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	MINITORCH_SANITIZE_RUN=1 MINITORCH_HYPOTHESIS=ci MINITORCH_TEST_NO_TORCH=1
TESTS ?=
## Left out of the sanitizer run: test files whose work is outside our C, so the sanitizers see
## nothing there that the rest of the run does not cover: setup.py's incremental build logic
## (tests/install/test_build.py, compilers run without the preload) and the headless-browser checks
## of the viz HTML (tests/viz/test_chromium.py: Chromium runs without the preload; the graph and
## HTML it loads are built by the same calls tests/viz/test_viz.py and test_html.py run)
SANITIZE_IGNORE = --ignore=tests/install/test_build.py --ignore=tests/viz/test_chromium.py
## RESTORE=0 leaves the sanitizer build in place (its objects are kept apart, in
## build/obj.*-sanitize, so putting the normal build back is a relink)
RESTORE ?= 1
test-sanitize:
	MINITORCH_SANITIZE=1 $(PYTHON) setup.py -q build_ext --inplace
	$(SANITIZE_ENV) $(PYTHON) -m pytest $(PYTEST_PAR) -p no:cacheprovider --capture=sys $(SANITIZE_IGNORE) $(TESTS)
	if [ "$(RESTORE)" = 1 ]; then $(EMU_ENV) $(PYTHON) setup.py -q build_ext --inplace; fi

## tests/cuda on the emulated device under the sanitizers (an out-of-bounds access of a kernel
## to device memory is a heap overflow there); about 3.5 minutes, so not part of test-sanitize
test-sanitize-cuda-emu:
	MINITORCH_SANITIZE=1 MINITORCH_CUDA=0 $(EMU_ENV) $(PYTHON) setup.py -q build_ext --inplace
	$(SANITIZE_ENV) $(EMU_ENV) $(PYTHON) -m pytest $(PYTEST_PAR) -p no:cacheprovider --capture=sys tests/cuda
	$(EMU_ENV) $(PYTHON) setup.py -q build_ext --inplace

bench:
	$(PYTHON) benchmarks/bench_overhead.py

## C and CUDA layout (.clang-format), with one clang-format for everyone: pip's wheel, pinned,
## since versions format differently. make format-check (CI) says which files and how many lines
## it would change (tools/check_format.py) and fails if any; make format applies it.
CLANG_FORMAT_VERSION := 21.1.8
CLANG_FORMAT = "$$($(PYTHON) -c 'import clang_format; print(clang_format.get_executable("clang-format"))')"
clang-format:
	$(PIP) install -q clang-format==$(CLANG_FORMAT_VERSION)

format-check: clang-format
	$(PYTHON) tools/check_format.py $(CLANG_FORMAT)

format: clang-format
	$(PYTHON) tools/check_format.py $(CLANG_FORMAT) --fix

clean:
	rm -rf build dist minitorch/*.so *.egg-info
