#!/usr/bin/env bash
# Run every lab on the GPU and keep the JSON + PNG results.
# Usage (from the repo root): OUT=/some/dir bash benchmarks/measure/labs_gpu.sh [--quick]
# Results: $OUT/labs/<lab>.json and <lab>.png; copy them to benchmarks/results/<device>/labs/.
set -euo pipefail
OUT="${OUT:-benchmarks/results/h100}"
export PYTHONPATH="${PYTHONPATH:-}:src"
mkdir -p "$OUT/labs"
python -m cudalens lab run all --output "$OUT/labs" "$@" | tee "$OUT/labs/summary.txt"
