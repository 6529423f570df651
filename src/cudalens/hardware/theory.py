"""Theoretical bandwidths: device memory (BPG 8.2.1) and the PCIe link.

Both are pure arithmetic on numbers a device query returns, so they can be checked without a GPU.

Device memory (Best Practices Guide 8.2.1): the memory clock in Hz times the bus width in bytes
times 2 (the memory transfers on both clock edges, "double data rate"), divided by 10^9 for GB/s.
The guide's own example is the V100: 877 MHz x (4096 bit / 8) x 2 / 10^9 = 898 GB/s. The same
bytes divided by 1024^3 give GiB/s; comparing a measurement in one unit with a peak in the other
is a classic 7 % error, so both are carried and labelled.

Note: the memory clock that CUDA reports for HBM parts is already the clock at which the factor 2
applies (an H100 reports 2619 MHz on a 5120-bit bus: 2619e6 x 640 x 2 / 10^9 = 3352 GB/s).

PCIe: per lane the link carries ``GT/s`` transfers (bits) per second; the line code wastes part of
them (8b/10b on generations 1-2, 128b/130b on 3-5). Generation 6 uses FLIT mode with no line code;
its framing/FEC overhead is not counted here. Per direction:
``GT/s x 10^9 x encoding efficiency x lanes / 8 / 10^9`` GB/s. Packet headers (TLP/DLLP) cost a
further ~5-15 %, so real host<->device copies never reach this number.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction

from cudalens.errors import InputError

GB = 10**9
GIB = 1024**3


@dataclass(frozen=True)
class MemoryBandwidth:
    """Theoretical device-memory bandwidth from clock and bus width (BPG 8.2.1)."""

    memory_clock_hz: float
    bus_width_bits: int
    gb_per_s: float  # 10^9 bytes per second
    gib_per_s: float  # 1024^3 bytes per second
    formula: str

    def to_dict(self) -> dict:
        return asdict(self)


def memory_bandwidth(memory_clock_hz: float, bus_width_bits: int) -> MemoryBandwidth:
    """Peak DRAM bandwidth: clock (Hz) x bus width (bytes) x 2 (DDR).

    >>> round(memory_bandwidth(2619e6, 5120).gb_per_s)
    3352
    """
    if memory_clock_hz <= 0 or bus_width_bits <= 0:
        raise InputError(
            f"memory clock ({memory_clock_hz} Hz) and bus width ({bus_width_bits} bit) must be > 0"
        )
    bytes_per_s = memory_clock_hz * (bus_width_bits / 8) * 2
    gb = bytes_per_s / GB
    return MemoryBandwidth(
        memory_clock_hz=float(memory_clock_hz),
        bus_width_bits=int(bus_width_bits),
        gb_per_s=gb,
        gib_per_s=bytes_per_s / GIB,
        formula=(
            f"{memory_clock_hz / 1e6:g} MHz x 10^6 x ({bus_width_bits} bit / 8) B x 2 (DDR) / 10^9"
            f" = {gb:.1f} GB/s (divisor 10^9; / 1024^3 gives {bytes_per_s / GIB:.1f} GiB/s)"
        ),
    )


@dataclass(frozen=True)
class PcieGeneration:
    """Signalling rate and line code of one PCIe generation."""

    generation: int
    gt_per_s: float  # giga-transfers per second per lane (1 transfer = 1 bit on the wire)
    encoding: str  # e.g. "128b/130b"
    payload_bits: int  # the line code carries payload_bits of data in line_bits on the wire
    line_bits: int
    note: str = ""

    @property
    def efficiency(self) -> Fraction:
        return Fraction(self.payload_bits, self.line_bits)


PCIE_GENERATIONS: dict[int, PcieGeneration] = {
    1: PcieGeneration(1, 2.5, "8b/10b", 8, 10),
    2: PcieGeneration(2, 5.0, "8b/10b", 8, 10),
    3: PcieGeneration(3, 8.0, "128b/130b", 128, 130),
    4: PcieGeneration(4, 16.0, "128b/130b", 128, 130),
    5: PcieGeneration(5, 32.0, "128b/130b", 128, 130),
    6: PcieGeneration(
        6, 64.0, "none (FLIT mode, PAM4)", 1, 1,
        note="FLIT framing and FEC overhead (a few %) not counted",
    ),
}

PCIE_WIDTHS = (1, 2, 4, 8, 12, 16, 32)


@dataclass(frozen=True)
class PcieBandwidth:
    """Theoretical PCIe bandwidth of a link, per direction."""

    generation: int
    width: int  # lanes
    gt_per_s: float
    encoding: str
    gb_per_s: float  # per direction, 10^9 bytes per second
    formula: str
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def pcie_bandwidth(generation: int, width: int) -> PcieBandwidth:
    """Per-direction payload bandwidth of a PCIe link before packet overhead.

    >>> round(pcie_bandwidth(5, 16).gb_per_s, 2)
    63.02
    """
    gen = PCIE_GENERATIONS.get(int(generation))
    if gen is None:
        raise InputError(f"PCIe generation {generation!r} unknown (known: 1-6)")
    if int(width) not in PCIE_WIDTHS:
        raise InputError(f"PCIe width x{width} invalid (one of {', '.join(map(str, PCIE_WIDTHS))})")
    gb = gen.gt_per_s * float(gen.efficiency) * width / 8
    return PcieBandwidth(
        generation=gen.generation,
        width=int(width),
        gt_per_s=gen.gt_per_s,
        encoding=gen.encoding,
        gb_per_s=gb,
        formula=(
            f"{gen.gt_per_s:g} GT/s x {gen.payload_bits}/{gen.line_bits} ({gen.encoding})"
            f" x {width} lanes / 8 bit = {gb:.2f} GB/s per direction (10^9 B/s)"
        ),
        note=gen.note,
    )
