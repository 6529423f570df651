#!/bin/bash
# Two GPUs (nvidia-h200-x2), one device call: the exhaustive sweep of examples/tune/gemm.cu on one GPU
# (local backend) and through Ray on both GPUs, each from an empty compile cache and a new database;
# then, with the time left, kernel_tuner on GPU 0 beside cudalens' guided search on GPU 1.
# usage (repository root, on the GPU machine): bash benchmarks/tune/h200x2.sh OUTDIR
# .tuneray holds Ray 2.60.0 (its wheel, without the Java jars and the dashboard's source maps, as an
# xz tarball: the wheel alone is 79 MB, over the 64 MiB a call can carry), jsonschema and friends,
# kernel_tuner with its missing dependencies; .whl the tree-sitter wheels.
set -u
OUT=$1
BUDGET=${BUDGET_S:-400}
R="$OUT/res"
mkdir -p "$R"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .tuneray/*.whl || exit 1
tar -C /tmp/site -xJf .tuneray/ray_slim.tar.xz || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$R/nvidia_smi.csv"
date -u +%FT%TZ > "$R/date.txt"; nproc >> "$R/date.txt"
python3 -c "import ray; print('ray', ray.__version__)" 2>&1 | tee "$R/log.txt" || exit 1
# 1) one GPU, no Ray
export TUNE_MIN_TIME=${TUNE_MIN_TIME:-0.25}  # a measurement-bound sweep: the part a second GPU can share
CUDA_VISIBLE_DEVICES=0 TUNE_DB=/tmp/one.db TUNE_CACHE=/tmp/cache-one \
  python3 benchmarks/tune/run_tune.py "$R" --tag=_1gpu exhaustive 2>&1 | tee -a "$R/log.txt"
# 2) both GPUs through Ray (a local cluster started by the run)
TUNE_DB=/tmp/ray.db TUNE_CACHE=/tmp/cache-ray \
  python3 benchmarks/tune/run_tune.py "$R" --ray --tag=_2gpu exhaustive 2>&1 | tee -a "$R/log.txt"
unset TUNE_MIN_TIME
# 3) same machine, side by side: kernel_tuner on GPU 0, cudalens guided on GPU 1
LEFT=$(( BUDGET - SECONDS ))
if [ "$LEFT" -gt 60 ]; then
  CUDA_VISIBLE_DEVICES=0 timeout "$LEFT" python3 benchmarks/tune/kernel_tuner_gemm.py "$R" _h200 > "$R/log_kernel_tuner.txt" 2>&1 &
  KT=$!
  CUDA_VISIBLE_DEVICES=1 TUNE_DB=/tmp/guided.db TUNE_CACHE=/tmp/cache-guided timeout "$LEFT" \
    python3 benchmarks/tune/run_tune.py "$R" --tag=_h200 guided 2>&1 | tee -a "$R/log.txt"
  wait $KT
  tail -5 "$R/log_kernel_tuner.txt" | tee -a "$R/log.txt"
fi
tar -C "$OUT" -czf "$OUT/tune_h200x2.tgz" res
