"""Where the source model has no figure, the compiled model's: the one place rules learn them.

The source access model gives no sectors per request (or no bank-conflict ways) for an access
whose stride is a kernel parameter, whose element width is a template parameter, whose index was
loaded from memory, ... The warp access model on the compiled PTX (pipeline.compiled_access) often
has the number for that line. :func:`fill_from_compiled` writes it into the source model's
``Access`` (``figures_from="compiled-ptx"``, with the condition as an assumption), so every rule
(G1/G2 coalescing, G3 strides, SH1 bank conflicts, ...) reads one set of figures and says, through its
evidence, which layer gave them (rules._access.figures_layer). Figures the source model has are
kept: this only fills gaps.

Loops: a loop whose trip count the source cannot establish but the compiled run completed without
reaching its cap gets ``compiled_trips`` (trips per entry), which weights ranking
(triage.impact.runs_per_thread).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from cudalens.source.model import Access, Kernel, Loop, SourceModel

COMPILED = "compiled-ptx"
_QUANTITY = {("global", "load"): "global load sectors/request", ("global", "store"): "global store sectors/request",
             ("shared", "load"): "shared load wavefronts/request",
             ("shared", "store"): "shared store wavefronts/request"}


def _real(path: str) -> str:
    return os.path.realpath(path) if path else ""


@dataclasses.dataclass(frozen=True)
class LineFigure:
    """The compiled figure of one (line, quantity): the worst instantiation's."""

    value: float
    ideal: float
    condition: str
    lane_stride: int | None = None  # bytes between neighbouring active lanes (base trial), when one
    lane_strides: tuple[int | None, ...] = ()  # the same per parameter trial
    bytes_per_lane: int | None = None  # moved per lane by the line's instructions together
    # a loop whose iterations differ: the lowest and highest figure of one execution (``value`` is
    # the loop-weighted figure)
    iter_low: float | None = None
    iter_high: float | None = None


def line_figures(evals: Sequence[Any], file: str) -> dict[tuple[int, str], LineFigure]:
    """(line, quantity) -> figure for the lines of ``file`` the compiled model gives a number for.
    Instantiations that disagree: the largest value, the condition naming all."""
    real = _real(file)
    seen: dict[tuple[int, str], list[tuple[LineFigure, str]]] = {}
    for ev in evals:
        for p in ev.predictions:
            if p.value is None or p.ideal is None or _real(p.file) != real:
                continue
            fig = LineFigure(float(p.value), float(p.ideal), p.condition, p.lane_stride, p.lane_strides, p.bytes_per_lane,
                             getattr(p, "iter_low", None), getattr(p, "iter_high", None))
            seen.setdefault((p.line, p.quantity), []).append((fig, ev.kernel))
    out = {}
    for key, figs in seen.items():
        fig, _k = max(figs, key=lambda f: f[0].value - f[0].ideal)
        if len({f.value for f, _k in figs}) > 1:
            cond = "instantiations differ: " + ", ".join(f"{k}: {f.value:g}" for f, k in figs) + \
                f"; the worst ({fig.value:g}) is used"
            fig = dataclasses.replace(fig, condition=cond)
        out[key] = fig
    return out


def _element_stride(a: Access, fig: LineFigure) -> tuple[int, str] | None:
    """(elements between neighbouring lanes, what it depends on) where every parameter trial of the
    compiled code has one lane stride of more than one element, and more than the bytes the line's
    instructions move per lane together (a struct copied in pieces, ``s[i] = t[i]`` of a 32-byte
    type as two 16-byte accesses, moves its whole stride: not a strided access); None otherwise.

    The element's size comes from the source; where the source knows only the stride in elements
    (a typedef'd or struct element), the compiled distance must be that many equal elements: of
    ``states[tid]`` (48-byte structs read in 8-byte pieces) the pieces are one element apart."""
    strides = fig.lane_strides or (fig.lane_stride,)
    if fig.lane_stride is None or any(s is None for s in strides):
        return None
    elem = a.bytes_per_thread
    if elem is None and a.lane_stride and abs(a.lane_stride) > 1 and not fig.lane_stride % a.lane_stride:
        elem = abs(fig.lane_stride // a.lane_stride)  # bytes per element, as the compiled code shows it
    floor = max(elem or 0, fig.bytes_per_lane or 0)
    if not elem or any(s % elem or abs(s) <= floor for s in strides if s is not None):
        return None
    k = abs(fig.lane_stride) // elem
    ks = [abs(s) // elem for s in strides if s is not None]
    if len(set(ks)) == 1:
        return k, f"lane stride {k} elements in the compiled code"
    return k, (f"lane stride {', '.join(map(str, ks))} elements in the compiled code's parameter trials "
               f"(the first, {k}, is shown): more than one element in each")


def _global_pattern(value: float, ideal: float) -> str:
    if value <= ideal + 1e-9:
        return "coalesced"
    return "misaligned" if abs(value - ideal - 1) < 1e-9 and ideal >= 4 else "uncoalesced"


def fill_access(a: Access, figures: Mapping[tuple[int, str], LineFigure]) -> Access:
    """``a`` with the compiled figures of its line where its own are missing; else ``a``. A global
    access with excess sectors whose lanes keep one stride of more than an element in the compiled
    code is ``strided-k`` (G3's case), else coalesced / misaligned / uncoalesced by its figures."""
    quantity = _QUANTITY.get((a.space, a.op))
    fig = figures.get((a.line, quantity)) if quantity else None
    if fig is None:
        return a
    if a.space == "shared" and a.loop_lines and fig.iter_low is not None and fig.iter_high is not None \
            and fig.ideal > 0 and a.figures_from != COMPILED and (a.bank_conflict_ways or 2) > 1 + 1e-9:
        return _loop_weighted(a, fig, quantity or "")
    value, ideal, cond = fig.value, fig.ideal, fig.condition
    why = (f"figures from the compiled code ({COMPILED}: {quantity} {value:g}, ideal {ideal:g}, over the "
           f"instructions of line {a.line}"
           f"{'; ' + cond if cond else ''}) where the source model had none ({a.pattern or 'unknown'})")
    if a.space == "global" and a.sectors_per_request is None:
        stride = _element_stride(a, fig) if value > ideal + 1e-9 else None
        pattern = f"strided-{stride[0]}" if stride else _global_pattern(value, ideal)
        return dataclasses.replace(a, sectors_per_request=value, ideal_sectors_per_request=ideal, pattern=pattern,
                                   lane_stride=stride[0] if stride else a.lane_stride, figures_from=COMPILED,
                                   assumptions=(*a.assumptions, why, *((stride[1],) if stride else ())))
    if a.space == "shared" and a.bank_conflict_ways is None and ideal > 0:
        return dataclasses.replace(a, wavefronts_per_request=value, ideal_wavefronts_per_request=ideal,
                                   bank_conflict_ways=round(value / ideal, 2), figures_from=COMPILED,
                                   assumptions=(*a.assumptions, why))
    return a


def _loop_weighted(a: Access, fig: LineFigure, quantity: str) -> Access:
    """A shared access in a loop whose compiled executions differ (``sdata[2 * s * tid]``: 2-way at
    the first iteration, more at later ones): the compiled loop-weighted figures replace the source
    model's (its first iteration's), with their range over the iterations."""
    lo, hi = round((fig.iter_low or 0) / fig.ideal, 2), round((fig.iter_high or 0) / fig.ideal, 2)
    why = (f"figures from the compiled code ({COMPILED}: {quantity} {fig.value:g} weighted over the loop's "
           f"iterations, {fig.iter_low:g} to {fig.iter_high:g} per execution, ideal {fig.ideal:g}, over the "
           f"instructions of line {a.line}{'; ' + fig.condition if fig.condition else ''}) in place of the source "
           f"model's first-iteration figure ({a.bank_conflict_ways}-way)")
    return dataclasses.replace(a, wavefronts_per_request=fig.value, ideal_wavefronts_per_request=fig.ideal,
                               bank_conflict_ways=round(fig.value / fig.ideal, 2), figures_from=COMPILED,
                               iteration_range=(lo, hi), pattern=f"{round(fig.value / fig.ideal, 2):g}-way-conflict"
                               if fig.value > fig.ideal + 1e-9 else a.pattern, assumptions=(*a.assumptions, why))


def compiled_trips(k: Kernel, evals: Sequence[Any]) -> dict[int, float]:
    """Loop line -> trips per entry, for the kernel's outermost source loops that the compiled run
    executed to the end (not cut at its cap) in every instantiation, with one trip count."""
    trips: dict[int, set[float]] = {}
    cut: set[int] = set()
    for ev in evals:
        for lp in ev.loops:
            line = int(lp.get("line") or 0)
            if lp.get("cut"):
                cut.add(line)
            trips.setdefault(line, set()).add(float(lp.get("iterations", 0)) + 1.0)  # back edges taken + the last
    out = {}
    for lp in k.loops:
        nested = any(o is not lp and o.line <= lp.line <= o.end_line and o.line != lp.line for o in k.loops)
        if lp.line in trips and lp.line not in cut and not nested and len(trips[lp.line]) == 1:
            out[lp.line] = next(iter(trips[lp.line]))
    return out


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
        filled = a if key in taken and not has_own else fill_access(a, figures)
        if filled is not a:
            taken.add(key)
        accesses.append(filled)
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
