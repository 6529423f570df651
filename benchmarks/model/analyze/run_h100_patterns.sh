#!/usr/bin/env bash
# `cudalens analyze --run ... --counters=run` on the kernels of our own that reproduce this round's
# public-code patterns (tests/access/ptx/realworld_patterns.cu): each prediction the CPU tests assert
# by hand is checked on the GPU against Nsight Compute's counters of its own line's instructions.
# Usage (repository root, a GPU machine): benchmarks/model/analyze/run_h100_patterns.sh OUTDIR
set -u
out=${1:?output dir}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; } > "$out/machine.txt" 2>&1
f=tests/access/ptx/realworld_patterns.cu
run() {  # name, launch
  local t0=$SECONDS
  timeout 150 python3 -m cudalens analyze $f --format json -o "$out/$1.json" --run "$2" --counters=run 2> "$out/$1.err"
  echo "$1: rc=$? $((SECONDS - t0)) s" | tee -a "$out/steps.txt"
}
run match_groups "match_groups --grid 2 --block 64 --arg float32[4096] --max-time 1"
run redux_stride "redux_stride --grid 2 --block 64 --arg float32[4096] --max-time 1"
run shared_pointer_published "shared_pointer_published --grid 1 --block 256 --arg float32[256] --max-time 1"
run helper_two_strides "helper_two_strides --grid 1 --block 256 --arg float32[256] --max-time 1"
run virtual_call "virtual_call --grid 1 --block 64 --arg float32[4096]:zeros --arg float32[64] --max-time 1"
cat "$out"/*.err | tail -20
python3 - "$out" <<'PY'
import json, sys, pathlib
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    d = json.loads(p.read_text())
    print(p.name, d.get("line_checks_summary"))
    for c in d.get("line_checks", []):
        print("  ", c["line"], c["quantity"], c["predicted"], c.get("low"), c.get("high"), c["measured"], c["agree"],
              c["reason"][:90])
PY
