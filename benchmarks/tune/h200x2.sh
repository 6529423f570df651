#!/bin/bash
# Two GPUs (nvidia-h200-x2), one device call:
#  1. GPU 0: the exhaustive sweep of examples/tune/gemm.cu on one GPU (local backend), then the
#     guided search;  GPU 1 at the same time: kernel_tuner over the same space (same machine);
#  2. both GPUs: the same exhaustive sweep through Ray (a local cluster).
# The two exhaustive sweeps start from an empty compile cache and a new database each, and sample
# each configuration for at least TUNE_MIN_TIME seconds (0.5: a measurement-bound sweep).
# usage (repository root, on the GPU machine): bash benchmarks/tune/h200x2.sh OUTDIR
# .tuneray holds Ray 2.60.0 (its wheel, without the Java jars and the dashboard's source maps, as an
# xz tarball: the wheel alone is 79 MB, over the 64 MiB a call can carry), jsonschema and friends,
# kernel_tuner with its missing dependencies; .whl the tree-sitter wheels.
set -u
OUT=$1
R=/tmp/tune-res/res  # outside OUT: a tarball of it goes to OUT after each phase (a cut call keeps what ran)
mkdir -p "$R"
pack() { tar -C /tmp/tune-res -czf "$OUT/tune_h200x2.tgz" res; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .tuneray/*.whl || exit 1
tar -C /tmp/site -xJf .tuneray/ray_slim.tar.xz || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$R/nvidia_smi.csv"
{ date -u +%FT%TZ; nproc; } > "$R/date.txt"
python3 -c "import ray; print('ray', ray.__version__)" 2>&1 | tee "$R/log.txt" || exit 1
CUDA_VISIBLE_DEVICES=1 timeout ${KT_TIMEOUT:-230} python3 benchmarks/tune/kernel_tuner_gemm.py "$R" _h200 \
  > "$R/log_kernel_tuner.txt" 2>&1 &
KT=$!
CUDA_VISIBLE_DEVICES=0 TUNE_MIN_TIME=${TUNE_MIN_TIME:-0.5} TUNE_DB=/tmp/one.db TUNE_CACHE=/tmp/cache-one \
  python3 benchmarks/tune/run_tune.py "$R" --tag=_1gpu exhaustive 2>&1 | tee -a "$R/log.txt"
CUDA_VISIBLE_DEVICES=0 TUNE_DB=/tmp/guided.db TUNE_CACHE=/tmp/cache-one \
  python3 benchmarks/tune/run_tune.py "$R" --tag=_h200 guided 2>&1 | tee -a "$R/log.txt"
pack
wait $KT
echo "kernel_tuner exit $?" | tee -a "$R/log.txt"
tail -3 "$R/log_kernel_tuner.txt" | tee -a "$R/log.txt"
pack
TUNE_MIN_TIME=${TUNE_MIN_TIME:-0.5} TUNE_DB=/tmp/ray.db TUNE_CACHE=/tmp/cache-ray \
  timeout ${RAY_TIMEOUT:-150} python3 benchmarks/tune/run_tune.py "$R" --ray --tag=_2gpu exhaustive 2>&1 | tee -a "$R/log.txt"
pack
