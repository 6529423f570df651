#!/usr/bin/env bash
# `cudalens analyze --run ... --counters` end to end on the GPU machine (#14 item 4): the kernel
# counters and ncu's per-instruction source page of the --run launch, every prediction checked
# against its own line. Usage (repository root): benchmarks/model/analyze/run_h100.sh OUTDIR
set -u
out=${1:?output dir}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; git rev-parse HEAD 2>/dev/null; } > "$out/machine.txt" 2>&1
f=benchmarks/model/analyze/demo_kernels.cu
t0=$SECONDS
timeout 120 python3 -m cudalens analyze $f --format json -o "$out/transpose_naive.json" \
  --run "transpose_naive --grid 64,256 --block 32,8 --arg float32[2^22]:zeros --arg float32[2^22] --arg int32=2048 --arg int32=2048 --max-time 1" \
  --counters=run 2> "$out/transpose_naive.err"
echo "transpose_naive: rc=$? $((SECONDS - t0)) s" | tee -a "$out/steps.txt"
t0=$SECONDS
timeout 120 python3 -m cudalens analyze $f --format json -o "$out/transpose_tile_conflict.json" \
  --run "transpose_tile_conflict --grid 64,64 --block 32,8 --arg float32[2^22]:zeros --arg float32[2^22] --arg int32=2048 --max-time 1" \
  --counters=run 2> "$out/transpose_tile_conflict.err"
echo "transpose_tile_conflict: rc=$? $((SECONDS - t0)) s" | tee -a "$out/steps.txt"
cat "$out"/*.err
python3 - "$out" <<'PY'
import json, sys, pathlib
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    d = json.loads(p.read_text())
    print(p.name, d.get("line_checks_summary"), d.get("evidence_notes"))
    for c in d.get("line_checks", []):
        print("  ", c["kernel"], c["line"], c["quantity"], c["predicted"], c["measured"], c["agree"], c["layer"])
    print("  V1:", [(f["line"], f["message"][:80]) for f in d["findings"] if f["rule"] == "V1"])
    print("  G/SH:", [(f["rule"], f["line"]) for f in d["findings"] if f["rule"][0] in "GS"])
PY
