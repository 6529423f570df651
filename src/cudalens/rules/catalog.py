"""The catalog of the guide's recommendations, by id (our rule ids).

One entry per item of GUIDE_CATALOG.md: id, a short title in our words, the guide section, and the
guide's priority ("H", "M", "ML", "L", or "-" where the guide states none). Rule ids in the registry
must be catalog ids; tests check both directions of that link and compare this table with the
catalog file when it is present.
"""

from __future__ import annotations

from dataclasses import dataclass

from cudalens.findings import Priority


@dataclass(frozen=True)
class CatalogItem:
    id: str
    title: str
    section: str
    guide_priority: str  # "H" | "M" | "ML" | "L" | "-"

    @property
    def priority(self) -> Priority:
        return PRIORITY_OF[self.guide_priority]


PRIORITY_OF = {"H": Priority.HIGH, "M": Priority.MEDIUM, "ML": Priority.MEDIUM_LOW, "L": Priority.LOW,
               "-": Priority.INFO}

_ROWS = """
A1|Find the hotspots by profiling before parallelizing|BPG 3.1.1|H
A2|Strong-scaling bound (Amdahl)|BPG 3.1.3.1|H
A3|Weak-scaling bound (Gustafson)|BPG 3.1.3.2|-
A4|Offload where the work per transferred element pays for the transfer|BPG 2.2|-
A5|Keep data resident on the device between kernels|BPG 2.2|-
T1|Synchronize before reading host timers, or time with events|BPG 8.1|-
T2|Report effective bandwidth|BPG 8.2|H
T3|Theoretical bandwidth from memory clock and bus width|BPG 8.2.1|-
T4|Requested versus achieved throughput|BPG 8.2.3|-
T5|Check results against a reference, with a tolerance for floating point|BPG 6.1, 6.3|-
X1|Move as little data between host and device as possible|BPG 9.1, PG 5.3.1|H
X2|One large transfer instead of many small ones|BPG 9.1|-
X3|Page-locked host buffers for transfers|BPG 9.1.1|-
X4|Asynchronous copies on non-default streams to overlap with kernels|BPG 9.1.2|-
X5|Mapped (zero-copy) memory on integrated GPUs|BPG 9.1.3, PG 5.3.1|L
X6|Do not pin too much host memory|BPG 9.1.1|-
G1|Coalesced global memory accesses|BPG 9.2.1, PG 5.3.2|H
G2|Aligned sequential accesses|BPG 9.2.1.2-3|H
G3|Unit-stride accesses|BPG 9.2.1.4|H
G4|Naturally aligned words of 1, 2, 4, 8 or 16 bytes|PG 5.3.2|-
G5|Two-dimensional arrays with warp-multiple widths or pitched allocation|PG 5.3.2|-
G6|Wide loads and stores in memory-bound kernels|PG 5.3.2|-
G7|L2 persistence window for reused data|BPG 9.2.2|-
G8|Fewer global memory accesses; stage in shared memory|BPG 11.2|H
G9|Sub-allocators that keep wide types aligned|PG 5.3.2|-
SH1|Shared memory without bank conflicts|BPG 9.2.3.1, PG 5.3.2|-
SH2|Shared memory to avoid redundant global loads|BPG 9.2.3.2|M
SH3|Shared memory to coalesce strided global access|BPG 9.2.3.3|-
SH4|Asynchronous global-to-shared copies|BPG 9.2.3.4|-
SH5|Warp-level synchronization when one warp shares the data|BPG 9.2.3.2|-
SH6|Shared memory use as an occupancy limiter|BPG 10.4|-
L1|Avoid local memory (spills, dynamically indexed arrays)|BPG 9.2.4, PG 5.3.2|-
L2|Control register pressure|BPG 9.2.7.1, 10.1|-
L3|Register count at an occupancy step|PG 5.2.3, BPG 10.1.1|-
K1|Constant memory read by few distinct addresses per warp|BPG 9.2.6, PG 5.3.2|-
K2|Read-only/texture path for 2-D locality|BPG 9.2.5|-
K3|No texture reads of data the same kernel writes|BPG 9.2.5.1|-
E1|Enough occupancy to hide latency|BPG 10.1, PG 5.2.3|-
E2|Threads per block in multiples of 32|BPG 10.3, PG 5.2.3|M
E3|At least 64 threads per block|BPG 10.3|-
E4|More blocks than SMs|BPG 10.3|-
E5|Several resident blocks per SM for barrier-heavy kernels|BPG 10.3, PG 5.2.3|-
E6|Launch bounds on kernels|BPG 10.1|-
E7|Enough warps to cover the latency|PG 5.2.3, WE 4|-
E8|Independent kernels in separate streams|BPG 10.5, PG 5.2.2|-
E9|One context per device|BPG 10.6|-
E10|Launch configuration from device properties|PG 5.2.3.1|-
I1|Shifts and masks for power-of-two division and modulo|BPG 11.1.1, PG 5.4.1|L
I2|Signed loop counters|BPG 11.1.2|ML
I3|Reciprocal square root function|BPG 11.1.3, PG 5.4.1|-
I4|No accidental double precision|BPG 11.1.4, PG 5.4.1|L
I5|Roots instead of pow for fractional exponents|BPG 11.1.5|-
I6|Fast intrinsics where precision allows|BPG 11.1.6, PG 5.4|M
I7|One sincos for sine and cosine of one argument|BPG 11.1.6|-
I8|Multiplication for small integer powers|BPG 11.1.6|M
I9|exp2/exp10 for powers of 2 and 10|BPG 11.1.6|M
I10|sinpi/cospi for arguments multiplied by pi|BPG 11.1.6|-
I11|Trigonometric slow path for large arguments|PG 5.4.1|-
I12|Cost of integer division and modulo|PG 5.4.1|-
I13|Paired half-precision arithmetic|PG 5.4.1|-
I14|No 24-bit multiply intrinsics|PG 5.4.1|-
I15|Narrow integer arithmetic is widened to int|PG 5.4.1|-
I16|Precision-relaxing compiler flags|PG 5.4.1, BPG 19|-
I17|Restricted pointers|PG 5.4|-
I18|Few synchronization points|PG 5.4, 5.4.3|-
D1|Warp-uniform branch conditions|BPG 12.1, PG 5.4.2, WE 2|H
D2|Short branches left to predication; unrolling|BPG 12.2|L
D3|Warp reconvergence before warp-synchronous code|BPG 12.1|-
M1|No allocation in hot loops|BPG 9.3, PG 5.5|-
M2|Do not allocate all device memory|PG 5.5|-
M3|Prefetch and advise managed memory|PG 5.5|-
M4|NUMA balancing and memory binding|BPG 9.4|-
Y1|Check every CUDA return code and launch|BPG 16.2, 1.3|-
Y2|Check CUDA availability and fall back|BPG 16.1|-
Y3|Build for the target architectures and keep PTX|BPG 14.3, 16.3|-
Y4|Floating-point results depend on order and precision|BPG 6.3|-
Y5|Device selection and monitoring|BPG 17|-
"""


def _load() -> dict[str, CatalogItem]:
    items = {}
    for row in _ROWS.strip().splitlines():
        rid, title, section, pri = row.split("|")
        items[rid] = CatalogItem(rid, title, section, pri)
    return items


CATALOG: dict[str, CatalogItem] = _load()

#: Items that are not the guide's: cudalens checking its own predictions against the hardware.
VALIDATION: dict[str, CatalogItem] = {
    "V1": CatalogItem("V1", "A static prediction the hardware counters contradict", "cudalens validation", "-"),
}

#: Every id a rule may carry (the guide's catalog and the validation items), by id.
ITEMS: dict[str, CatalogItem] = {**CATALOG, **VALIDATION}
