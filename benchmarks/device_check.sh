#!/usr/bin/env bash
# The GPU check, for a machine with a CUDA GPU, nvcc, Python, NumPy and PyTorch but
# no network: builds minitorch in place (with _C_cuda), runs benchmarks/bench_cuda.py, then each
# file of tests/cuda (every kernel against the CPU result), and prints a summary of both last.
# Full results go into the folder given as $1 (or $OUT).
#
# minitorch needs the scipy-openblas32 wheel, which such a machine lacks: bring it along in
# benchmarks/wheels (git-ignored), fetched beforehand where there is a network with
#   pip download scipy-openblas32 --python-version 3.12 --only-binary=:all: --no-deps -d benchmarks/wheels
# cuBLAS comes from the CUDA toolkit or from PyTorch's nvidia-* wheels (setup.py finds both).
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS=${1:-${OUT:-results}}
mkdir -p "$RESULTS"
PYTHON=${PYTHON:-python3}
status=0

{
    echo "== machine"; nvidia-smi 2>&1 | head -15; "$PYTHON" --version; nvcc --version | tail -1
    if ! "$PYTHON" -c "import scipy_openblas32" 2>/dev/null; then
        echo "== installing scipy-openblas32 from benchmarks/wheels"
        "$PYTHON" -m pip install -q --no-index --find-links benchmarks/wheels scipy-openblas32 || status=1
    fi
    echo "== build (MINITORCH_CUDA=1: a missing toolkit is an error; sm_90 alone saves device time)"
    start=$(date +%s)
    MINITORCH_CUDA=1 MINITORCH_CUDA_EMU=0 MINITORCH_CUDA_ARCH_LIST="${MINITORCH_CUDA_ARCH_LIST:-9.0}" \
        "$PYTHON" setup.py -q build_ext --inplace || status=1
    echo "build took $(( $(date +%s) - start )) s"
    echo "== minitorch.cuda"
    PYTHONPATH=. "$PYTHON" -c "import minitorch as m; print('available:', m.cuda.is_available(), m.cuda._unavailable_reason()); print(m.cuda.get_device_name() if m.cuda.is_available() else '')"
    # First the table (a hang in one test file must not cost it), then each test file on its own
    # with a time limit, so that one hang or crash costs only that file's results.
    echo "== benchmark"
    PYTHONPATH=. timeout 240 "$PYTHON" benchmarks/bench_cuda.py "$RESULTS" || status=1
    echo "== tests/cuda, file by file"
    summary=""
    for f in tests/cuda/test_*.py tests/core/test_cuda_stub.py; do
        name=$(basename "$f" .py)
        start=$(date +%s)
        PYTHONPATH=. timeout 90 "$PYTHON" -m pytest -rfEs -p no:cacheprovider "$f" \
            --junitxml="$RESULTS/$name.xml" > "$RESULTS/$name.log" 2>&1
        rc=$?
        [ $rc -ne 0 ] && status=1
        line=$(grep -E "[0-9]+ (passed|failed|skipped|error)" "$RESULTS/$name.log" | tail -n 1)
        [ $rc -eq 124 ] && line="TIMED OUT after 90 s"
        summary="$summary$(printf '%-28s rc=%-3s %4ss  %s' "$name" "$rc" "$(( $(date +%s) - start ))" "$line")"$'\n'
        grep -E "^(FAILED|ERROR)" "$RESULTS/$name.log" | head -20
    done
    echo "== tests summary (full logs: $RESULTS/test_*.log)"
    printf '%s' "$summary"
    echo "== benchmark table"
    cat "$RESULTS"/bench_cuda*.txt 2>/dev/null | tail -20
    echo "== exit status $status"
    exit "$status"
} 2>&1 | tee "$RESULTS/device_check.log"
exit "${PIPESTATUS[0]}"
