#!/bin/bash
# Issue #29's acceptance figures for two checkouts side by side, in one run on one machine (the lent machines
# differ from call to call, and nvcc alone moved by 20 % between calls):
#   bash benchmarks/check/check_speed_ab.sh OUTDIR BASE_SRC [SOURCES]
# BASE_SRC: the src/ folder of the earlier code (e.g. `git archive REV src | tar -x -C DIR`); this checkout's
# src/ is the other. For each of llm.c, cuda-samples (first SAMPLES_UNITS units) and Thrust (first
# THRUST_UNITS), check_speed.py runs once per code, the six at once, each pinned to its own two cores
# (taskset): its own nvcc alone, check -j 1 cold, -j 2 cold and warm. So every ratio is against the nvcc
# time measured beside it, and the two codes meet the same machine at the same time.
set -u
OUT=${1:?usage: check_speed_ab.sh OUTDIR BASE_SRC [SOURCES]}
BASE=${2:?usage: check_speed_ab.sh OUTDIR BASE_SRC [SOURCES]}
SRC=${3:-.carry/speed}
THRUST_UNITS=${THRUST_UNITS:-12}
SAMPLES_UNITS=${SAMPLES_UNITS:-60}
SITE=${PYTHONPATH:-}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{ nproc; nvcc --version; python3 --version; lscpu | grep -i 'model name'; uptime; } > "$OUT/machine.txt" 2>&1
for d in src "$BASE"; do python3 -m compileall -q -j 0 "$d" > /dev/null 2>&1; done
run() {  # cores code-src label args...
  local cores=$1 code=$2 label=$3
  shift 3
  PYTHONPATH="$code${SITE:+:$SITE}" taskset -c "$cores" python3 benchmarks/check/check_speed.py --sources "$SRC" "$@" \
    -o "$OUT/check_speed_$label.json" > "$OUT/$label.log" 2>&1
  echo "$label exit $? $(date -u +%T)" >> "$OUT/done.txt"
}
run 0,1 "$BASE" base_llmc --set llmc -j 2 &
run 2,3 src main_llmc --set llmc -j 2 &
run 4,5 "$BASE" base_samples --set samples --limit "$SAMPLES_UNITS" -j 2 &
run 6,7 src main_samples --set samples --limit "$SAMPLES_UNITS" -j 2 &
run 8,9 "$BASE" base_thrust --set thrust --limit "$THRUST_UNITS" -j 2 &
run 10,11 src main_thrust --set thrust --limit "$THRUST_UNITS" -j 2 &
wait
uptime >> "$OUT/machine.txt"
python3 - "$OUT" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
summary = {}
for f in sorted(out.glob("check_speed_*.json")):
    label = f.stem.removeprefix("check_speed_")
    for name, s in json.loads(f.read_text()).get("sets", {}).items():
        summary[label] = {"set": name, "units": s["units"], **s["seconds"], **s["ratios"], "cpu_seconds": s.get("cpu_seconds"),
                          "findings": s.get("findings"), "findings_warm_equal_cold": s["findings_warm_equal_cold"]}
(out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
for label, s in summary.items():
    print(label, {k: v for k, v in s.items() if k not in ("cpu_seconds",)})
PY
