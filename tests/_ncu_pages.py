"""Nsight Compute pages written by hand for tests, in the shape ncu exports them (``--csv``, every
field quoted): the per-instruction source page (``--page source``) and rows for any other page.

A source page holds one section per kernel: ``File Path`` (the file the lines belong to, a header
included), ``Function Name`` (mangled), the column header, then each source line's row followed by
the rows of its SASS instructions, which carry the counters."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

SOURCE_COLUMNS = ["Line No", "Source", "Address", "Source", "Instructions Executed", "Address Space",
                  "L2 Theoretical Sectors Global", "L2 Theoretical Sectors Global Ideal", "L1 Conflicts Shared N-Way",
                  "Avg. Predicated-On Threads Executed"]


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """The rows as ncu writes them: every field quoted."""
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL).writerows(rows)
    return buf.getvalue()


def sass_row(address: int, sass: str, executed: int, sectors: int, ideal: int, threads: int,
             space: str = "global") -> list[str]:
    """One SASS instruction under its source line: executed (warp-level) instructions, the L2
    sectors it moved and the ideal number, and the average predicated-on threads."""
    return ["", "", f"0x{address:04x}", sass, str(executed), space, str(sectors), str(ideal), "", str(threads)]


def source_page(path: Path, kernels: Iterable[tuple[str, int, str, Sequence[list[str]]]]) -> str:
    """The source page of the lines of ``path``: for each (mangled kernel, line, the line's source
    text, its :func:`sass_row` rows), one section."""
    rows: list[Sequence[str]] = []
    for kernel, line, text, instructions in kernels:
        rows += [["File Path", str(path.resolve())], ["Function Name", kernel], SOURCE_COLUMNS,
                 [str(line), text, *[""] * (len(SOURCE_COLUMNS) - 2)], *instructions]
    return csv_text(rows)
