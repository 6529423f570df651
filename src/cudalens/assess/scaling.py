"""Speedup bounds for parallelizing part of a program (catalog A2, A3; BPG 3.1.3).

Two ways to ask "how much faster can it get with N processors?":

* **Strong scaling (Amdahl)** keeps the problem size fixed. If a fraction ``P`` of the run time
  can be spread over ``N`` processors and the rest stays serial, the best possible speedup is
  ``S = 1 / ((1 - P) + P / N)``. As ``N`` grows without bound this tends to ``1 / (1 - P)``:
  the serial part alone sets the ceiling (P = 3/4 can never give more than 4x).
* **Weak scaling (Gustafson)** grows the problem with the machine, keeping the run time per
  processor fixed. The scaled speedup is ``S = N + (1 - P)(1 - N)``, where ``P`` is the parallel
  fraction measured on the parallel machine.

All functions here are pure; they validate their arguments and raise
:class:`cudalens.errors.InputError` with a sentence a user can act on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cudalens.errors import InputError


def check_fraction(p: float, what: str = "parallel fraction") -> float:
    """Return ``p`` as a float if it lies in [0, 1], else raise InputError."""
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number in [0, 1], got {p!r}") from None
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InputError(f"{what} must lie in [0, 1], got {p!r}")
    return value


def check_processors(n: float) -> float:
    """Return ``n`` as a float if it is a finite number >= 1, else raise InputError."""
    try:
        value = float(n)
    except (TypeError, ValueError):
        raise InputError(f"number of processors must be a number >= 1, got {n!r}") from None
    if math.isnan(value) or math.isinf(value) or value < 1.0:
        raise InputError(f"number of processors must be a finite number >= 1, got {n!r}")
    return value


def amdahl(p: float, n: float) -> float:
    """Amdahl's strong-scaling speedup bound ``1 / ((1 - P) + P / N)`` (dimensionless, x)."""
    p = check_fraction(p)
    n = check_processors(n)
    return 1.0 / ((1.0 - p) + p / n)


def amdahl_limit(p: float) -> float:
    """Amdahl's bound with unlimited processors, ``1 / (1 - P)``; ``math.inf`` when P = 1."""
    p = check_fraction(p)
    if p == 1.0:
        return math.inf
    return 1.0 / (1.0 - p)


def gustafson(p: float, n: float) -> float:
    """Gustafson's weak-scaling (scaled) speedup ``N + (1 - P)(1 - N)`` (dimensionless, x)."""
    p = check_fraction(p)
    n = check_processors(n)
    return n + (1.0 - p) * (1.0 - n)


@dataclass(frozen=True)
class ScalingRow:
    """Both bounds at one processor count."""

    processors: int
    amdahl: float  # x, strong scaling
    gustafson: float  # x, weak scaling
    amdahl_efficiency: float  # amdahl / processors, in [0, 1]

    def to_dict(self) -> dict:
        return {
            "processors": self.processors,
            "amdahl_speedup_x": self.amdahl,
            "gustafson_speedup_x": self.gustafson,
            "amdahl_efficiency": self.amdahl_efficiency,
        }


def processor_counts(n: int, beyond: int = 4) -> list[int]:
    """Powers of two from 1 up to at least ``beyond`` times ``n``, with ``n`` itself included."""
    n_int = int(check_processors(n))
    if n_int != n:
        raise InputError(f"number of processors must be a whole number, got {n!r}")
    counts = []
    k = 1
    while k < n_int * beyond:
        counts.append(k)
        k *= 2
    counts.append(k)
    if n_int not in counts:
        counts.append(n_int)
    return sorted(counts)


def scaling_table(p: float, n: int, beyond: int = 4) -> list[ScalingRow]:
    """Amdahl and Gustafson bounds over :func:`processor_counts` for parallel fraction ``p``."""
    p = check_fraction(p)
    rows = []
    for k in processor_counts(n, beyond):
        s = amdahl(p, k)
        rows.append(ScalingRow(k, s, gustafson(p, k), s / k))
    return rows
