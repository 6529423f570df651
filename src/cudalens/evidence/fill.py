"""A kernel filled from its compiled evaluations: its own lines' figures
(:mod:`cudalens.evidence.compiled_figures`), access records for the lines of the ``__device__``
helpers the compiled code inlined into it (:mod:`cudalens.evidence.inlined_accesses`), and its
loops' trip counts as the compiled code ran them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from cudalens.evidence.compiled_figures import compiled_trips, fill_access, line_figures
from cudalens.evidence.inlined_accesses import inlined_accesses
from cudalens.source.model import Kernel, Loop, SourceModel


def fill_kernel(k: Kernel, evals: Sequence[Any]) -> Kernel:
    """Kernel ``k`` with compiled figures in its accesses' gaps and compiled trip counts on its loops."""
    if not evals:
        return k
    figures = line_figures(evals, k.file)
    # the compiled figure is the line's (all its instructions of the class): it goes to the line's
    # first access of that class without one, not to each (one finding per line, not one per access)
    taken: set[tuple[int, str, str]] = set()
    accesses = []
    for a in k.accesses:
        key = (a.line, a.space, a.op)
        # (a loop's weighted figure replaces the source's on every access of the class of the line)
        has_own = a.bank_conflict_ways is not None or a.sectors_per_request is not None
        filled = a if key in taken and not has_own else fill_access(a, figures, tuple(p.name for p in k.params))
        if filled is not a:
            taken.add(key)
        accesses.append(filled)
    accesses.extend(inlined_accesses(k, evals))
    trips = compiled_trips(k, evals)
    loops: tuple[Loop, ...] = tuple(dataclasses.replace(lp, compiled_trips=trips[lp.line]) if lp.line in trips else lp
                                    for lp in k.loops)
    if tuple(accesses) == k.accesses and loops == k.loops:
        return k
    return dataclasses.replace(k, accesses=tuple(accesses), loops=loops)


def fill_from_compiled(model: SourceModel, evals: Mapping[str, Sequence[Any]]) -> SourceModel:
    """``model`` with every kernel filled from its compiled evaluations (kernel name -> evaluations)."""
    kernels = tuple(fill_kernel(k, evals.get(k.name, ())) for k in model.kernels)
    return model if kernels == model.kernels else dataclasses.replace(model, kernels=kernels)
