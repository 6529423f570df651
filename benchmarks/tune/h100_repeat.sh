#!/bin/bash
# The second H100 call: repeats of the cudalens runs (another seed, a new session, from an empty
# compile cache), the spilled configurations measured, kernel_tuner twice, and, time
# permitting, a second exhaustive run.
# usage (repository root, on the GPU machine): bash benchmarks/tune/h100_repeat.sh OUTDIR
set -u
OUT=$1
BUDGET=${BUDGET_S:-455}
mkdir -p "$OUT/res"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .tunewhl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/res/nvidia_smi_2.csv"
date -u +%FT%TZ > "$OUT/res/date_2.txt"
L="$OUT/res/log_repeat.txt"
# a repeat with another seed (a new session), compiling from an empty cache on this fresh machine
python3 benchmarks/tune/run_tune.py "$OUT/res" --seed=1 --tag=_rep2 ${REPEAT_STRATEGIES:-guided optuna} 2>&1 | tee -a "$L"
python3 benchmarks/tune/spill_check.py "$OUT/res" 2>&1 | tail -5 | tee -a "$L"
for i in 1 2; do
  LEFT=$(( BUDGET - SECONDS ))
  [ "$LEFT" -gt 60 ] || { echo "kernel_tuner run $i skipped: ${LEFT} s left" | tee -a "$L"; break; }
  timeout "$LEFT" python3 benchmarks/tune/kernel_tuner_gemm.py "$OUT/res" "_run$i" 2>&1 | tail -20 | tee -a "$L"
done
LEFT=$(( BUDGET - SECONDS ))
if [ "$LEFT" -gt 140 ]; then
  timeout "$LEFT" python3 benchmarks/tune/run_tune.py "$OUT/res" --seed=1 --tag=_rep2 exhaustive 2>&1 | tee -a "$L"
else
  echo "exhaustive repeat skipped: ${LEFT} s left" | tee -a "$L"
fi
cp /tmp/cudalens-tune.db "$OUT/res/history_2.db" 2>/dev/null
tar -C "$OUT" -czf "$OUT/tune_results_2.tgz" res
