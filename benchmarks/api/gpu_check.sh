#!/usr/bin/env bash
# The Python API and the one launch grammar on a GPU, in one go (run from the repository root):
#   bash benchmarks/api/gpu_check.sh "$OUT"
# Results go to $OUT/api/ (commit them under benchmarks/results/h100/api/):
#   pytest.txt       README doctests (the GPU blocks run here), tests/api, analyze --run with C++ names
#   run_cpp.json     analyze --run "vk::strided_copy<8> ..." --counters=run: the measurement and ncu's
#                    counters of a kernel named by its C++ name (the launch ncu profiles compiles it
#                    as bench does), exit status in run_cpp.rc
#   bench_cpp.json   bench --kernel 'vk::strided_copy<8>' on the same file, for comparison
set -u
out="${1:?usage: gpu_check.sh OUT}/api"
mkdir -p "$out"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi -L > "$out/machine.txt" 2>&1
src="$out/vk_strided_copy.cu"
cat > "$src" <<'CU'
namespace vk {
template <int S>
__global__ void strided_copy(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i * S] = in[i * S];
}
template __global__ void strided_copy<8>(float*, const float*);
}
CU
launch="--grid 4096 --block 256 --arg float32[8388608]:zeros@out --arg float32[8388608]"
timeout 400 python3 -m pytest -q tests/test_readme.py tests/api tests/analyze/test_run_cpp_names.py \
    > "$out/pytest.txt" 2>&1; echo "rc=$?" >> "$out/pytest.txt"
timeout 300 python3 -m cudalens analyze "$src" --run "vk::strided_copy<8> $launch" --counters=run \
    --format json -o "$out/run_cpp.json" 2> "$out/run_cpp.stderr"; echo $? > "$out/run_cpp.rc"
timeout 120 python3 -m cudalens bench "$src" --kernel 'vk::strided_copy<8>' $launch --no-save \
    --format json > "$out/bench_cpp.json" 2> "$out/bench_cpp.stderr"; echo $? > "$out/bench_cpp.rc"
python3 - "$out" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
lines = []
try:
    run = json.loads((out / "run_cpp.json").read_text())
    m = run.get("measurement") or {}
    lines.append(f"analyze --run: median {m.get('summary', {}).get('median')} s, counters from "
                 f"{run.get('counters_source')}, notes {run.get('evidence_notes')}")
except Exception as exc:  # noqa: BLE001 - a summary of what is there
    lines.append(f"analyze --run: no JSON ({exc})")
try:
    b = json.loads((out / "bench_cpp.json").read_text())
    lines.append(f"bench: median {b['summary']['median']} s")
except Exception as exc:  # noqa: BLE001
    lines.append(f"bench: no JSON ({exc})")
(out / "summary.txt").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
tail -3 "$out/pytest.txt"
