#!/bin/bash
# Issue #29's acceptance run on a many-core machine with the full CUDA toolkit (no GPU needed), in one go:
#   bash benchmarks/check/check_speed_acceptance.sh OUTDIR [SOURCES]
# SOURCES (default .carry/speed) holds llmc/ (karpathy/llm.c dev/cuda), samples/ (NVIDIA/cuda-samples
# Samples/ and Common/, sources only) and thrust/ (NVIDIA/thrust examples), as check_speed.py --prepare
# exports them. Each set runs on its own two cores (taskset), the three at once: nvcc alone, check -j 1
# cold, check -j 2 cold and warm, as on an idle 2-core machine. Beside them, on the remaining cores, a
# warm check of an unchanged 200-unit tree. Thrust and cuda-samples are limited to their first
# THRUST_UNITS / SAMPLES_UNITS units (the run must end within the lease's 10 minutes; Thrust's templates
# take nvcc seconds each). ROUNDS (default 1): each set's cold runs (nvcc, -j 1, -j 2) that many times,
# alternating their order (check_speed.py --rounds: each measure's least, beside every run). TREE (default
# 200; 0: none): the size of the warm tree beside them. ALONE="llmc thrust" (say): those sets one after
# another on cores 0 and 1 instead, the rest of the machine idle (an idle 2-core machine), and no tree.
# EXTRA: further check_speed.py arguments for every set (a toolkit without cuBLAS: --include DIR).
set -u
OUT=${1:?usage: check_speed_acceptance.sh OUTDIR [SOURCES]}
SRC=${2:-.carry/speed}
THRUST_UNITS=${THRUST_UNITS:-12}
SAMPLES_UNITS=${SAMPLES_UNITS:-60}
ROUNDS=${ROUNDS:-1}
TREE=${TREE:-200}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{ nproc; nvcc --version; python3 --version; uptime; } > "$OUT/machine.txt" 2>&1
# bytecode compiled first, as an installed package has it (pip compiles at install; --no-compile skipped that)
for d in src $(echo "${PYTHONPATH:-}" | tr : " "); do python3 -m compileall -q -j 0 "$d" > /dev/null 2>&1; done
command -v taskset > /dev/null || echo "no taskset: sets NOT pinned to two cores" >> "$OUT/machine.txt"
run() {  # cores name args...
  local cores=$1 name=$2
  shift 2
  # shellcheck disable=SC2086
  $(command -v taskset > /dev/null && echo taskset -c "$cores") python3 benchmarks/check/check_speed.py --sources "$SRC" "$@" ${EXTRA:-} -o "$OUT/check_speed_$name.json" \
    > "$OUT/$name.log" 2>&1
  echo "$name exit $? $(date -u +%T)" >> "$OUT/done.txt"
}
args() {  # the set's check_speed.py arguments
  case $1 in
    llmc) echo --set llmc -j 2 --rounds "$ROUNDS" ;;
    samples) echo --set samples --limit "$SAMPLES_UNITS" -j 2 --rounds "$ROUNDS" ;;
    thrust) echo --set thrust --limit "$THRUST_UNITS" -j 2 --rounds "$ROUNDS" ;;
  esac
}
if [ -n "${ALONE:-}" ]; then  # the sets named one after another on cores 0 and 1, nothing else running
  for name in $ALONE; do
    # shellcheck disable=SC2046
    run 0,1 "$name" $(args "$name")
  done
else
  # shellcheck disable=SC2046
  run 0,1 llmc $(args llmc) &
  # shellcheck disable=SC2046
  run 2,3 samples $(args samples) &
  # shellcheck disable=SC2046
  run 4,5 thrust $(args thrust) &
  [ "$TREE" -gt 0 ] && run 6-15 tree$TREE --tree "$TREE" -j 10 &
  wait
fi
uptime >> "$OUT/machine.txt"
python3 - "$OUT" <<'EOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
summary = {}
for f in sorted(out.glob("check_speed_*.json")):
    d = json.loads(f.read_text())
    summary.setdefault("code", d.get("code"))  # sha256 of the cudalens sources that ran (check_speed.code_digest)
    for name, s in d.get("sets", {}).items():
        summary[name] = {"units": s["units"], "nvcc_failed": s["nvcc_failed"], **s["seconds"], **s["ratios"],
                         "ratios_per_round": s.get("ratios_per_round"),
                         "cpu_seconds": s.get("cpu_seconds"), "findings_warm_equal_cold": s["findings_warm_equal_cold"]}
    if "tree" in d:
        summary["tree"] = d["tree"]
(out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
print(json.dumps(summary, indent=1))
EOF
