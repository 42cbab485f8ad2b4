#!/usr/bin/env bash
# The GPU check in one command, at most 8 minutes on an H200:
#   bash benchmarks/device_check.sh [--emu | --dry-run] [RESULTS_DIR]
# builds minitorch in place (with _C_cuda), says what the device is, runs the CUDA tests file by
# file (each under a time limit, TEST_JOBS files at a time; the distributed ones alone), then the
# DLPack exchange with torch.cuda and CuPy (skipped, with
# the reason, where either is absent), then benchmarks/bench_cuda.py beside PyTorch's CUDA build
# (installed by pip if absent; offline that fails, and the script says so and goes on), and
# prints what failed, then the benchmark table, last. Where nvidia-smi -L lists more than one GPU,
# NCCL's all_reduce runs too (benchmarks/bench_nccl.py, one process per GPU, backend "nccl"; the
# nvidia-nccl-cu13 wheel is installed by pip if NCCL does not load); with one GPU it says so. Full logs go into RESULTS_DIR (or $OUT, or
# ./results). The exit status is 0 only if every step passed.
#
# --emu runs the same steps on the emulated CUDA device (MINITORCH_CUDA_EMU=1: the backend's code
# on the CPU, no GPU or toolkit needed) with the benchmark's small sizes: the check of this script.
# --dry-run is --emu in seconds: the build, each test file, the installs and NCCL's run are
# printed (the command each would run) instead of run; the benchmark runs (small sizes, on the
# emulated device, which must be built), so the table and the failure report are the real ones.
#
# minitorch needs the scipy-openblas32 wheel, which an offline machine lacks: bring it along in
# benchmarks/wheels (git-ignored), fetched beforehand where there is a network with
#   pip download scipy-openblas32 --python-version 3.12 --only-binary=:all: --no-deps -d benchmarks/wheels
# cuBLAS(Lt) and cuDNN come from the CUDA toolkit or from PyTorch's nvidia-* wheels (setup.py finds both).
set -uo pipefail
cd "$(dirname "$0")/.."
EMU=0
DRY=0
case "${1:-}" in
    --emu) EMU=1; shift ;;
    --dry-run) EMU=1; DRY=1; shift ;;
esac
RESULTS=${1:-${OUT:-results}}
mkdir -p "$RESULTS"
PYTHON=${PYTHON:-python3}
# seconds per test file (one hang costs only that file); the emulated device is ~100x slower
TEST_LIMIT=${TEST_LIMIT:-$([ $EMU = 1 ] && echo 400 || echo 60)}
BENCH_LIMIT=${BENCH_LIMIT:-200}   # seconds for the whole benchmark, both libraries
# seconds from the start after which no further test file starts, so that the benchmark still
# runs within the 8 minutes (0: no limit, the emulated device's default)
TEST_BUDGET=${TEST_BUDGET:-$([ $EMU = 1 ] && echo 0 || echo 330)}
# the test files (a subset for a quick look: TEST_FILES="tests/cuda/test_cuda_ops.py ...")
TEST_FILES=${TEST_FILES:-"tests/cuda/test_*.py tests/core/test_cuda_stub.py"}
# test files run at a time (each its own process on the one GPU; the machine has 16 cores)
TEST_JOBS=${TEST_JOBS:-$([ $EMU = 1 ] && echo 2 || echo 4)}
failed=()
# run CMD...: runs it, or under --dry-run prints it (the steps that take minutes)
run() {
    if [ $DRY = 1 ]; then echo "  would run: $*"; else "$@"; fi
}
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
        run "$PYTHON" -m pip install -q --no-index --find-links benchmarks/wheels scipy-openblas32 || failed+=("scipy-openblas32 install")
    fi

    echo "== build"
    start=$(date +%s)
    : > "$RESULTS/build.log"
    if [ $EMU = 1 ]; then
        # the emulated device alone: no toolkit needed (a real _C_cuda is built too where nvcc is)
        run env MINITORCH_CUDA_EMU=1 "$PYTHON" setup.py -q build_ext --inplace > "$RESULTS/build.log" 2>&1 || failed+=("build")
    else
        # MINITORCH_CUDA=1: a missing toolkit is an error; sm_90 alone saves device time
        run env MINITORCH_CUDA=1 MINITORCH_CUDA_EMU=0 MINITORCH_CUDA_ARCH_LIST="${MINITORCH_CUDA_ARCH_LIST:-9.0}" \
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
        echo "== tests/cuda, file by file (at most $TEST_LIMIT s each, $TEST_JOBS at a time)"
        # one file: its log, junit XML and one summary line (NAME.summary; 'FAILED' marks a
        # failure), written by a background job, so the lines are gathered after all ended
        test_file() {
            local f=$1 name start rc line
            name=$(basename "$f" .py)
            start=$(date +%s)
            # test_cuda_stub checks a minitorch without the backend: not the emulated one's view
            local emu_env=$([ "$name" = test_cuda_stub ] && echo "-u MINITORCH_CUDA_EMU" || echo "")
            timeout "$TEST_LIMIT" env $emu_env "$PYTHON" -m pytest -rfEs -p no:cacheprovider "$f" \
                --junitxml="$RESULTS/$name.xml" > "$RESULTS/$name.log" 2>&1
            rc=$?
            line=$(grep -E "[0-9]+ (passed|failed|skipped|error)" "$RESULTS/$name.log" | tail -n 1)
            [ $rc -eq 124 ] && line="TIMED OUT after $TEST_LIMIT s"
            # 5: no tests collected (a module skipped as a whole)
            local mark=$([ $rc -ne 0 ] && [ $rc -ne 5 ] && echo FAILED || echo ok)
            printf '%-32s rc=%-3s %4ss  %-6s %s\n' "$name" "$rc" "$(( $(date +%s) - start ))" "$mark" "$line" \
                > "$RESULTS/$name.summary"
        }
        read -r -a files <<< "$(echo $TEST_FILES)"  # the globs expanded
        rm -f "$RESULTS"/*.summary
        for f in "${files[@]}"; do
            name=$(basename "$f" .py)
            if [ "$TEST_BUDGET" -gt 0 ] && [ $(( $(date +%s) - t0 )) -ge "$TEST_BUDGET" ]; then
                printf '%-32s not run: past the %s s budget  FAILED\n' "$name" "$TEST_BUDGET" > "$RESULTS/$name.summary"
                continue
            fi
            if [ $DRY = 1 ]; then
                echo "  would run: timeout $TEST_LIMIT $PYTHON -m pytest -rfEs $f"
                printf '%-32s dry run\n' "$name" > "$RESULTS/$name.summary"
            elif [[ $name == test_distributed* ]]; then
                wait  # these start processes of their own on the device: alone
                test_file "$f"
            else
                while [ "$(jobs -rp | wc -l)" -ge "$TEST_JOBS" ]; do wait -n; done
                test_file "$f" &
            fi
        done
        wait
        echo "== tests summary (full logs: $RESULTS/test_*.log)"
        for f in "${files[@]}"; do
            name=$(basename "$f" .py)
            cat "$RESULTS/$name.summary"
            if grep -q "FAILED" "$RESULTS/$name.summary"; then
                failed+=("$name: $(sed 's/  */ /g' "$RESULTS/$name.summary" | cut -d' ' -f2-)")
                grep -E "^(FAILED|ERROR)" "$RESULTS/$name.log" 2>/dev/null | head -10
            fi
        done

        echo "== DLPack with torch.cuda and CuPy (issue 8)"
        grep -E "^SKIPPED" "$RESULTS/test_cuda_dlpack.log" 2>/dev/null | sed 's/^/  /' | sort -u | head -10
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
            if run timeout 120 "$PYTHON" -m pip install -q --timeout 10 --retries 0 torch > "$RESULTS/pip_torch.log" 2>&1 \
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
            run timeout 120 "$PYTHON" -m pip install -q --timeout 10 --retries 0 nvidia-nccl-cu13 mpi4py mpich \
                > "$RESULTS/pip_nccl.log" 2>&1 || echo "  could not be installed (offline?), see $RESULTS/pip_nccl.log"
        fi
        run timeout 180 "$PYTHON" -m minitorch.distributed.run --nproc-per-node "$nccl_procs" benchmarks/bench_nccl.py \
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
