#!/bin/bash
# The H100 tuning benchmark (one device call): cudalens exhaustive, guided and optuna on
# examples/tune/gemm.cu (295 configurations), then kernel_tuner on the same space.
# usage (repository root, on the GPU machine): bash benchmarks/tune/h100.sh OUTDIR [kt-runs]
# needs the wheels in .whl (tree-sitter) and .tunewhl (optuna, kernel_tuner and their dependencies).
set -u
OUT=$1
KT_RUNS=${2:-1}
mkdir -p "$OUT/res"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .tunewhl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/res/nvidia_smi.csv"
date -u +%FT%TZ > "$OUT/res/date.txt"
# smoke: 2 configurations through the CLI, so a broken runner stops the call early
python3 -m cudalens tune examples/tune/gemm.cu --kernel 'gemm<BM,BN,BK,TM,TN>' --space BM=64 --space BN=64 \
  --space BK=8 --space TM=4,8 --space TN=4 --const M=512 --const N=512 --const K=512 --grid 'N/BN, M/BM' \
  --block '(BM/TM)*(BN/TN)' --arg int32=512 --arg int32=512 --arg int32=512 --arg float32=1 --arg 'float32[262144]' \
  --arg 'float32[262144]' --arg float32=0 --arg 'float32[262144]:zeros@out' --strategy exhaustive \
  --db /tmp/smoke.db --max-time 0.2 2>&1 | tee "$OUT/res/smoke.txt" || exit 1
grep -q "^best:" "$OUT/res/smoke.txt" || exit 1
timeout ${TUNE_TIMEOUT:-380} python3 benchmarks/tune/run_tune.py "$OUT/res" ${STRATEGIES:-exhaustive guided optuna} 2>&1 | tee "$OUT/res/log_cudalens.txt"
START=${START:-$SECONDS}
for i in $(seq 1 "$KT_RUNS"); do
  LEFT=$(( ${BUDGET_S:-450} - SECONDS ))
  [ "$LEFT" -gt 60 ] || { echo "kernel_tuner run $i skipped: ${LEFT} s left" | tee -a "$OUT/res/log_kernel_tuner.txt"; break; }
  timeout "$LEFT" python3 benchmarks/tune/kernel_tuner_gemm.py "$OUT/res" "_run$i" 2>&1 | tail -20 | tee -a "$OUT/res/log_kernel_tuner.txt"
done
cp /tmp/cudalens-tune.db "$OUT/res/history.db" 2>/dev/null
tar -C "$OUT" -czf "$OUT/tune_results.tgz" res
