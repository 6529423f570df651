"""Limits that keep the front end and the models total: nesting depth and a per-file budget.

Hostile or broken input (generated code, a fuzzer, a truncated file) must never crash or hang
the analyzer. Two guards turn what would be a crash or a hang into a note:

- :data:`MAX_NESTING`: syntax nested deeper than this many tree levels is not modelled. A function
  holding it gets "unmodelled: nesting too deep" instead of a walk, which keeps every recursive
  step of the front end, the models and the rules far below Python's recursion limit. (Real CUDA
  code rarely nests deeper than 60 levels; a 200-term ``a + b + ...`` chain is 200 levels.)
- :class:`Budget`: the time and memory one file may take. Long loops of the walk and the access
  model ask :meth:`Budget.check`; past the budget it raises :class:`BudgetExceeded`, which the
  caller turns into "unmodelled: ... budget spent" for what is left.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

MAX_NESTING = 200

#: the largest source file analysed (a 50 MB file took 118 s and 6.5 GB before it was refused)
MAX_FILE_BYTES = 8_000_000

#: default per-file budget: seconds of wall time, and MB of memory growth over the start
DEFAULT_SECONDS = 20.0
DEFAULT_MEMORY_MB = 768


def deep_points(root: Any, limit: int = MAX_NESTING) -> list[tuple[int, int]]:
    """(start byte, line) of each outermost node nested deeper than ``limit`` levels (iterative). A
    subtree of ``n`` nodes (``descendant_count``, the node itself included) reaches at most ``n - 1``
    levels below its root: one that cannot pass ``limit`` is not walked."""
    out: list[tuple[int, int]] = []
    if root.descendant_count - 1 <= limit:
        return out
    cursor = root.walk()
    depth = 0
    while True:
        if depth > limit:
            node = cursor.node
            out.append((node.start_byte, node.start_point[0] + 1))
        elif depth + cursor.node.descendant_count - 1 > limit and cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out
            depth -= 1


class BudgetExceeded(Exception):
    """Raised by :meth:`Budget.check` once the file's time or memory budget is spent."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def _rss_mb() -> float | None:
    """Resident memory of this process now (Linux /proc; None elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Budget:
    """Time and memory one file's analysis may take (``check`` raises :class:`BudgetExceeded`)."""

    seconds: float = DEFAULT_SECONDS
    memory_mb: float = DEFAULT_MEMORY_MB
    _deadline: float = field(default=0.0, repr=False)
    _rss0: float | None = field(default=None, repr=False)
    _calls: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.seconds
        self._rss0 = _rss_mb()

    def check(self) -> None:
        """Raise BudgetExceeded past the deadline or the memory growth (memory read every 64 calls)."""
        if time.monotonic() > self._deadline:
            raise BudgetExceeded(f"time budget of {self.seconds:g} s spent")
        self._calls += 1
        if self._calls % 64 == 0 and self._rss0 is not None:
            now = _rss_mb()
            if now is not None and now - self._rss0 > self.memory_mb:
                raise BudgetExceeded(f"memory budget of {self.memory_mb:g} MB spent")

    def note(self, exc: BudgetExceeded, what: str) -> str:
        return f"unmodelled: {what} ({exc.what})"
