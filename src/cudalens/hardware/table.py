"""Per-compute-capability hardware limits, from data/cc_table.csv (sources and flags kept).

The table was gathered from the Programming Guide's technical specifications, CUDA 13.0's
cuda_occupancy.h and two second-hand tables; its ``sources`` and ``flags`` columns say which.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from importlib import resources

from cudalens.errors import InputError


@dataclass(frozen=True)
class CCLimits:
    """Limits of one compute capability. Sizes in bytes unless the name says otherwise."""

    cc: str
    major: int
    minor: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int
    max_regs_per_block: int
    max_regs_per_thread_guide: int
    max_regs_per_thread_header: int
    reg_alloc_unit: int  # registers per warp, allocation granularity
    sub_partitions: int  # warp schedulers the register file is split across (header)
    smem_per_sm: int
    max_smem_per_block_default: int
    max_smem_per_block_optin: int
    reserved_smem_per_block: int
    smem_alloc_granularity: int
    smem_carveout_options_text: str
    barrier_slots_per_sm: int | None  # header's barrier limit, CC >= 9.0 only
    sources: str
    flags: str
    warp_size: int = 32


def _kb(text: str) -> int:
    return int(float(text) * 1024)


def _row_to_limits(row: dict[str, str]) -> CCLimits:
    major, minor = (int(x) for x in row["cc"].split("."))
    barrier = row["header_barrier_slots_per_sm"].strip()
    return CCLimits(
        cc=row["cc"],
        major=major,
        minor=minor,
        max_threads_per_sm=int(row["max_threads_per_sm"]),
        max_warps_per_sm=int(row["max_warps_per_sm"]),
        max_blocks_per_sm=int(row["max_blocks_per_sm"]),
        regs_per_sm=int(row["regs_per_sm"]),
        max_regs_per_block=int(row["max_regs_per_block"]),
        max_regs_per_thread_guide=int(row["max_regs_per_thread_guide"]),
        max_regs_per_thread_header=int(row["max_regs_per_thread_header"]),
        reg_alloc_unit=int(row["reg_alloc_unit_regs_per_warp"]),
        sub_partitions=int(row["sub_partitions_header"]),
        smem_per_sm=_kb(row["smem_per_sm_KB"]),
        max_smem_per_block_default=_kb(row["max_smem_per_block_default_KB"]),
        max_smem_per_block_optin=_kb(row["max_smem_per_block_optin_KB"]),
        reserved_smem_per_block=_kb(row["reserved_smem_per_block_KB"]),
        smem_alloc_granularity=int(row["smem_alloc_granularity_B_header"]),
        smem_carveout_options_text=row["smem_carveout_options_KB"],
        barrier_slots_per_sm=int(barrier) if barrier.isdigit() else None,
        sources=row["sources"],
        flags=row["flags"],
    )


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, CCLimits]:
    text = resources.files("cudalens.data").joinpath("cc_table.csv").read_text()
    rows = csv.DictReader(text.splitlines())
    return {row["cc"]: _row_to_limits(row) for row in rows}


def known_ccs() -> tuple[str, ...]:
    """Every compute capability in the table, ascending ("3.5" ... "12.1")."""
    return tuple(sorted(_table(), key=lambda c: tuple(int(x) for x in c.split("."))))


def normalize_cc(cc: str | float | tuple[int, int]) -> str:
    """Accept "9.0", "90", "sm_90", 9.0 or (9, 0); return "9.0". Raises InputError if malformed."""
    if isinstance(cc, tuple) and len(cc) == 2:
        text = f"{cc[0]}.{cc[1]}"
    else:
        text = str(cc).strip().lower()
        for prefix in ("sm_", "compute_", "sm", "cc"):
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        text = text.rstrip("af")  # sm_90a, sm_100f
        if text.isdigit() and len(text) in (2, 3):
            text = f"{text[:-1]}.{text[-1]}"
    parts = text.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise InputError(f"compute capability {cc!r} is not of the form MAJOR.MINOR (e.g. 9.0)")
    return f"{int(parts[0])}.{int(parts[1])}"


def limits(cc: str | float | tuple[int, int]) -> CCLimits:
    """The limits of ``cc``; InputError naming the known ones if it is not in the table."""
    key = normalize_cc(cc)
    try:
        return _table()[key]
    except KeyError:
        raise InputError(
            f"unknown compute capability {key} (known: {', '.join(known_ccs())})"
        ) from None
