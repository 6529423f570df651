"""Validate cudalens.occupancy against the CUDA driver's own occupancy API on a real GPU.

Usage (from the repository root):

    PYTHONPATH=src python benchmarks/model/occupancy_gpu.py [OUTPUT_DIR]      # default: $OUT, else .

What it does:
1. reads the device's limits live (compute capability, SM count, shared memory per SM and per
   block, opt-in limit, reserved bytes per block, registers) through cuda.bindings;
2. compiles a few kernels of our own (few registers, many registers, static shared memory,
   dynamic shared memory, __launch_bounds__) with `nvcc -cubin -arch=sm_XY` at several
   -maxrregcount values, loads them with cuModuleLoadData / cuModuleGetFunction and reads their
   registers and static shared memory with cuFuncGetAttribute;
3. opts every kernel in to the largest dynamic shared memory
   (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = opt-in limit - static);
4. for every kernel x block size x dynamic shared-memory size compares
   `cudalens.occupancy.calculate` with cuOccupancyMaxActiveBlocksPerMultiprocessor, and per kernel x
   shared-memory size `max_potential_block_size` with cuOccupancyMaxPotentialBlockSize; a few
   freshly loaded copies of one kernel also get a preferred carveout;
5. writes OUTPUT_DIR/occupancy_validation.json (device, driver, CUDA version, date, command, every
   configuration with both values) and prints a summary table last.

It never changes clocks or power settings and finishes in well under two minutes.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNELS = {
    # name: (what it exercises, max threads per block from __launch_bounds__ or None)
    "light": ("few registers, no shared memory", None),
    "heavy": ("many live registers (48 accumulators)", None),
    "static_tile": ("12 KiB static shared memory + dynamic", None),
    "dynamic_only": ("dynamic shared memory only", None),
    "bounded": ("__launch_bounds__(256, 2)", 256),
}
MAXRREGCOUNTS = (32, 64, 128, 255)
BLOCK_SIZES = (32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024)
DYN_SMEM = (0, 1000, 4096, 16384, 32768, 49152, 65536, 100000)
CARVEOUTS = (0, 10, 25, 50, 75, 100)

KERNEL_SOURCE = r"""
extern "C" __global__ void light(const float* __restrict__ x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void heavy(const float* __restrict__ in, float* out, int n) {
    float acc[48];
#pragma unroll
    for (int i = 0; i < 48; ++i) acc[i] = in[(threadIdx.x + i * 97) % n];
    for (int it = 0; it < 8; ++it) {
#pragma unroll
        for (int i = 0; i < 48; ++i) acc[i] = acc[i] * acc[(i + 7) % 48] + in[(i * it + 3) % n];
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 48; ++i) s += acc[i] * (float)(i + 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void static_tile(const float* __restrict__ in, float* out, int n) {
    __shared__ float tile[3072];  // 12 KiB
    extern __shared__ float extra[];
    for (int i = threadIdx.x; i < 3072; i += blockDim.x) tile[i] = in[(blockIdx.x + i) % n];
    __syncthreads();
    float v = tile[(threadIdx.x * 7) % 3072] + extra[threadIdx.x % 4];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void dynamic_only(const float* __restrict__ in, float* out, int n) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = in[(blockIdx.x * blockDim.x + threadIdx.x) % n];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}

extern "C" __global__ void __launch_bounds__(256, 2)
bounded(const float* __restrict__ in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i % n];
#pragma unroll
    for (int k = 0; k < 16; ++k) v = v * 1.0001f + in[(i + k * 31) % n];
    out[i] = v;
}
"""


# ------------------------------------------------------------------ pure parts (unit-tested)


def arch_flag(major: int, minor: int) -> str:
    """nvcc's -arch value for a compute capability: (9, 0) -> 'sm_90', (10, 0) -> 'sm_100'."""
    return f"sm_{major}{minor}"


def smem_sizes(max_dynamic: int) -> list[int]:
    """Dynamic shared-memory sizes to try for a kernel that may use up to ``max_dynamic`` bytes."""
    sizes = {s for s in DYN_SMEM if s <= max_dynamic}
    sizes.add(max_dynamic)
    return sorted(sizes)


def block_sizes(kernel_max_threads: int) -> list[int]:
    """Block sizes to try, up to the kernel's own maximum."""
    return [b for b in BLOCK_SIZES if b <= kernel_max_threads]


def plan_configs(functions: list[dict]) -> list[dict]:
    """Every (function, block size, dynamic shared memory) to compare.

    Each function dict has: key, max_threads, max_dynamic (bytes), carveout (None or percent).
    """
    out = []
    for f in functions:
        for b in block_sizes(f["max_threads"]):
            for s in smem_sizes(f["max_dynamic"]):
                out.append({"function": f["key"], "block_size": b, "dynamic_smem": s})
    return out


def summarize(records: list[dict]) -> dict[str, dict[str, int]]:
    """Agreement per group: {group: {"total": n, "agree": m, "mismatch": n - m}}."""
    groups: dict[str, dict[str, int]] = {}
    for r in records:
        g = groups.setdefault(r["group"], {"total": 0, "agree": 0, "mismatch": 0})
        g["total"] += 1
        if r["agree"]:
            g["agree"] += 1
        else:
            g["mismatch"] += 1
    return groups


def summary_table(groups: dict[str, dict[str, int]]) -> str:
    """The summary as a fixed-width text table."""
    lines = [f"{'comparison':<44} {'configs':>8} {'agree':>8} {'mismatch':>9}"]
    for name, g in groups.items():
        lines.append(f"{name:<44} {g['total']:>8} {g['agree']:>8} {g['mismatch']:>9}")
    total = sum(g["total"] for g in groups.values())
    agree = sum(g["agree"] for g in groups.values())
    lines.append(f"{'all':<44} {total:>8} {agree:>8} {total - agree:>9}")
    return "\n".join(lines)


def find_nvcc() -> str:
    """nvcc as cudalens finds it (compiled.toolchain: the pinned wheel first, then a system CUDA)."""
    from cudalens.compiled.toolchain import find_nvcc as _find

    found = _find()
    if found is None:
        raise SystemExit("nvcc not found (pip install nvidia-cuda-nvcc, or a CUDA toolkit)")
    return found


# ------------------------------------------------------------------ GPU parts


def _check(result, what: str):
    """Unpack a cuda.bindings result tuple; raise with the error name unless CUDA_SUCCESS."""
    from cuda.bindings import driver as cu

    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def _device_facts(cu, dev) -> dict:
    A = cu.CUdevice_attribute

    def attr(name: str) -> int:
        return int(_check(cu.cuDeviceGetAttribute(getattr(A, name), dev), f"cuDeviceGetAttribute {name}"))

    return {
        "major": attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
        "minor": attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"),
        "num_sms": attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
        "max_threads_per_block": attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
        "max_threads_per_sm": attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR"),
        "regs_per_block": attr("CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK"),
        "regs_per_sm": attr("CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR"),
        "warp_size": attr("CU_DEVICE_ATTRIBUTE_WARP_SIZE"),
        "smem_per_block": attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"),
        "smem_per_sm": attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        "smem_per_block_optin": attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        "reserved_smem_per_block": attr("CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK"),
        "max_blocks_per_sm": attr("CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR"),
    }


def _compile(nvcc: str, arch: str, maxrreg: int, workdir: Path) -> bytes:
    src = workdir / "occ_kernels.cu"
    src.write_text(KERNEL_SOURCE)
    out = workdir / f"occ_kernels_r{maxrreg}.cubin"
    cmd = [nvcc, f"-arch={arch}", "-cubin", f"-maxrregcount={maxrreg}", "-o", str(out), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed ({' '.join(cmd)}):\n{proc.stderr}")
    return out.read_bytes()


def _load(cu, image: bytes, name: str, optin: int, carveout: int | None) -> dict:
    F = cu.CUfunction_attribute
    module = _check(cu.cuModuleLoadData(image), "cuModuleLoadData")
    func = _check(cu.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction {name}")

    def fattr(a: str) -> int:
        return int(_check(cu.cuFuncGetAttribute(getattr(F, a), func), f"cuFuncGetAttribute {a}"))

    regs = fattr("CU_FUNC_ATTRIBUTE_NUM_REGS")
    static = fattr("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES")
    max_threads = fattr("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")
    max_dyn = max(optin - static, 0)
    _check(cu.cuFuncSetAttribute(func, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, max_dyn),
           "cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES")
    if carveout is not None:
        _check(cu.cuFuncSetAttribute(
            func, F.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carveout),
            "cuFuncSetAttribute PREFERRED_SHARED_MEMORY_CARVEOUT")
    read_back = fattr("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES")
    return {"module": module, "func": func, "registers": regs, "static_smem": static,
            "max_threads": max_threads, "max_dynamic": read_back, "carveout": carveout}


def _environment(cu, dev) -> dict:
    name = _check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName")
    name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
    drv = int(_check(cu.cuDriverGetVersion(), "cuDriverGetVersion"))
    driver_string = None
    try:
        import pynvml

        pynvml.nvmlInit()
        driver_string = pynvml.nvmlSystemGetDriverVersion()
        driver_string = driver_string.decode() if isinstance(driver_string, bytes) else driver_string
        pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - NVML is optional here
        pass
    nvcc = find_nvcc()
    nvcc_version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    try:
        from importlib.metadata import version

        bindings = version("cuda-bindings")
    except Exception:  # noqa: BLE001
        bindings = None
    return {
        "device": name,
        "driver_version": driver_string,
        "driver_cuda_version": f"{drv // 1000}.{(drv % 1000) // 10}",
        "nvcc": nvcc,
        "nvcc_version": nvcc_version.strip().splitlines()[-1] if nvcc_version else None,
        "cuda_bindings": bindings,
        "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([sys.executable, *sys.argv]),
    }


def main(argv: list[str]) -> int:
    out_dir = Path(argv[1] if len(argv) > 1 else os.environ.get("OUT", "."))
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    from cuda.bindings import driver as cu

    from cudalens.occupancy import calculate, device_from_properties, max_potential_block_size

    _check(cu.cuInit(0), "cuInit")
    dev = _check(cu.cuDeviceGet(0), "cuDeviceGet")
    ctx = _check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    env = _environment(cu, dev)
    facts = _device_facts(cu, dev)
    cc = f"{facts['major']}.{facts['minor']}"
    occ_dev = device_from_properties(
        cc, **{k: v for k, v in facts.items() if k not in ("major", "minor", "max_blocks_per_sm")})
    table_checks = {
        "max_blocks_per_sm (device vs table)": [facts["max_blocks_per_sm"], occ_dev.max_blocks_per_sm],
    }

    nvcc = find_nvcc()
    arch = arch_flag(facts["major"], facts["minor"])
    functions: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for maxrreg in MAXRREGCOUNTS:
            image = _compile(nvcc, arch, maxrreg, Path(tmp))
            for name in KERNELS:
                key = f"{name}@maxrreg{maxrreg}"
                functions[key] = _load(cu, image, name, facts["smem_per_block_optin"], None)
            if maxrreg == 64:  # carveout variants: fresh module copies of one kernel
                for carve in CARVEOUTS:
                    key = f"dynamic_only@maxrreg{maxrreg}@carveout{carve}"
                    functions[key] = _load(cu, image, "dynamic_only",
                                           facts["smem_per_block_optin"], carve)

    records: list[dict] = []
    plan = plan_configs([{"key": k, **v} for k, v in functions.items()])
    for cfg in plan:
        f = functions[cfg["function"]]
        driver_blocks = int(_check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            f["func"], cfg["block_size"], cfg["dynamic_smem"]),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
        ours = calculate(occ_dev, cfg["block_size"], f["registers"], cfg["dynamic_smem"],
                         static_shared_mem=f["static_smem"], max_dynamic_shared_mem=f["max_dynamic"],
                         carveout=f["carveout"])
        group = ("active blocks, carveout set" if f["carveout"] is not None
                 else "active blocks per SM")
        records.append({
            "group": group, **cfg, "registers": f["registers"], "static_smem": f["static_smem"],
            "carveout": f["carveout"], "driver": driver_blocks, "cudalens": ours.active_blocks_per_sm,
            "limiters": sorted(ours.limiters), "agree": driver_blocks == ours.active_blocks_per_sm,
        })
    for key, f in functions.items():
        for s in smem_sizes(f["max_dynamic"]):
            grid, block = _check(cu.cuOccupancyMaxPotentialBlockSize(f["func"], None, s, 0),
                                 "cuOccupancyMaxPotentialBlockSize")
            ours = max_potential_block_size(
                occ_dev, f["registers"], s, static_shared_mem=f["static_smem"],
                max_dynamic_shared_mem=f["max_dynamic"], kernel_max_threads=f["max_threads"],
                carveout=f["carveout"])
            records.append({
                "group": "max potential block size (grid, block)", "function": key,
                "dynamic_smem": s, "registers": f["registers"], "static_smem": f["static_smem"],
                "carveout": f["carveout"], "driver": [int(grid), int(block)],
                "cudalens": [ours.min_grid_size, ours.block_size],
                "agree": (int(grid), int(block)) == tuple(ours),
            })

    groups = summarize(records)
    result = {
        **env,
        "compute_capability": cc,
        "device_limits_live": facts,
        "table_checks": table_checks,
        "kernels": {k: {kk: vv for kk, vv in v.items() if kk not in ("module", "func")}
                    for k, v in functions.items()},
        "summary": groups,
        "agreement": {"agree": sum(g["agree"] for g in groups.values()),
                      "total": sum(g["total"] for g in groups.values())},
        "elapsed_s": round(time.perf_counter() - started, 3),
        "configurations": records,
    }
    path = out_dir / "occupancy_validation.json"
    path.write_text(json.dumps(result, indent=1))
    for f in functions.values():
        _check(cu.cuModuleUnload(f["module"]), "cuModuleUnload")
    _check(cu.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")

    regs = sorted({(k, v["registers"], v["static_smem"]) for k, v in functions.items()})
    print(f"{env['device']} (CC {cc}, {facts['num_sms']} SMs), driver {env['driver_version']}, "
          f"CUDA {env['driver_cuda_version']}; wrote {path}")
    print("kernels (registers/thread, static shared memory bytes): "
          + ", ".join(f"{k}={r}/{s}" for k, r, s in regs))
    print(summary_table(groups))
    return 0 if result["agreement"]["agree"] == result["agreement"]["total"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
