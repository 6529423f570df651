"""The launch each Nsight Compute result measured, from its details page.

``ncu --import REP --csv --page details`` prints one row per metric of every profiled launch, each
row naming the launch: ``"ID"``, ``"Kernel Name"``, ``"Block Size"`` (``"(32, 1, 1)"``), ``"Grid
Size"`` (``"(256, 1, 1)"``), ... A source page (``--page source``) does not say which launch it
measured; given next to it (``--counters PAGE.csv --counters DETAILS.csv``, or both pages in one
file), the details page does, so the line check compares the evaluation under that launch
(:mod:`cudalens.evidence.profiled_launch`).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

#: a details page's header (a raw page, ``--page raw``, names the launch too but has a column per metric)
HEADER = ("Kernel Name", "Block Size", "Grid Size", "Metric Name")
Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class ProfiledLaunch:
    kernel: str  # as ncu names it (mangled with --print-kernel-base mangled)
    block: Dim3
    grid: Dim3
    id: str = ""  # ncu's result ID

    def describe(self) -> str:
        return f"block {self.block}, grid {self.grid}"


def is_details_row(row: list[str]) -> bool:
    """Whether ``row`` is the header of a details page (it names the launch's kernel, block and grid)."""
    return all(h in row for h in HEADER)


def _dims(text: str) -> Dim3 | None:
    nums = [int(x) for x in re.findall(r"\d+", text or "")]
    if not 1 <= len(nums) <= 3 or any(n < 1 for n in nums):
        return None
    nums += [1] * (3 - len(nums))
    return (nums[0], nums[1], nums[2])


def parse_launches(text: str) -> tuple[ProfiledLaunch, ...]:
    """Every launch a details page (or a file holding one among other pages) names, in its order,
    each once (its first result ID)."""
    out: dict[str, ProfiledLaunch] = {}
    header: list[str] | None = None
    for row in csv.reader(io.StringIO(text)):
        if is_details_row(row):
            header = row
            continue
        if header is None or len(row) < len(header):
            if row and header is not None and not row[0].strip().isdigit():
                header = None  # another page begins
            continue
        rec = dict(zip(header, row))
        block, grid = _dims(rec.get("Block Size", "")), _dims(rec.get("Grid Size", ""))
        key = rec.get("ID", "") + "\0" + rec.get("Kernel Name", "")
        if block is not None and grid is not None and rec.get("Kernel Name") and key not in out:
            out[key] = ProfiledLaunch(rec["Kernel Name"], block, grid, rec.get("ID", ""))
    return tuple(out.values())


def by_kernel(launches: tuple[ProfiledLaunch, ...]) -> dict[str, ProfiledLaunch]:
    """The first launch of each kernel (a source page exported from a report holds the first)."""
    out: dict[str, ProfiledLaunch] = {}
    for launch in launches:
        out.setdefault(launch.kernel, launch)
    return out
