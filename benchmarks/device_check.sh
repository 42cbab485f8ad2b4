#!/usr/bin/env bash
# The GPU check in one command, at most 8 minutes on an H200:
#   bash benchmarks/device_check.sh [--emu] [RESULTS_DIR]
# builds minitorch in place (with _C_cuda), says what the device is, runs the CUDA tests file by
# file (each under a time limit), then the DLPack exchange with torch.cuda and CuPy (skipped, with
# the reason, where either is absent), then benchmarks/bench_cuda.py beside PyTorch's CUDA build
# (installed by pip if absent; offline that fails, and the script says so and goes on), and
# prints what failed, then the benchmark table, last. Where nvidia-smi -L lists more than one GPU,
# NCCL's all_reduce runs too (benchmarks/bench_nccl.py, one process per GPU, backend "nccl"; the
# nvidia-nccl-cu13 wheel is installed by pip if NCCL does not load); with one GPU it says so. Full logs go into RESULTS_DIR (or $OUT, or
# ./results). The exit status is 0 only if every step passed.
#
# --emu runs the same steps on the emulated CUDA device (MINITORCH_CUDA_EMU=1: the backend's code
# on the CPU, no GPU or toolkit needed) with the benchmark's small sizes: the check of this script.
#
# minitorch needs the scipy-openblas32 wheel, which an offline machine lacks: bring it along in
# benchmarks/wheels (git-ignored), fetched beforehand where there is a network with
#   pip download scipy-openblas32 --python-version 3.12 --only-binary=:all: --no-deps -d benchmarks/wheels
# cuBLAS(Lt) and cuDNN come from the CUDA toolkit or from PyTorch's nvidia-* wheels (setup.py finds both).
set -uo pipefail
cd "$(dirname "$0")/.."
EMU=0
if [ "${1:-}" = "--emu" ]; then
    EMU=1
    shift
fi
RESULTS=${1:-${OUT:-results}}
mkdir -p "$RESULTS"
PYTHON=${PYTHON:-python3}
# seconds per test file (one hang costs only that file); the emulated device is ~100x slower
TEST_LIMIT=${TEST_LIMIT:-$([ $EMU = 1 ] && echo 400 || echo 60)}
BENCH_LIMIT=${BENCH_LIMIT:-200}   # seconds for the whole benchmark, both libraries
# seconds from the start after which no further test file starts, so that the benchmark still
# runs within the 8 minutes (0: no limit, the emulated device's default)
TEST_BUDGET=${TEST_BUDGET:-$([ $EMU = 1 ] && echo 0 || echo 330)}
failed=()
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
if [ $EMU = 1 ]; then
    export MINITORCH_CUDA_EMU=1
else
    export MINITORCH_CUDA_EMU=0
fi

{
    t0=$(date +%s)
    echo "== machine ($([ $EMU = 1 ] && echo 'emulated CUDA device' || echo 'real GPU'))"
    if command -v nvidia-smi > /dev/null; then nvidia-smi 2>&1 | head -15; else echo "no nvidia-smi: no NVIDIA driver here"; fi
    "$PYTHON" --version
    command -v nvcc > /dev/null && nvcc --version | tail -1
    if ! "$PYTHON" -c "import scipy_openblas32" 2>/dev/null && [ -d benchmarks/wheels ]; then
        echo "== installing scipy-openblas32 from benchmarks/wheels"
        "$PYTHON" -m pip install -q --no-index --find-links benchmarks/wheels scipy-openblas32 || failed+=("scipy-openblas32 install")
    fi

    echo "== build"
    start=$(date +%s)
    if [ $EMU = 1 ]; then
        # the emulated device alone: no toolkit needed (a real _C_cuda is built too where nvcc is)
        MINITORCH_CUDA_EMU=1 "$PYTHON" setup.py -q build_ext --inplace > "$RESULTS/build.log" 2>&1 || failed+=("build")
    else
        # MINITORCH_CUDA=1: a missing toolkit is an error; sm_90 alone saves device time
        MINITORCH_CUDA=1 MINITORCH_CUDA_EMU=0 MINITORCH_CUDA_ARCH_LIST="${MINITORCH_CUDA_ARCH_LIST:-9.0}" \
            "$PYTHON" setup.py -q build_ext --inplace > "$RESULTS/build.log" 2>&1 || failed+=("build")
    fi
    grep -E "error|warning:" "$RESULTS/build.log" | head -20
    tail -2 "$RESULTS/build.log"
    echo "build took $(( $(date +%s) - start )) s"

    echo "== minitorch.cuda"
    "$PYTHON" -c "
import minitorch as m
c = m.cuda
print('available:', c.is_available(), c._unavailable_reason())
if c.is_available():
    print(c.get_device_name(), '| cuBLAS', bool(c._C_cuda.has_cublas), '| cuDNN', m.backends.cudnn.version())
" || failed+=("import minitorch")
    available=$("$PYTHON" -c "import minitorch as m; print(int(m.cuda.is_available()))" 2>/dev/null || echo 0)
    if [ "$available" != 1 ]; then
        echo "no usable CUDA device: the tests and the benchmark need one (--emu runs them on the emulated device)"
        failed+=("no CUDA device")
    fi

    if [ "$available" = 1 ]; then
        echo "== tests/cuda, file by file (at most $TEST_LIMIT s each)"
        summary=""
        for f in tests/cuda/test_*.py tests/core/test_cuda_stub.py; do
            name=$(basename "$f" .py)
            if [ "$TEST_BUDGET" -gt 0 ] && [ $(( $(date +%s) - t0 )) -ge "$TEST_BUDGET" ]; then
                failed+=("$name: not run (past TEST_BUDGET=$TEST_BUDGET s)")
                summary="$summary$(printf '%-32s not run: past the %s s budget' "$name" "$TEST_BUDGET")"$'\n'
                continue
            fi
            start=$(date +%s)
            # test_cuda_stub checks a minitorch without the backend: not the emulated one's view
            emu_env=$([ "$name" = test_cuda_stub ] && echo "-u MINITORCH_CUDA_EMU" || echo "")
            timeout "$TEST_LIMIT" env $emu_env "$PYTHON" -m pytest -rfEs -p no:cacheprovider "$f" \
                --junitxml="$RESULTS/$name.xml" > "$RESULTS/$name.log" 2>&1
            rc=$?
            line=$(grep -E "[0-9]+ (passed|failed|skipped|error)" "$RESULTS/$name.log" | tail -n 1)
            [ $rc -eq 124 ] && line="TIMED OUT after $TEST_LIMIT s"
            # 5: no tests collected (a module skipped as a whole)
            if [ $rc -ne 0 ] && [ $rc -ne 5 ]; then failed+=("$name: $line"); fi
            summary="$summary$(printf '%-32s rc=%-3s %4ss  %s' "$name" "$rc" "$(( $(date +%s) - start ))" "$line")"$'\n'
            grep -E "^(FAILED|ERROR)" "$RESULTS/$name.log" | head -10
        done
        echo "== tests summary (full logs: $RESULTS/test_*.log)"
        printf '%s' "$summary"

        echo "== DLPack with torch.cuda and CuPy (issue 8)"
        grep -E "^SKIPPED" "$RESULTS/test_cuda_dlpack.log" | sed 's/^/  /' | sort -u | head -10
        for lib in torch cupy; do
            if ! "$PYTHON" -c "import $lib" 2>/dev/null; then
                echo "  $lib: not installed, its exchange tests skipped"
            fi
        done

        echo "== PyTorch's CUDA build, to compare with"
        if [ $EMU = 1 ]; then
            echo "  not needed: the emulated device is no GPU to compare on (the PyTorch column stays empty)"
        elif ! "$PYTHON" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
            echo "  absent (or without CUDA): pip install torch (at most 120 s) ..."
            if timeout 120 "$PYTHON" -m pip install -q --timeout 10 --retries 0 torch > "$RESULTS/pip_torch.log" 2>&1 \
                && "$PYTHON" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
                echo "  installed: $("$PYTHON" -c 'import torch; print(torch.__version__, torch.version.cuda)')"
            else
                echo "  could not be installed (offline? see $RESULTS/pip_torch.log): the PyTorch column stays empty"
            fi
        else
            echo "  $("$PYTHON" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')"
        fi

        echo "== benchmark (at most $BENCH_LIMIT s)"
        rm -f "$RESULTS/bench_cuda.txt" "$RESULTS/bench_cuda.json"
        timeout "$BENCH_LIMIT" "$PYTHON" benchmarks/bench_cuda.py $([ $EMU = 1 ] && echo --emu) "$RESULTS" \
            > "$RESULTS/bench.log" 2>&1
        rc=$?
        [ $rc -eq 124 ] && failed+=("benchmark: TIMED OUT after $BENCH_LIMIT s")
        [ $rc -ne 0 ] && [ $rc -ne 124 ] && failed+=("benchmark: rc=$rc, see $RESULTS/bench.log")
        grep -E "^(a benchmark failed|no PyTorch column|Traceback|[A-Za-z]*Error)" "$RESULTS/bench.log" | head -10
    fi

    echo "== NCCL all_reduce (more than one GPU)"
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    if [ $EMU = 1 ]; then
        nccl_procs=2  # the emulated NCCL between two processes: the check of this step
    elif [ "${ngpu:-0}" -gt 1 ]; then
        nccl_procs=$ngpu
    else
        nccl_procs=0
        echo "  nvidia-smi -L lists ${ngpu:-0} GPU(s): NCCL's all_reduce needs more than one, not run"
    fi
    if [ "$nccl_procs" -gt 1 ] && [ "$available" = 1 ]; then
        if ! "$PYTHON" -c "import minitorch.distributed as d, sys; sys.exit(not d.is_nccl_available())" 2>/dev/null; then
            echo "  NCCL does not load: pip install nvidia-nccl-cu13 (at most 120 s) ..."
            timeout 120 "$PYTHON" -m pip install -q --timeout 10 --retries 0 nvidia-nccl-cu13 mpi4py mpich \
                > "$RESULTS/pip_nccl.log" 2>&1 || echo "  could not be installed (offline?), see $RESULTS/pip_nccl.log"
        fi
        timeout 180 "$PYTHON" -m minitorch.distributed.run --nproc-per-node "$nccl_procs" benchmarks/bench_nccl.py \
            $([ $EMU = 1 ] && echo --emu) > "$RESULTS/bench_nccl.txt" 2>&1
        rc=$?
        cat "$RESULTS/bench_nccl.txt" | tail -12
        [ $rc -ne 0 ] && failed+=("NCCL all_reduce: rc=$rc, see $RESULTS/bench_nccl.txt")
    fi

    echo "== what failed"
    if [ ${#failed[@]} -eq 0 ]; then echo "nothing"; else printf '  %s\n' "${failed[@]}"; fi
    echo "== total $(( $(date +%s) - t0 )) s"
    echo "== benchmark table"
    if [ -f "$RESULTS/bench_cuda.txt" ]; then cat "$RESULTS/bench_cuda.txt"; else echo "(no table: the benchmark did not run)"; fi
    [ ${#failed[@]} -eq 0 ]
} 2>&1 | tee "$RESULTS/device_check.log"
exit "${PIPESTATUS[0]}"
