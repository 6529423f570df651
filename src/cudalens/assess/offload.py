"""Is it worth moving this operation to the GPU? (catalog A4; BPG 2.2)

The guide's argument: data must cross the host-device link (PCIe) before and after a kernel, so
the GPU only pays off when the work done per transferred element is large enough. Adding two
n x n matrices moves 3n^2 elements for n^2 additions: the work per element is constant, and at
PCIe speeds the transfers alone take longer than the host needs for the whole sum. Multiplying
them moves the same 3n^2 elements for about n^3 multiply-adds: the work per element grows with
n, so above some size the GPU wins however slow the link.

The model, with every rate a throughput the user can override:

* host time   = ops(n) / host_rate
* device time = ops(n) / device_rate + elements(n) * bytes_per_element / link_rate + overhead

``ops`` and ``elements`` are formulas in n (:data:`FORMULA`, the safe grammar of :mod:`cudalens.expressions` with the one variable n). ``elements`` counts
everything that crosses the link, both directions, each byte once (no overlap of copy and
compute: an upper bound on the device time, which is what a decision to offload should use).
The **crossover** is the smallest whole n for which the device time is strictly lower.

Link rate defaults to the theoretical per-direction throughput of a PCIe link,
``lanes * GT/s * encoding efficiency / 8`` (gen 4 x16 ~ 31.5 GB/s); pass a measured figure when
you have one (``cudalens`` measures it elsewhere; the guide's bandwidthTest does too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cudalens.errors import InputError
from cudalens.expressions import Expr, Function, Grammar

# Per lane: transfer rate (GT/s) and line-code efficiency. Gen 1-2 use 8b/10b, gen 3-5
# 128b/130b, gen 6 FLIT mode (242 payload bytes per 256-byte flit, PAM4 signalling).
PCIE_GENERATIONS: dict[int, tuple[float, float]] = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}
PCIE_WIDTHS = (1, 2, 4, 8, 16)
DEFAULT_PCIE_GEN = 4
DEFAULT_PCIE_LANES = 16

# Documented defaults, meant to be overridden with figures for the machines at hand:
# host: a few CPU cores with SIMD fused multiply-add, sustained on real code (100 GFLOP/s);
# device: sustained FP32 throughput of a current data-centre GPU on a good kernel (20 TFLOP/s).
DEFAULT_HOST_OPS_PER_S = 100e9
DEFAULT_DEVICE_OPS_PER_S = 20e12

DEFAULT_N_MAX = 2**30  # largest problem size the crossover search considers


def pcie_bytes_per_s(gen: int = DEFAULT_PCIE_GEN, lanes: int = DEFAULT_PCIE_LANES) -> float:
    """Theoretical per-direction PCIe throughput in bytes/s (GB here = 10^9 bytes)."""
    if gen not in PCIE_GENERATIONS:
        raise InputError(f"unknown PCIe generation {gen!r} (choose from {sorted(PCIE_GENERATIONS)})")
    if lanes not in PCIE_WIDTHS:
        raise InputError(f"PCIe link width must be one of {PCIE_WIDTHS} lanes, got {lanes!r}")
    gts, efficiency = PCIE_GENERATIONS[gen]
    return lanes * gts * 1e9 * efficiency / 8.0


FORMULA = Grammar(
    functions={"log2": Function(math.log2), "log": Function(math.log), "sqrt": Function(math.sqrt)},
    names=frozenset({"n"}), summary="only numbers, n, + - * / **, parentheses, log2/log/sqrt",
    example="; write a formula in n such as 'n**3'",
)


def parse(text: str) -> Expr:
    """A formula in n (``"3*n**2"``, ``"n*log2(n)"``), parsed safely; InputError naming what is not allowed."""
    return FORMULA.parse(text)


@dataclass(frozen=True)
class OffloadModel:
    """One operation and the machine it might be offloaded on. Rates in ops/s and bytes/s."""

    ops: Expr  # operations as a function of n
    elements: Expr  # elements transferred (both directions) as a function of n
    bytes_per_element: float
    host_ops_per_s: float = DEFAULT_HOST_OPS_PER_S
    device_ops_per_s: float = DEFAULT_DEVICE_OPS_PER_S
    link_bytes_per_s: float = 0.0  # 0 means the default PCIe link (gen 4 x16)
    overhead_s: float = 0.0  # fixed cost per offload: launch, allocation, synchronization

    def __post_init__(self) -> None:
        if self.link_bytes_per_s == 0.0:
            object.__setattr__(self, "link_bytes_per_s", pcie_bytes_per_s())
        for name in ("bytes_per_element", "host_ops_per_s", "device_ops_per_s", "link_bytes_per_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InputError(f"{name.replace('_', ' ')} must be a positive number, got {value!r}")
        if not (math.isfinite(self.overhead_s) and self.overhead_s >= 0):
            raise InputError(f"overhead must be a non-negative number of seconds, got {self.overhead_s!r}")

    @classmethod
    def from_text(cls, ops: str, elements: str, bytes_per_element: float, **rates: float) -> "OffloadModel":
        """Build a model from formula strings (parsed safely)."""
        return cls(parse(ops), parse(elements), bytes_per_element, **rates)

    def point(self, n: float) -> "OffloadPoint":
        """Host and device times at problem size ``n``."""
        ops = self.ops.value({"n": n})
        elements = self.elements.value({"n": n})
        if ops < 0:
            raise InputError(f"ops expression {self.ops.text!r} is negative at n = {n:g}")
        if elements < 0:
            raise InputError(f"elements expression {self.elements.text!r} is negative at n = {n:g}")
        transfer_bytes = elements * self.bytes_per_element
        host_s = ops / self.host_ops_per_s
        compute_s = ops / self.device_ops_per_s
        transfer_s = transfer_bytes / self.link_bytes_per_s
        return OffloadPoint(
            n=n,
            ops=ops,
            transfer_bytes=transfer_bytes,
            host_s=host_s,
            device_compute_s=compute_s,
            transfer_s=transfer_s,
            device_total_s=compute_s + transfer_s + self.overhead_s,
        )

    @property
    def required_ops_per_byte(self) -> float:
        """Work per transferred byte above which the device wins (ignoring the fixed overhead).

        From ops/host > ops/device + bytes/link: ops/bytes > 1 / (link * (1/host - 1/device)).
        ``math.inf`` when the device is not faster than the host at all.
        """
        gain_per_op = 1.0 / self.host_ops_per_s - 1.0 / self.device_ops_per_s
        if gain_per_op <= 0:
            return math.inf
        return 1.0 / (self.link_bytes_per_s * gain_per_op)


@dataclass(frozen=True)
class OffloadPoint:
    """Times at one problem size; seconds, ops, bytes."""

    n: float
    ops: float
    transfer_bytes: float
    host_s: float
    device_compute_s: float
    transfer_s: float
    device_total_s: float

    @property
    def device_wins(self) -> bool:
        return self.device_total_s < self.host_s

    @property
    def ops_per_byte(self) -> float:
        return math.inf if self.transfer_bytes == 0 else self.ops / self.transfer_bytes

    @property
    def speedup(self) -> float:
        """Host time / device time (x); above 1 the GPU wins."""
        return math.inf if self.device_total_s == 0 else self.host_s / self.device_total_s

    def to_dict(self) -> dict:
        return {
            "n": self.n,
            "ops": self.ops,
            "transfer_bytes": self.transfer_bytes,
            "host_s": self.host_s,
            "device_compute_s": self.device_compute_s,
            "transfer_s": self.transfer_s,
            "device_total_s": self.device_total_s,
            "ops_per_byte": None if math.isinf(self.ops_per_byte) else self.ops_per_byte,
            "speedup_x": None if math.isinf(self.speedup) else self.speedup,
            "winner": "device" if self.device_wins else "host",
        }


@dataclass(frozen=True)
class Crossover:
    """Where the device starts to win. ``n`` is None when it never does up to ``n_max``."""

    n: int | None
    n_max: int
    wins_at_n_max: bool  # False with a crossover means the advantage is lost again further on

    def to_dict(self) -> dict:
        return {"n": self.n, "never": self.n is None, "n_max": self.n_max, "wins_at_n_max": self.wins_at_n_max}


def crossover(model: OffloadModel, n_min: int = 1, n_max: int = DEFAULT_N_MAX) -> Crossover:
    """Smallest whole n in [n_min, n_max] where the device wins.

    Scans n_min, 2*n_min, 4*n_min, ... (and n_max), then bisects between the last size where the
    host won and the first where the device did. Exact for models where the device's advantage
    only grows with n (every polynomial ops/elements pair with ops of higher degree); for others
    it is the first win the scan finds.
    """
    n_min = int(n_min)
    n_max = int(n_max)
    if n_min < 1 or n_max < n_min:
        raise InputError(f"search range needs 1 <= n_min <= n_max, got {n_min}..{n_max}")
    grid = []
    k = n_min
    while k < n_max:
        grid.append(k)
        k *= 2
    grid.append(n_max)
    wins_at_max = model.point(n_max).device_wins
    previous = None
    for k in grid:
        if model.point(k).device_wins:
            if previous is None:
                return Crossover(k, n_max, wins_at_max)
            lo, hi = previous, k  # host wins at lo, device at hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if model.point(mid).device_wins:
                    hi = mid
                else:
                    lo = mid
            return Crossover(hi, n_max, wins_at_max)
        previous = k
    return Crossover(None, n_max, wins_at_max)


def default_sizes() -> list[int]:
    """Problem sizes for the table: 8, 16, ..., 32768 (powers of two)."""
    return [2**e for e in range(3, 16)]
