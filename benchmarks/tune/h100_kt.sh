#!/bin/bash
# kernel_tuner on the H100, beside our H100 tuning (one device call, session 4):
#  1. kernel_tuner 1.5.0 over the space of gemm_space.py (295 configurations), brute force, twice in
#     one process (a new session and cache file each run; CuPy's in-process module memo spares the
#     second run NVRTC, its measurements are new);
#  2. a cProfile of a 16-configuration local cudalens sweep (profile_local.py): where a
#     configuration's time goes besides sampling.
# usage (repository root, on the GPU machine): bash benchmarks/tune/h100_kt.sh OUTDIR
# needs .whl (tree-sitter) and .tunewhl (kernel_tuner and its missing dependencies).
set -u
OUT=$1
R=/tmp/kt-res/res
mkdir -p "$R"
pack() { tar -C /tmp/kt-res -czf "$OUT/tune_h100_kt.tgz" res; }
W=".whl/*.whl $(ls .tunewhl/*.whl | grep -E 'kernel_tuner|python_constraint2|jsonschema|referencing|rpds|xmltodict' | tr '\n' ' ')"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $W || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 CUPY_CACHE_DIR=/tmp/cupy-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$R/nvidia_smi_kt.csv"
{ date -u +%FT%TZ; nproc; python3 -c "import cupy, kernel_tuner; print('cupy', cupy.__version__)"; } > "$R/date_kt.txt" 2>&1
timeout ${KT_TIMEOUT:-170} python3 benchmarks/tune/kernel_tuner_gemm.py "$R" _h100 --runs=2 2>&1 | tee "$R/log_kernel_tuner_h100.txt"
pack
timeout ${PROF_TIMEOUT:-30} python3 benchmarks/tune/profile_local.py "$R" 2>&1 | tail -40
rm -f "$R/profile.db"
pack
