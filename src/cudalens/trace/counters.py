"""Nsight Compute on one launch of a traced kernel: the project's metric set and the source page.

One ncu run per kernel writes a report (``-o``) with the metric set of :mod:`cudalens.profile.ncu`
and the ``SourceCounters`` section; two imports of that report give the raw page (kernel counters,
parsed by :func:`cudalens.profile.ncu.parse_csv`) and the per-instruction source page (parsed by
:func:`cudalens.profile.ncu_source.parse_source_csv`, per line when the program was built with
``-lineinfo``). The kernel is matched by its mangled name (``--kernel-name-base mangled``), exactly
as CUPTI reported it; ``--launch-skip 1`` profiles its second launch when it ran more than once (the
first often carries one-time costs). Clocks are left alone (``--clock-control none``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cudalens.errors import CudalensError
from cudalens.profile.ncu import parse_csv, profile_pages


@dataclass(frozen=True)
class KernelCounters:
    launches: tuple[Any, ...]  # LaunchCounters of the profiled launch
    lines: dict[tuple[str, str, int, str, str], Any]  # ncu_source.LineCounter per (kernel, file, line, space, op)
    note: str | None = None


def ncu_program(argv: Sequence[str]) -> list[str]:
    return [sys.executable, *argv] if argv[0].endswith(".py") else list(argv)


def profile_kernel(argv: Sequence[str], symbol: str, launches: int, timeout: float = 300.0) -> KernelCounters:
    """Counters of one launch of the kernel named ``symbol`` (mangled, as traced); CountersUnavailable says why not."""
    if not re.fullmatch(r"[A-Za-z0-9_$.]+", symbol):
        raise CudalensError(f"{symbol[:60]}: this kernel name cannot be matched exactly by ncu")
    pages = profile_pages(ncu_program(argv), kernel=symbol, launch_skip=1 if launches > 1 else 0, mangled=True,
                          timeout=timeout, hint="or point CUDALENS_NCU at it")
    launches_ = parse_csv(pages.raw, source=f"ncu report of {symbol[:40]}")
    lines: dict = {}
    note = None
    try:
        from cudalens.profile.ncu_source import line_counters, parse_source_csv

        lines = line_counters(parse_source_csv(pages.source))
        if not lines:
            note = "the source page has no source lines (build with -lineinfo to map counters to lines)"
    except Exception as exc:  # noqa: BLE001 - the source page is extra evidence
        note = ("no per-line counters (ncu printed no source page with lines: the kernel was probably built "
                f"without -lineinfo; {type(exc).__name__})")
    return KernelCounters(launches_, lines, note)


def line_rows(lines: dict, symbol: str) -> list[dict[str, Any]]:
    """The measured memory lines of one kernel, for the report (worst sectors per request first)."""
    rows = []
    for (kernel, file, line, space, op), c in lines.items():
        if kernel != symbol or c.executed <= 0:
            continue
        rows.append({"file": file, "line": line, "space": space, "op": op, "executed": c.executed,
                     "sectors_per_request": c.sectors_per_request,
                     "ideal_sectors_per_request": c.ideal_sectors_per_request, "conflict_ways": c.nway})
    return sorted(rows, key=lambda r: (-(r["sectors_per_request"] or 0) + (r["ideal_sectors_per_request"] or 0),
                                       r["file"], r["line"]))
