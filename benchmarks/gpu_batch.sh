#!/usr/bin/env bash
# Runs the GPU validation scripts on a machine with an NVIDIA GPU, from the repository root.
# Usage: benchmarks/gpu_batch.sh OUTDIR STEP [STEP ...]
#   steps: device occupancy access measure ncu timing storeprobe probe copy labs validate analyze tests
# Each step writes under OUTDIR/<step>/ with its own log; a failing or hanging step does not stop the
# others (each has a timeout). Wheels in .whl/ (tree-sitter for the analyzer) are installed to /tmp/site.
set -u
out=${1:?output dir}; shift
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH="$PWD/src:/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv; git rev-parse HEAD 2>/dev/null; } > "$out/machine.txt" 2>&1
run_step() {  # name timeout command...
  local name=$1 limit=$2; shift 2
  mkdir -p "$out/$name"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$out/$name/log.txt" 2>&1
  local rc=$?
  echo "step $name: rc=$rc, $((SECONDS - t0)) s" | tee -a "$out/steps.txt"
  tail -n 25 "$out/$name/log.txt"
}
for step in "$@"; do
  case $step in
    device)    run_step device 240 python3 benchmarks/measure/device_gpu.py "$out/device" ;;
    occupancy) run_step occupancy 240 python3 benchmarks/model/occupancy_gpu.py "$out/occupancy" ;;
    access)    run_step access 240 python3 benchmarks/model/access_gpu.py "$out/access" ;;
    measure)   run_step measure 420 python3 benchmarks/measure/measure_gpu.py "$out/measure" ;;
    ncu)       run_step ncu 60 python3 benchmarks/model/ncu_fixture.py "$out/ncu" ;;
    labs)      run_step labs 420 python3 -m cudalens lab run all --output "$out/labs" ;;
    probe)     run_step probe 120 python3 benchmarks/model/shared_wide_probe.py "$out/probe" ;;
    timing)    run_step timing 330 python3 benchmarks/measure/timing_probe.py "$out/timing" ;;
    storeprobe) run_step storeprobe 220 python3 benchmarks/model/shared_store_probe.py "$out/storeprobe" ;;
    copy)      run_step copy 120 python3 benchmarks/measure/copy_variants.py "$out/copy" ;;
    validate)  run_step validate 300 python3 benchmarks/model/validate_labs.py "$out/validate" ;;
    analyze)   run_step analyze 120 bash -c 'for f in json html; do python3 -m cudalens analyze examples/saxpy.cu --run "saxpy --grid 65536 --block 256 --arg int32=16777216 --arg float32=2 --arg float32[2^24] --arg float32[2^24]@inout" --counters=run --format $f -o "$0/saxpy_guided.$f" || exit 1; done; python3 -m cudalens analyze examples/saxpy.cu --run "saxpy --grid 65536 --block 256 --arg int32=16777216 --arg float32=2 --arg float32[2^24] --arg float32[2^24]@inout" --counters=run' "$out/analyze" ;;
    tests)     run_step tests 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/measure tests/hardware tests/occupancy tests/labs tests/compiled ;;
    *) echo "unknown step $step" ;;
  esac
done
