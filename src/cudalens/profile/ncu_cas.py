"""The load of a compare-and-swap loop that ptxas makes of a shared atomic (``atomicAdd`` on a shared
float on sm_90: LDS, the add, ``ATOMS.CAST.SPIN``, retry while another write came first), compared
with the compiled model's figure for the atomic's addresses (quantity ``shared atomic
wavefronts/request``, access.ptx_run records them).

The loop's load reads the atomic's address in every lane the atomic runs in: its first pass has the
atomic's wavefronts per request (``k``); each retry runs a part of those lanes, whose wavefronts lie
between 1 and ``k``. So the line's figure lies in 1..k: exact where ``k`` is 1 (lanes at distinct
words of one row, llm.c's ``atomicAdd(&dbias_shared[i], v)``). Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

CAS_LOAD = ("the load of the compare-and-swap loop ptxas made of the atomic on this line: the atomic's wavefronts "
            "on its first pass, a part of its lanes on each retry (from 1 to that)")


def cas_load(predictions: Iterable[Any], file: str, line: int) -> Any:
    """The prediction to compare with the load of a compare-and-swap loop on ``file``:``line``, from
    the figure of the shared atomic there: its own line's, or (the atomic inlined from CUDA's
    ``atomicAdd``, at several calls) the bounds of its instructions at this call. None where there
    is none, or its figure is not one number (a loaded value or a parameter nobody gave decides it)."""
    for p in predictions:
        if not p.quantity.startswith("shared atomic") or p.value is None:
            continue
        if (p.file, p.line) == (file, line):
            return _range(p, p.value, p.value, p.nway, p.nway)
        for b in getattr(p, "site_bounds", ()):
            if (b[0], b[1]) == (file, line):
                return _range(p, b[2], b[3], b[4], b[5])
    return None


def _range(p: Any, low: float, high: float, nway_low: float | None, nway_high: float | None) -> Any:
    return replace(p, value=None, low=min(1.0, low), high=high, nway=None,
                   nway_low=None if nway_low is None else min(1.0, nway_low), nway_high=nway_high,
                   nway_predicated=None, value_predicated=None, value_predicated_range=None,
                   nway_predicated_range=None, ideal=None, reason=CAS_LOAD)
