"""Where the source model has no figure, the compiled model's: the one place rules learn them.

The source access model gives no sectors per request (or no bank-conflict ways) for an access
whose stride is a kernel parameter, whose element width is a template parameter, whose index was
loaded from memory, ... The warp access model on the compiled PTX (evidence.compiled_access) often
has the number for that line. :func:`fill_from_compiled` writes it into the source model's
``Access`` (``figures_from="compiled-ptx"``, with the condition as an assumption), so every rule
(G1/G2 coalescing, G3 strides, SH1 bank conflicts, ...) reads one set of figures and says, through its
evidence, which layer gave them (rules._access.figures_layer). Figures the source model has are
kept: this only fills gaps.

Parameters nobody gave (issue #26): a figure that depends on them is never printed as one trial's
value. A lane stride that follows a parameter is named by it (``Access.lane_stride_text``: "= height
elements (height = 256..4096 tried)"); a figure that varies over the trials is still given where the
variation hides no finding: the figure of every full warp, with the edge warps (a bounds guard, a
grid-stride loop's partial last warp) in a note, or a range each of whose values is a finding
(``Access.sectors_low``..``sectors_per_request``). Other ranges stay without a figure.

Loops: a loop whose trip count the source cannot establish but the compiled run completed without
reaching its cap gets ``compiled_trips`` (trips per entry), which weights ranking
(triage.impact.runs_per_thread).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cudalens.access.ptx_eval import PLAUSIBLE, SMALL
from cudalens.quantities import PER_REQUEST
from cudalens.real_paths import real_path
from cudalens.source.model import Access, Kernel

#: the compiled model's parameter trials in the order it runs them (SMALL only where tried)
TRIALS = PLAUSIBLE + SMALL

COMPILED = "compiled-ptx"


def _real(path: str) -> str:
    return real_path(path) if path else ""


@dataclasses.dataclass(frozen=True)
class LineFigure:
    """The compiled figure of one (line, quantity): the worst instantiation's."""

    value: float
    ideal: float
    condition: str
    lane_stride: int | None = None  # bytes between neighbouring active lanes (base trial), when one
    lane_strides: tuple[int | None, ...] = ()  # the same per parameter trial
    bytes_per_lane: int | None = None  # moved per lane by the line's instructions together
    tried: tuple[int, ...] = ()  # the trial value of each entry of ``lane_strides`` (TRIALS', in order)
    params: tuple[int, ...] = ()  # the positions of the kernel parameters nobody gave (tried)
    low: float | None = None  # a range over the trials, each of its values a finding: low..value
    # trials whose warps are not all full (a bounds guard, a partial last warp): (trial value, figure,
    # ideal) each; the figure above is that of the full warps
    edges: tuple[tuple[int, float, float], ...] = ()
    # a loop whose iterations differ: the lowest and highest figure of one execution (``value`` is
    # the loop-weighted figure)
    iter_low: float | None = None
    iter_high: float | None = None


_PARAM_RE = re.compile(r"param (\d+)|'(\d+)'")


def _tried_params(condition: str) -> tuple[int, ...]:
    """The positions of the parameters a prediction's condition says were tried."""
    return tuple(dict.fromkeys(int(a or b) for a, b in _PARAM_RE.findall(condition)))


def _from_trials(p: Any) -> LineFigure | None:
    """A figure for a prediction that varies with parameters nobody gave (``value`` None, one
    entry per trial in ``p.trials``), where the variation does not hide a finding:

    - every full-warp trial (32 active lanes per request) gives one figure above its ideal: that
      figure, with a note on the edge warps (fewer lanes: a bounds guard such as ``t < n / 32``, a
      grid-stride loop's partial last warp) whose figures differ;
    - else every trial's figure is above one common ideal: the range ``low..high``.
    None otherwise (a range that is not a finding at each of its values stays unreported)."""
    trials = [(v, i, t, tv, st) for (v, i, t), tv, st in
              zip(p.trials, TRIALS, p.lane_strides or (None,) * len(p.trials)) if v is not None and i is not None]
    if p.value is not None or len(trials) < 2 or "parameters nobody gave" not in (p.reason or ""):
        return None
    params = _tried_params(p.condition)
    full = [x for x in trials if x[2] is not None and x[2] >= 32 - 1e-9]
    if full and len({(v, i) for v, i, *_ in full}) == 1 and full[0][0] > full[0][1] + 1e-9:
        v, i = full[0][0], full[0][1]
        edges = tuple((x[3], x[0], x[1]) for x in trials if x not in full)
        strides = tuple(x[4] for x in full)
        return LineFigure(v, i, f"every full warp of the parameter trials: {v:g}", strides[0], strides,
                          p.bytes_per_lane, tuple(x[3] for x in full), params, None, edges)
    ideals = {i for _v, i, *_ in trials}
    if len(ideals) == 1 and len(trials) == len(p.trials) and all(v > i + 1e-9 for v, i, *_ in trials):
        strides = tuple(x[4] for x in trials)
        return LineFigure(max(v for v, *_ in trials), ideals.pop(), p.condition, strides[0], strides,
                          p.bytes_per_lane, tuple(x[3] for x in trials), params, min(v for v, *_ in trials))
    return None


def line_figures(evals: Sequence[Any], file: str) -> dict[tuple[int, str], LineFigure]:
    """(line, quantity) -> figure for the lines of ``file`` the compiled model gives a number for.
    Instantiations that disagree: the largest value, the condition naming all."""
    real = _real(file)
    seen: dict[tuple[int, str], list[tuple[LineFigure, str]]] = {}
    for ev in evals:
        for p in ev.predictions:
            if _real(p.file) != real:
                continue
            if p.value is None or p.ideal is None:
                trial_fig = _from_trials(p) if getattr(p, "trials", ()) else None
                if trial_fig is not None:
                    seen.setdefault((p.line, p.quantity), []).append((trial_fig, ev.kernel))
                continue
            tried = _tried_params(p.condition)
            fig = LineFigure(float(p.value), float(p.ideal), p.condition, p.lane_stride, p.lane_strides,
                             p.bytes_per_lane, TRIALS[:len(p.lane_strides)] if tried else (), tried,
                             iter_low=getattr(p, "iter_low", None), iter_high=getattr(p, "iter_high", None))
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


def _param_names(a: Access, fig: LineFigure, params: Sequence[str]) -> list[str]:
    """The source names of the parameters the figure was tried over: those of the access's index
    first (``t * height`` names height), else every one tried."""
    from cudalens.source import expr as E

    tried = [params[i] for i in fig.params if 0 <= i < len(params)] or ([f"param {i}" for i in fig.params])
    try:
        used = E.symbols(a.index_expr) if a.index_expr is not None else set()
    except Exception:  # noqa: BLE001 - an index the expression helpers do not take: name all tried
        used = set()
    return [n for n in tried if n in used] or tried or ["a parameter nobody gave"]


def _stride_text(ks: Sequence[int], tried: Sequence[int], names: Sequence[str]) -> str:
    """``= height elements (height = 256..4096 tried)``: the stride named by the parameter it
    follows, never one trial's value as a fact."""
    who = names[0] if len(names) == 1 else "one of " + ", ".join(names)
    span = f"{who} = {min(tried)}..{max(tried)} tried" if tried else f"{who} tried"
    ratios = {k / t for k, t in zip(ks, tried)} if tried and len(tried) == len(ks) else set()
    if len(ratios) == 1 and len(names) == 1:
        c = ratios.pop()
        scale = "" if c == 1 else (f"{int(c)} x " if float(c).is_integer() else f"{c:g} x ")
        return f"= {scale}{who} elements ({span})"
    return f"depending on {who}: {min(ks)}..{max(ks)} elements over the trials ({span})"


def _element_stride(a: Access, fig: LineFigure, params: Sequence[str] = ()) -> tuple[int, str, str | None] | None:
    """(elements between neighbouring lanes, what it depends on, the stride as a message prints it
    where it follows a parameter nobody gave) where every parameter trial of the
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
        return k, f"lane stride {k} elements in the compiled code", None
    text = _stride_text(ks, fig.tried, _param_names(a, fig, params))
    return min(ks), f"lane stride {text} in the compiled code's parameter trials: more than one element in each", text


def _global_pattern(value: float, ideal: float) -> str:
    if value <= ideal + 1e-9:
        return "coalesced"
    return "misaligned" if abs(value - ideal - 1) < 1e-9 and ideal >= 4 else "uncoalesced"


def _edge_note(fig: LineFigure, params: Sequence[str]) -> str:
    """``in every full warp; edge warps (fewer than 32 lanes) at n = 256, 1000 tried: 8, 31 against 1, 4``."""
    names = [params[i] for i in fig.params if 0 <= i < len(params)] or ["the parameters nobody gave"]
    who = " = ".join(names)
    return (f"in every full warp; edge warps (fewer than 32 active lanes) at {who} = "
            f"{', '.join(str(t) for t, _v, _i in fig.edges)} tried: {', '.join(f'{v:.3g}' for _t, v, _i in fig.edges)}"
            f" against {', '.join(f'{i:.3g}' for _t, _v, i in fig.edges)}")


def fill_access(a: Access, figures: Mapping[tuple[int, str], LineFigure], params: Sequence[str] = ()) -> Access:
    """``a`` with the compiled figures of its line where its own are missing; else ``a``. A global
    access with excess sectors whose lanes keep one stride of more than an element in the compiled
    code is ``strided-k`` (G3's case), else coalesced / misaligned / uncoalesced by its figures.
    ``params``: the kernel's parameter names in order (to name the ones a figure was tried over)."""
    row = PER_REQUEST.get((a.space, a.op))
    quantity = row.name if row else None
    fig = figures.get((a.line, quantity)) if quantity else None
    if fig is None:
        return a
    if a.space == "shared" and a.loop_lines and fig.iter_low is not None and fig.iter_high is not None \
            and fig.ideal > 0 and a.figures_from != COMPILED and (a.bank_conflict_ways or 2) > 1 + 1e-9:
        return _loop_weighted(a, fig, quantity or "")
    value, ideal, cond = fig.value, fig.ideal, fig.condition
    for i in fig.params:  # the PTX's positions as the source names them
        if 0 <= i < len(params):
            cond = re.sub(rf"\bparam {i}\b|'{i}'", params[i], cond)
    shown = f"{fig.low:g}..{value:g}" if fig.low is not None else f"{value:g}"
    notes = (_edge_note(fig, params),) if fig.edges else ()
    why = (f"figures from the compiled code ({COMPILED}: {quantity} {shown}, ideal {ideal:g}, over the "
           f"instructions of line {a.line}"
           f"{'; ' + cond if cond else ''}) where the source model had none ({a.pattern or 'unknown'})")
    if a.space == "global" and a.sectors_per_request is None:
        stride = _element_stride(a, fig, params) if value > ideal + 1e-9 else None
        pattern = f"strided-{stride[0] if stride[2] is None else 'by-parameter'}" if stride else \
            _global_pattern(fig.low if fig.low is not None else value, ideal)
        return dataclasses.replace(a, sectors_per_request=value, ideal_sectors_per_request=ideal, pattern=pattern,
                                   lane_stride=stride[0] if stride else a.lane_stride, figures_from=COMPILED,
                                   lane_stride_text=stride[2] if stride else None, sectors_low=fig.low,
                                   figure_notes=notes,
                                   assumptions=(*a.assumptions, why, *((stride[1],) if stride else ())))
    if a.space == "shared" and a.bank_conflict_ways is None and ideal > 0 and fig.low is None:
        return dataclasses.replace(a, wavefronts_per_request=value, ideal_wavefronts_per_request=ideal,
                                   bank_conflict_ways=round(value / ideal, 2), figures_from=COMPILED,
                                   figure_notes=notes, assumptions=(*a.assumptions, why))
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
