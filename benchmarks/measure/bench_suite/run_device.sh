#!/usr/bin/env bash
# One device call for #17: GPU tests of the harness, then the suite steps given (default all).
# Usage (repository root on the GPU machine): benchmarks/measure/bench_suite/run_device.sh OUTDIR [STEP...]
set -u
out=${1:?out}; shift
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="$PWD/src:/tmp/site" PYTHONUNBUFFERED=1
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; git rev-parse HEAD 2>/dev/null; python3 -c "import cuda.core, cuda.bindings; print('cuda.core', cuda.core.__version__, 'cuda.bindings', cuda.bindings.__version__)"; which nvcc ncu; nvcc --version | tail -2; } > "$out/machine.txt" 2>&1
for step in "$@"; do
  case $step in
    tests) timeout "${TESTS_LIMIT:-100}" python3 -m pytest -q -m gpu -p no:cacheprovider tests/measure > "$out/gpu_tests.txt" 2>&1; tail -8 "$out/gpu_tests.txt" ;;
    labs) timeout 300 python3 -m cudalens lab run all --output "$out/labs" > "$out/labs_log.txt" 2>&1; echo "labs rc=$?"; tail -25 "$out/labs_log.txt" ;;
    *) timeout "${STEP_LIMIT:-170}" python3 benchmarks/measure/bench_suite/bench_suite_gpu.py "$out" "$step" 2>&1 | tee -a "$out/suite_log.txt" | tail -40 ;;
  esac
done
