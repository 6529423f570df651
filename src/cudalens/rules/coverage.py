"""Catalog items without a rule detector: where else cudalens establishes them, or why no tool can
detect them from code and what the user can do instead.

Every GUIDE_CATALOG item is either a registered rule (:mod:`cudalens.rules.registry`) or has an
entry here; ``cudalens rules`` shows which, and ``cudalens rules ID`` prints the entry as the
item's page. ``kind`` is "elsewhere" (another command establishes it: a measurement, a trace, a
lab) or "not detectable" (no evidence layer can decide it from the code; the page says what to do).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Coverage:
    kind: str  # "elsewhere" | "not detectable"
    where: str  # the command (or "-")
    page: str  # why, and what the user can do


_E, _N = "elsewhere", "not detectable"

COVERAGE: dict[str, Coverage] = {
    "A2": Coverage(_E, "cudalens speedup / assess", "Amdahl's bound needs the parallel share P of a run: "
                   "`cudalens speedup` computes S = 1/((1-P)+P/N) and its limit, `cudalens assess` takes P from a "
                   "profile of the program's hotspots."),
    "A3": Coverage(_E, "cudalens speedup", "Gustafson's bound needs the parallel share of a run: `cudalens "
                   "speedup` prints S = N + (1-P)(1-N) beside Amdahl's."),
    "A4": Coverage(_E, "cudalens offload", "Whether offloading pays depends on operations per element and the "
                   "PCIe rate: `cudalens offload` models it (matrix add O(1) vs multiply O(N))."),
    "T2": Coverage(_E, "cudalens bench", "Effective bandwidth is a measurement: `cudalens bench` reports "
                   "(bytes read + written) / 10^9 / seconds for every timed kernel (--bytes-read/--bytes-written)."),
    "T3": Coverage(_E, "cudalens device", "The theoretical bandwidth comes from the device (memory clock x bus width "
                   "x 2, 10^9 bytes): `cudalens device` prints it next to the measured `cudalens bandwidth`."),
    "T4": Coverage(_E, "cudalens analyze --counters", "Requested versus achieved throughput needs counters: "
                   "`cudalens analyze FILE --run ... --counters` derives gld/gst efficiency and checks the "
                   "model's sectors per request against them."),
    "T5": Coverage(_N, "-", "Whether a program compares its results with a reference cannot be read from kernel code "
                   "with confidence (any comparison could be one). Keep a CPU or trusted reference and compare with "
                   "a tolerance (`cudalens bench` re-checks outputs after timing to catch kernels that change them)."),
    "X5": Coverage(_E, "cudalens lab run zero-copy", "Zero-copy pays only on integrated GPUs: `cudalens device` "
                   "reports the integrated flag and lab `zero-copy` measures mapped against explicit copies."),
    "X6": Coverage(_N, "-", "How much pinned memory is too much depends on the machine's memory at run time, not on "
                   "the code. Keep pinned buffers to what transfers need; `cudalens profile` shows the copies."),
    "G7": Coverage(_E, "cudalens lab run l2-persistence", "Which data is reused enough to pin in L2 is a property "
                   "of the access stream at run time; lab `l2-persistence` measures the window and hit ratio on "
                   "your GPU. Static reuse of one address in a loop is G8."),
    "G9": Coverage(_N, "-", "A sub-allocator's alignment depends on offsets computed at run time; the source rarely "
                   "shows them. Round every sub-allocation up to 16 bytes (or alignof of the widest type); G4 "
                   "flags the split narrow loads misalignment causes in the compiled code."),
    "SH4": Coverage(_E, "cudalens lab run async-copy", "Whether cp.async helps depends on the element size and the "
                    "pipeline depth: lab `async-copy` measures synchronous against asynchronous staging; SH3 and "
                    "SH2 point at the staging loops."),
    "K2": Coverage(_N, "-", "Texture/read-only paths pay for 2-D locality, which depends on the access pattern of "
                   "neighbouring threads across rows; the guide gives it as information. Try `const __restrict__` "
                   "(read-only cache) and time both with `cudalens bench`."),
    "K3": Coverage(_N, "-", "Reading through a texture what the same kernel writes is a correctness hazard that "
                   "needs the texture's bound array, known only at run time. Do not bind a kernel's output to a "
                   "texture it reads; compare results against a reference."),
    "E5": Coverage(_E, "cudalens occupancy", "Blocks per SM come from the occupancy calculator: `cudalens occupancy` "
                   "(and E1 in `cudalens analyze` with the compiled layer) shows when one block per SM leaves the "
                   "SM idle at each `__syncthreads()` (I18 counts barriers in loops)."),
    "E7": Coverage(_E, "cudalens occupancy", "Warps needed to hide latency (Little's law) are computed by "
                   "`cudalens occupancy` from the latency and issue rates; E1 reports the occupancy limiter."),
    "E9": Coverage(_N, "-", "Several contexts on one GPU arise from driver-API code and libraries at run time. Use "
                   "the primary context (cudaSetDevice / cuDevicePrimaryCtxRetain) instead of cuCtxCreate."),
    "E10": Coverage(_N, "-", "A hard-coded grid size tied to one device cannot be told apart from a problem size in "
                    "the source. Derive grids from cudaDeviceProp::multiProcessorCount or the occupancy API "
                    "(cudaOccupancyMaxActiveBlocksPerMultiprocessor); E4 flags grids smaller than the SM count."),
    "I11": Coverage(_E, "cudalens lab run math-intrinsics", "Whether arguments reach the trig slow path depends on "
                    "their values at run time; L1 names the slow path's stack frame in the compiled code and lab "
                    "`math-intrinsics` measures the cost of large arguments."),
    "I15": Coverage(_N, "-", "Narrow integer arithmetic is widened to 32 bits by the compiler at no visible cost in "
                    "most kernels; the guide states it as information. Keep char/short for storage, compute in int."),
    "D2": Coverage(_E, "cudalens analyze (compiled)", "Whether the compiler predicated a short branch is in the SASS: "
                   "`cudalens analyze` with the compiled layer marks each branch `predicated`, and D1 is judged "
                   "against it."),
    "D3": Coverage(_N, "-", "Reconvergence before warp-synchronous code depends on the masks of shuffle/vote calls "
                   "and the branches around them. Use the *_sync intrinsics with the mask of the lanes that "
                   "participate and call __syncwarp() after divergent code."),
    "M4": Coverage(_N, "-", "Automatic NUMA balancing is a setting of the host, not of the code. Check "
                   "/proc/sys/kernel/numa_balancing (0: off) and bind memory and CPU to the GPU's node with numactl "
                   "when measuring."),
    "Y4": Coverage(_E, "cudalens bench", "Floating-point results depend on order and FMA contraction: `cudalens bench` "
                   "compares outputs with a stated tolerance; compare with a reference the same way."),
    "Y5": Coverage(_E, "cudalens device", "Device selection and monitoring are run-time facts: `cudalens device` "
                   "prints clocks, ECC, power and throttle state (NVML), and measurements record them."),
}
