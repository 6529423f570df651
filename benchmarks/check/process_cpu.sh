#!/bin/bash
# Each process's own CPU in cold `check -j 1` runs of llm.c (the parent, the launch table, the compile process and
# its tools, the file worker, the report): bash benchmarks/check/process_cpu.sh SOURCES [RUNS]
# SOURCES: check_speed.py's exported sets (llmc/dev/cuda inside). Prints each run's wall seconds and the lines of
# benchmarks/check/process_cpu/sitecustomize.py. Results: results/h200/check_speed/2026-11-28_0142_processes/.
set -u
S=$(cd "${1:?usage: process_cpu.sh SOURCES [RUNS]}" && pwd)/llmc/dev/cuda
HOOK=$(cd "$(dirname "$0")" && pwd)/process_cpu
for i in $(seq "${2:-2}"); do
  cache=$(mktemp -d); log=$(mktemp); out=$(mktemp)
  t0=$(date +%s.%N)
  CPULOG=$log PYTHONPATH=$HOOK:${PYTHONPATH:-} CUDALENS_CACHE_DIR=$cache python3 -m cudalens check "$S"/*.cu -I"$S" -j 1 \
    --cc 9.0 --format json -o "$out" --no-config > /dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "import sys; print(f'run $i: wall {float(sys.argv[2]) - float(sys.argv[1]):.2f} s')" "$t0" "$t1"
  cat "$log"
  rm -rf "$cache" "$log" "$out"
done
