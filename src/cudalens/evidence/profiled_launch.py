"""The per-line check compares the evaluation under the launch Nsight Compute profiled.

A kernel launched several ways (a loop over block sizes, several sites) is evaluated under its
representative launch (cudalens.project.resolve). When the counters come with the launch they
measured (an ncu details page, :mod:`cudalens.profile.ncu_launch`), the evaluation compared is the
one under the distinct launch the tool found with that block (and grid, where the tool knows it),
evaluated here when it was not the representative. A measured launch the tool did not find is not
adopted: the kernel's lines are compared under the launch found, and their reason and a note say so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from cudalens.compiled.names import base_name_from_mangled


def measured_for(kernel: str, profiled: Mapping[str, Any]) -> Any:
    """The profiled launch of ``kernel`` (mangled): by its name, else by its base name when one
    profiled kernel has it."""
    if kernel in profiled:
        return profiled[kernel]
    base = base_name_from_mangled(kernel)
    same = [p for name, p in profiled.items() if base_name_from_mangled(name) == base or name == base]
    return same[0] if len(same) == 1 else None


def _shown(launch: Any) -> str:
    grid = launch.grid if isinstance(launch.grid, tuple) else "not derived"
    return f"block {launch.block}, grid {grid} ({launch.describe()})"


def match(kernel: Any, measured: Any) -> tuple[Any, str]:
    """(the distinct launch of source ``kernel`` with the measured block, what to say about the
    grid), or (None, why) when the tool found no launch with that block."""
    found = [r for r in (kernel.launches or ((kernel.launch,) if kernel.launch is not None else ()))
             if r is not None and r.block == measured.block]
    exact = [r for r in found if r.grid == measured.grid]
    if exact:
        return exact[0], ""
    unknown = [r for r in found if not isinstance(r.grid, tuple)]
    if unknown:
        return unknown[0], ""
    if found:
        return found[0], f"the profiled grid {measured.grid} differs from the grid found ({_shown(found[0])}); "
    known = "; ".join(_shown(r) for r in (kernel.launches or (kernel.launch,))[:4] if r is not None) or "none"
    return None, (f"the profiled launch ({measured.describe()}) is not among the launches cudalens found "
                  f"({known}): compared under the launch found, not the measured one; ")


def evaluations(fa: Any, evals: list[Any], profiled: Mapping[str, Any]) -> tuple[list[Any], dict[str, str], list[str]]:
    """``evals`` (the compiled model's evaluations of ``fa``'s kernels) with each profiled kernel's
    replaced by the evaluation under its profiled launch where that is another distinct launch the
    tool found; per kernel the reason prefix for its lines; notes."""
    if not profiled:
        return evals, {}, []
    by_name = {k.name: k for k in fa.model.kernels}
    out: list[Any] = []
    prefix: dict[str, str] = {}
    notes: list[str] = []
    for e in evals:
        measured = measured_for(e.kernel, profiled)
        k = by_name.get(base_name_from_mangled(e.kernel))
        if measured is None or k is None:
            out.append(e)
            continue
        chosen, why = match(k, measured)
        if chosen is None:
            prefix[e.kernel] = why
            notes.append(f"line counters of {base_name_from_mangled(e.kernel)}: {why.rstrip('; ')}")
            out.append(e)
            continue
        from cudalens.evidence.compiled_access import _launch

        blk, grid, params = _launch(dataclasses.replace(k, launch=chosen))
        if (blk, grid) == (tuple(e.block), tuple(e.grid)) and chosen == k.launch:
            prefix[e.kernel] = why
            out.append(e)
            continue
        module = _module(fa, e.kernel)
        fn = module.function(e.kernel) if module is not None else None
        if fn is None:
            prefix[e.kernel] = why + "the profiled launch could not be evaluated (no PTX at hand): compared under " \
                                     "the launch found; "
            out.append(e)
            continue
        from cudalens.access.ptx_eval import evaluate
        from cudalens.evidence.compiled_access import sass_shared_widths

        out.append(evaluate(module, fn, blk, grid, params, sass_lds=sass_shared_widths(fa.compiled).get(e.kernel)))
        prefix[e.kernel] = why + f"evaluated under the profiled launch, found at {chosen.site} ({_shown(chosen)}); "
    return out, prefix, notes


def _module(fa: Any, kernel: str) -> Any:
    """The PTX module of ``fa``'s unit with ``kernel`` parsed (None without PTX)."""
    ptx = getattr(fa.compiled, "ptx", "") if fa.compiled is not None else ""
    if not ptx:
        return None
    from cudalens.compiled.ptx import PtxSource

    return PtxSource(ptx).module([kernel])
