#!/bin/bash
# One GPU against two, the same code path (session 4; one device call on nvidia-h200-x2):
#  0. warm-up: the CLI on 2 configurations (nvcc, CUDA and the imports off the cold disk);
#  1. the exhaustive sweep through Ray with two GPU actors (a local cluster of its own);
#  2. the same sweep through Ray with one GPU actor (GPU 0 only, a local cluster of its own);
#  3. time permitting, the same sweep without Ray on GPU 0 (the local backend).
# Each sweep is its own process, starts from an empty compile cache and a new database, compiles on
# the CPUs while the GPU(s) measure (streaming), and its wall time includes starting its cluster.
# Sampling: at least TUNE_MIN_TIME seconds per configuration (cold, 1 % noise target, >= 10 samples).
# The two-GPU sweep runs first, so any first-run cost on this fresh machine falls on it, not on the
# one-GPU baselines.
# usage (repository root, on the GPU machine): bash benchmarks/tune/h200x2_ray.sh OUTDIR
# .tuneray holds Ray 2.60.0 (see h200x2.sh); .whl the tree-sitter wheels.
set -u
OUT=$1
BUDGET=${BUDGET_S:-385}
DAY=$(date -u +%F)  # results land in benchmarks/results/h200x2/tune/<date>/
R=/tmp/tune-res/$DAY
mkdir -p "$R"
pack() { tar -C /tmp/tune-res -czf "$OUT/tune_h200x2_$DAY.tgz" "$DAY"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  $(ls .tuneray/*.whl | grep -E 'jsonschema|referencing|rpds') || exit 1
tar -C /tmp/site -xJf .tuneray/ray_slim.tar.xz || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TUNE_MIN_TIME=${TUNE_MIN_TIME:-0.2}
L="$R/log.txt"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$R/nvidia_smi.csv"
{ date -u +%FT%TZ; nproc; echo "TUNE_MIN_TIME=$TUNE_MIN_TIME"; } > "$R/date.txt"
python3 -c "import ray; print('ray', ray.__version__)" 2>&1 | tee "$L" || exit 1
CUDA_VISIBLE_DEVICES=0 python3 -m cudalens tune examples/tune/gemm.cu --kernel 'gemm<BM,BN,BK,TM,TN>' --space BM=64 \
  --space BN=64 --space BK=8 --space TM=4,8 --space TN=4 --const M=512 --const N=512 --const K=512 --grid 'N/BN, M/BM' \
  --block '(BM/TM)*(BN/TN)' --arg int32=512 --arg int32=512 --arg int32=512 --arg float32=1 --arg 'float32[262144]' \
  --arg 'float32[262144]' --arg float32=0 --arg 'float32[262144]:zeros@out' --strategy exhaustive \
  --db /tmp/smoke.db --max-time 0.2 > "$R/smoke.txt" 2>&1 || { cat "$R/smoke.txt"; exit 1; }
echo "warm-up done at ${SECONDS}s" | tee -a "$L"
sweep() {  # tag, seconds allowed, run_tune.py arguments...
  local tag=$1 limit=$2
  shift 2
  TUNE_DB=/tmp/db$tag.db TUNE_CACHE=/tmp/cache$tag timeout "$limit" python3 benchmarks/tune/run_tune.py "$R" \
    --tag=$tag "$@" exhaustive 2>&1 | grep -v -E "WARNING|INFO" | tee -a "$L"
  nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >> "$R/nvidia_smi.csv"
  pack
}
sweep _2gpu 120 --ray
CUDA_VISIBLE_DEVICES=0 sweep _1gpu 190 --ray --ray-workers=1
LEFT=$(( BUDGET - SECONDS ))
if [ "$LEFT" -gt 120 ]; then
  CUDA_VISIBLE_DEVICES=0 sweep _local $(( LEFT - 5 ))
else
  echo "local one-GPU sweep skipped: ${LEFT} s left" | tee -a "$L"
fi
pack
