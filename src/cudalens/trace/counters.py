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

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cudalens.errors import CudalensError
from cudalens.profile.ncu import (
    _PERMISSION_MARKERS,
    PERMISSION_HINT,
    CountersUnavailable,
    find_ncu,
    ncu_command,
    parse_csv,
)


@dataclass(frozen=True)
class KernelCounters:
    launches: tuple[Any, ...]  # LaunchCounters of the profiled launch
    lines: dict[tuple[str, str, int, str, str], Any]  # ncu_source.LineCounter per (kernel, file, line, space, op)
    note: str | None = None


def ncu_program(argv: Sequence[str]) -> list[str]:
    return [sys.executable, *argv] if argv[0].endswith(".py") else list(argv)


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise CountersUnavailable(f"ncu did not finish within {timeout:.0f} s") from None
    except OSError as exc:
        raise CountersUnavailable(f"ncu could not run ({exc.strerror})") from None
    if any(m in proc.stdout + proc.stderr for m in _PERMISSION_MARKERS):
        raise CountersUnavailable(PERMISSION_HINT)
    return proc


def profile_kernel(argv: Sequence[str], symbol: str, launches: int, timeout: float = 300.0) -> KernelCounters:
    """Counters of one launch of the kernel named ``symbol`` (mangled, as traced); CountersUnavailable says why not."""
    ncu = find_ncu()
    if ncu is None:
        raise CountersUnavailable("Nsight Compute (ncu) was not found: install Nsight Compute (it ships with the CUDA "
                                  "toolkit) or point CUDALENS_NCU at it")
    if not re.fullmatch(r"[A-Za-z0-9_$.]+", symbol):
        raise CudalensError(f"{symbol[:60]}: this kernel name cannot be matched exactly by ncu")
    with tempfile.TemporaryDirectory(prefix="cudalens-ncu-") as tmp:
        rep = os.path.join(tmp, "kernel")
        cmd = ncu_command(["--kernel-name-base", "mangled", "--section", "SourceCounters", "-o", rep, "-f",
                           *ncu_program(argv)], kernel=f"regex:^{symbol}$", launch_skip=1 if launches > 1 else 0,
                          launch_count=1, ncu=ncu)
        cmd = [c for c in cmd if c not in ("--csv",)]
        cmd = _drop_option(cmd, "--page")
        proc = _run(cmd, timeout)
        path = rep + ".ncu-rep"
        if not os.path.exists(path):
            text = proc.stdout + proc.stderr
            last = next((ln for ln in reversed(text.strip().splitlines()) if ln.strip()), "no output")
            raise CountersUnavailable(f"ncu profiled nothing (exit {proc.returncode}): {last[:200]}")
        raw = _run([ncu, "--import", path, "--csv", "--page", "raw", "--print-units", "base"], 120)
        launches_ = parse_csv(raw.stdout, source=f"ncu report of {symbol[:40]}")
        lines: dict = {}
        note = None
        src = _run([ncu, "--import", path, "--csv", "--page", "source", "--print-source", "cuda,sass",
                    "--print-kernel-base", "mangled"], 120)
        try:
            from cudalens.profile.ncu_source import line_counters, parse_source_csv

            lines = line_counters(parse_source_csv(src.stdout))
            if not lines:
                note = "the source page has no source lines (build with -lineinfo to map counters to lines)"
        except Exception as exc:  # noqa: BLE001 - the source page is extra evidence
            note = ("no per-line counters (ncu printed no source page with lines: the kernel was probably built "
                    f"without -lineinfo; {type(exc).__name__})")
    return KernelCounters(launches_, lines, note)


def _drop_option(cmd: list[str], name: str) -> list[str]:
    out, skip = [], False
    for c in cmd:
        if skip:
            skip = False
            continue
        if c == name:
            skip = True
            continue
        out.append(c)
    return out


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
