"""Which device-to-device copy kernel reaches the DRAM ceiling on this GPU? (one-off experiment)

Times several copy kernels side by side with cuMemcpyDtoDAsync on the same 1 GiB buffers, median
of 30 launches each, and writes copy_variants.json. Used to choose cudalens' own copy kernel
(measure.bandwidth.COPY_KERNEL_SOURCE), the measured DRAM ceiling of the benchmark harness.
Usage: python3 benchmarks/measure/copy_variants.py OUTDIR
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import sys

from cudalens.compiled.runtime_compile import compile_kernel
from cudalens.hardware import cuda_driver as cu

SRC = r"""
extern "C" __global__ void persist1(const int4* __restrict__ s, int4* __restrict__ d, unsigned long long n) {
    for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < n;
         k += (unsigned long long)gridDim.x * blockDim.x) d[k] = s[k];
}
extern "C" __global__ void persist4(const int4* __restrict__ s, int4* __restrict__ d, unsigned long long n) {
    const unsigned long long st = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; k + 3 * st < n; k += 4 * st) {
        const int4 a = s[k], b = s[k + st], c = s[k + 2 * st], e = s[k + 3 * st];
        d[k] = a; d[k + st] = b; d[k + 2 * st] = c; d[k + 3 * st] = e;
    }
    for (; k < n; k += st) d[k] = s[k];
}
extern "C" __global__ void flat1(const int4* __restrict__ s, int4* __restrict__ d, unsigned long long n) {
    const unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (k < n) d[k] = s[k];
}
extern "C" __global__ void flat4(const int4* __restrict__ s, int4* __restrict__ d, unsigned long long n) {
    const unsigned long long base = blockIdx.x * (unsigned long long)blockDim.x * 4 + threadIdx.x;
    int4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) { const unsigned long long k = base + j * blockDim.x; if (k < n) v[j] = s[k]; }
#pragma unroll
    for (int j = 0; j < 4; ++j) { const unsigned long long k = base + j * blockDim.x; if (k < n) d[k] = v[j]; }
}
extern "C" __global__ void flat2(const int4* __restrict__ s, int4* __restrict__ d, unsigned long long n) {
    const unsigned long long base = blockIdx.x * (unsigned long long)blockDim.x * 2 + threadIdx.x;
    int4 v[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) { const unsigned long long k = base + j * blockDim.x; if (k < n) v[j] = s[k]; }
#pragma unroll
    for (int j = 0; j < 2; ++j) { const unsigned long long k = base + j * blockDim.x; if (k < n) d[k] = v[j]; }
}
"""


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")
    os.makedirs(out, exist_ok=True)
    nbytes = 1 << 30
    n = nbytes // 16
    results: dict[str, dict] = {}
    with cu.device_context(0) as ctx:
        stream = cu.Stream()
        src, dst = cu.DeviceBuffer(nbytes), cu.DeviceBuffer(nbytes)
        drv = cu._driver()
        cu.check(drv.cuMemsetD8Async(src.handle, 7, nbytes, stream.handle), "memset")
        sms = ctx.attribute("MULTIPROCESSOR_COUNT")
        start, stop = cu.Event(), cu.Event()

        def timed(launch) -> list[float]:
            for _ in range(3):
                launch()
            times = []
            for _ in range(30):
                start.record(stream)
                launch()
                stop.record(stream)
                times.append(cu.elapsed_ms(start, stop))
            return times

        t = timed(lambda: cu.check(drv.cuMemcpyDtoDAsync(dst.handle, src.handle, nbytes, stream.handle), "memcpy"))
        results["cuMemcpyDtoDAsync"] = {"median_ms": statistics.median(t)}
        for name in ("persist1", "persist4", "flat1", "flat2", "flat4"):
            k = compile_kernel(SRC, name, ctx.cc, options=())
            for block in (256, 512):
                if name.startswith("persist"):
                    for waves in (1, 2, 4):
                        grid = cu.max_active_blocks_per_sm(k, block) * sms * waves
                        key = f"{name} block={block} grid={grid} ({waves} wave)"
                        t = timed(lambda k=k, grid=grid, block=block: cu.launch(k, grid, block, [(src.ptr, "u8"), (dst.ptr, "u8"), (n, "u8")], stream))
                        results[key] = {"median_ms": statistics.median(t)}
                else:
                    per = {"flat1": 1, "flat2": 2, "flat4": 4}[name]
                    grid = -(-n // (block * per))
                    key = f"{name} block={block} grid={grid}"
                    t = timed(lambda k=k, grid=grid, block=block: cu.launch(k, grid, block, [(src.ptr, "u8"), (dst.ptr, "u8"), (n, "u8")], stream))
                    results[key] = {"median_ms": statistics.median(t)}
    for r in results.values():
        r["gb_per_s"] = 2 * nbytes / (r["median_ms"] * 1e-3) / 1e9
    best_memcpy = results["cuMemcpyDtoDAsync"]["gb_per_s"]
    for r in results.values():
        r["ratio_to_memcpy"] = r["gb_per_s"] / best_memcpy
    record = {"script": "benchmarks/measure/copy_variants.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "bytes_copied": nbytes, "bytes_counted": 2 * nbytes, "results": results}
    with open(os.path.join(out, "copy_variants.json"), "w") as fh:
        json.dump(record, fh, indent=2)
    for key, r in sorted(results.items(), key=lambda kv: -kv[1]["gb_per_s"]):
        print(f"{key:50s} {r['gb_per_s']:8.1f} GB/s  {r['ratio_to_memcpy']:.3f} of memcpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
