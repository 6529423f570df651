"""The warp access model: give every access and branch of a SourceModel its warp-level verdict.

Choices (documented for users in ``cudalens analyze --help`` and the README):

- **Representative blocks.** Blocks ``blockIdx = (0,0,0)`` and ``(1,0,0)`` of the launch
  configuration are evaluated and per-warp figures are averaged over the warps of both. The second
  block catches misalignment that only appears away from the origin (e.g. a block whose width in
  bytes is not a multiple of 32).
- **Alignment.** Every pointer parameter is assumed to point at a 256-byte aligned address (what
  ``cudaMalloc`` returns); ``__shared__`` arrays start at bank 0.
- **Loops** are evaluated at their first iteration (and at their second, for re-use facts);
  statements guarded by conditions count only the lanes for which the conditions hold; a condition
  the model cannot evaluate leaves all lanes active (and says so in ``assumptions``).
- **The launch.** Each kernel is evaluated under the launch the project's launch table gives it
  (:mod:`cudalens.project.resolve`: the block, grid and the scalar and template parameter values
  its launch passes, found across the project's files), listed in ``assumptions``. A ``--define``
  of the same name wins. Without a launch, the plausible blocks of
  :data:`cudalens.project.resolve.PLAUSIBLE_BLOCKS` are assumed (the first gives the figures) and the kernel says so.
- **Unknown integers.** A kernel parameter, template parameter or ``gridDim`` component that no
  ``--define`` or launch site gives is tried at two large values, both multiples of 64 (2048 and
  3136). When the verdict is the same for both it is reported, with the assumption listed; when it
  differs the access is ``parameter-dependent`` and its figures are null.
- **Data-dependent** indices (they use a loaded value or an opaque call) get null figures.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from cudalens.access import lanes as L
from cudalens.access import memory as M
from cudalens.access.siblings import mark_complementary
from cudalens.access.staging import staging, sym_used
from cudalens.errors import what_failed
from cudalens.project.launches import ResolvedLaunch
from cudalens.project.resolve import (
    DEFAULT_BLOCK,
    MAX_BLOCK_THREADS,
    LaunchTable,
    UserBlock,
    kernel_defines,
    number,
    resolve_models,
    with_type_args,
)
from cudalens.source import expr as E
from cudalens.source.limits import Budget, BudgetExceeded
from cudalens.source.model import Access, Branch, Kernel, SourceModel
from cudalens.source.types import element_bytes

TRIAL_VALUES = (2048, 3136)
_BLOCKS = ((0, 0, 0), (1, 0, 0))


def parse_block(text: str) -> tuple[int, int, int]:
    """``"32,8"`` -> (32, 8, 1). Raises ValueError with a readable message."""
    parts = [p.strip() for p in text.replace("x", ",").split(",") if p.strip()]
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"block {text!r}: give X[,Y[,Z]]")
    if not all(p.isdigit() and len(p) <= 10 for p in parts):
        raise ValueError(f"block {text!r}: give whole numbers, X[,Y[,Z]] (e.g. 256 or 32,8)")
    vals = [int(p) for p in parts]
    if any(v <= 0 for v in vals):
        raise ValueError(f"block {text!r}: sizes must be positive")
    while len(vals) < 3:
        vals.append(1)
    if vals[0] * vals[1] * vals[2] > MAX_BLOCK_THREADS:
        raise ValueError(f"block {text!r}: more than {MAX_BLOCK_THREADS} threads per block")
    return (vals[0], vals[1], vals[2])


def parse_blocks(texts: list[str] | tuple[str, ...]) -> UserBlock:
    """``--block`` values: ``"32,8"`` for every kernel, ``"transpose=32,8"`` for one. One value
    without a kernel name gives a plain block; otherwise a mapping (None: the other kernels)."""
    out: dict[str | None, tuple[int, int, int]] = {}
    for text in texts:
        name, eq, dims = text.rpartition("=")
        if eq and not name.strip().isidentifier():
            raise ValueError(f"block {text!r}: give X[,Y[,Z]] or KERNEL=X[,Y[,Z]]")
        out[name.strip() or None] = parse_block(dims)
    if not out:
        return None
    if list(out) == [None]:
        return out[None]
    return out


def parse_defines(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["s=2", "T=float", "transpose:height=2048"]`` -> {"s": 2, "T": "float", "transpose:height": 2048}
    (numbers as int/float, other values as text; ``KERNEL:NAME`` applies to that kernel only)."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        kernel, colon, param = name.partition(":")
        if not sep or not (name.isidentifier() or colon and kernel.isidentifier() and param.isidentifier()) \
                or value.strip().endswith("\\") or set(value) & set("\n\r\x00"):
            raise ValueError(f"define {item!r}: give NAME=VALUE or KERNEL:NAME=VALUE (a value ending in a backslash "
                             "or holding a line break is refused: it would continue the #define)")
        v = E.parse_number(value.strip())
        out[name] = v if v is not None else value.strip()
    return out


def launch_values(launch: ResolvedLaunch, defines: Mapping[str, Any]) -> tuple[dict[str, int | float], dict[str, str]]:
    """The scalar and template parameter values ``launch`` passes (a range at its default) and a
    note for each, leaving out the names ``defines`` sets (the user's ``--define`` wins)."""
    values: dict[str, int | float] = {}
    notes: dict[str, str] = {}
    for name, v in launch.params:
        n = number(v)
        if n is None or name in defines:
            continue
        values[name] = n
        notes[name] = next((t for t in launch.notes if t.startswith(f"{name} = ")),
                           f"{name} = {n:g} ({launch.describe()})")
    return values, notes


def analyze_model(model: SourceModel, block: UserBlock = None,
                  defines: Mapping[str, Any] | None = None, budget: Budget | None = None,
                  launches: LaunchTable | None = None) -> SourceModel:
    """Return ``model`` with every kernel's accesses and branches evaluated, each under the launch
    the project's launch table gives it (``launches``; by default the launches of ``model`` alone).

    ``budget`` (default: a fresh :class:`~cudalens.source.limits.Budget`) bounds the time and
    memory; a kernel reached after it is spent keeps its unevaluated accesses and says so.
    """
    from cudalens.source.scope import FileScope

    budget = budget or Budget()
    defines = dict(defines or {})
    numeric = {k: v for k, v in defines.items() if not isinstance(v, str)}
    macros = FileScope(dict(model.defines)).macro_values(numeric)
    table = launches if launches is not None else resolve_models([model])
    kernels = []
    for k in model.kernels:
        try:
            budget.check()
            k = dataclasses.replace(k, launch=table.resolve(k, block, defines),
                                    launches=table.distinct(k, block, defines))
            kernels.append(_analyze_kernel(k, with_type_args(k, kernel_defines(defines, k.name)), macros, budget))
        except BudgetExceeded as exc:
            kernels.append(dataclasses.replace(k, problems=k.problems + (
                f"kernel {k.name}: unmodelled: access model ({exc.what})",)))
        except Exception as exc:  # noqa: BLE001 - a model failure must not take the report down
            kernels.append(dataclasses.replace(
                k, problems=k.problems + (f"access model failed ({what_failed(exc)})",)))
    return dataclasses.replace(model, kernels=tuple(kernels))


class _KernelEval:
    """Evaluation context for one kernel: block, known values, trial values for unknown integers."""

    def __init__(self, kernel: Kernel, block: tuple[int, int, int], grid: tuple[int, int, int] | None,
                 defines: Mapping[str, Any], macros: Mapping[str, Any],
                 launched: tuple[dict[str, Any], dict[str, str]] = ({}, {})) -> None:
        self.block = block
        self.nthreads = block[0] * block[1] * block[2]
        base: dict[str, Any] = dict(macros)
        base.update(launched[0])  # below the user's --define (launch_values leaves those out anyway)
        self.launch_notes = dict(launched[1])
        for name, v in defines.items():
            if not isinstance(v, str):
                base[name] = v
        for i, c in enumerate("xyz"):
            base[f"blockDim.{c}"] = block[i]
            if grid is not None:
                base[f"gridDim.{c}"] = grid[i]
        base["warpSize"] = 32
        base.update(L.block_coordinates(block))
        self.base = base
        self.trialable = {p.name for p in kernel.params if not p.is_pointer} | set(kernel.template_params) | {
            f"gridDim.{c}" for c in "xyz"}
        self.type_defines = {k: v for k, v in defines.items() if isinstance(v, str)}

    def needed(self, exprs: list[E.Expr], loops: tuple[Any, ...]) -> set[str]:
        """Every symbol the expressions and loop bounds use, through macro values."""
        need: set[str] = set()
        for e in exprs:
            if e is not None:
                need |= E.symbols(e)
        for _sym, start, step, _line in loops:
            need |= E.symbols(start) | E.symbols(step)
        for name in list(need):
            v = self.base.get(name)
            if isinstance(v, tuple):
                need |= E.symbols(v)
        return need

    def launch_assumptions(self, exprs: list[E.Expr], loops: tuple[Any, ...]) -> list[str]:
        """The launch-site notes of the parameters these expressions use."""
        need = self.needed(exprs, loops)
        return [note for name, note in sorted(self.launch_notes.items()) if name in need]

    def value_sets(self, exprs: list[E.Expr], loops: tuple[Any, ...]) -> tuple[list[dict[str, Any]], list[str]]:
        """Value dictionaries to evaluate with (one per trial), and the names that were trialled."""
        need = self.needed(exprs, loops)
        loop_syms = {lp[0] for lp in loops}
        missing = sorted(n for n in need if n not in self.base and n not in loop_syms and not n.startswith("__"))
        trial = [n for n in missing if n in self.trialable]
        sets = []
        for tv in (TRIAL_VALUES if trial else TRIAL_VALUES[:1]):
            vals = dict(self.base)
            for n in trial:
                vals[n] = tv
            for sym, start, _step, _line in loops:
                if sym:
                    vals[sym] = start
            sets.append(vals)
        return sets, trial

    def with_block(self, vals: dict[str, Any], bidx: tuple[int, int, int]) -> dict[str, Any]:
        out = dict(vals)
        for i, c in enumerate("xyz"):
            out[f"blockIdx.{c}"] = bidx[i]
        return out

    def mask(self, mask_expr: E.Expr | None, vals: Mapping[str, Any]) -> tuple[np.ndarray, bool]:
        """Active threads and whether the mask could be evaluated."""
        if mask_expr is None:
            return np.ones(self.nthreads, dtype=bool), True
        try:
            return L.per_thread(L.evaluate(mask_expr, vals), self.nthreads) != 0, True
        except (E.Unknown, ValueError, TypeError, OverflowError, RecursionError):
            return np.ones(self.nthreads, dtype=bool), False


def _analyze_kernel(k: Kernel, defines: Mapping[str, Any], macros: Mapping[str, Any], budget: Budget) -> Kernel:
    launch: ResolvedLaunch = k.launch
    block = launch.block if isinstance(launch.block, tuple) else DEFAULT_BLOCK
    grid = launch.grid if isinstance(launch.grid, tuple) else None
    ev = _KernelEval(k, block, grid, defines, macros, launch_values(launch, defines))
    # one budget check per access evaluated (check() raises when the budget is spent)
    accesses = mark_complementary([(budget.check(), _access(a, ev))[1] for a in k.accesses], ev)  # type: ignore[func-returns-value]
    branches = []
    for b in k.branches:
        budget.check()
        branches.append(_branch(b, ev))
    return dataclasses.replace(k, accesses=tuple(accesses), branches=tuple(branches), block_dims=block)


def _width(a: Access, ev: _KernelEval) -> int | None:
    if a.bytes_per_thread is not None:
        return a.bytes_per_thread
    if a.element_type and a.element_type in ev.type_defines:
        return element_bytes(ev.type_defines[a.element_type])
    return None


def _access(a: Access, ev: _KernelEval) -> Access:
    width = _width(a, ev)
    if a.index_expr is None:
        return a
    if E.unknowns(a.index_expr) or any(E.unknowns(lp[1]) for lp in a.loop_context if lp[0] and sym_used(a.index_expr, lp[0])):
        return dataclasses.replace(a, bytes_per_thread=width, pattern="data-dependent")
    sets, trial = ev.value_sets([a.index_expr, a.mask_expr], a.loop_context)
    verdicts = []
    assumptions: list[str] = ev.launch_assumptions([a.index_expr, a.mask_expr], a.loop_context)
    try:
        for vals in sets:
            verdicts.append(_verdict(a, ev, vals, width, assumptions))
    except (E.Unknown, ValueError, TypeError, OverflowError, RecursionError, MemoryError):
        return dataclasses.replace(a, bytes_per_thread=width, pattern="data-dependent")
    if trial:
        for v in verdicts:
            v.pop("row_pitch", None)  # a pitch built from a trial value is not a fact
    if any(v != verdicts[0] for v in verdicts[1:]):
        return dataclasses.replace(a, bytes_per_thread=width, pattern="parameter-dependent",
                                   assumptions=tuple(ev.launch_assumptions([a.index_expr, a.mask_expr], a.loop_context))
                                   + (f"depends on {', '.join(trial)}",))
    if trial:
        assumptions.append(f"{', '.join(trial)} unknown: verdict identical for values {TRIAL_VALUES}")
    fields = dict(verdicts[0])
    return dataclasses.replace(a, bytes_per_thread=width, assumptions=tuple(dict.fromkeys(assumptions)), **fields)


def _verdict(a: Access, ev: _KernelEval, vals: dict[str, Any], width: int | None,
             assumptions: list[str]) -> dict[str, Any]:
    """The figures of one access for one set of values, over the representative blocks."""
    idx_rows, act_rows = [], []
    for bidx in _BLOCKS if a.space in ("global", "constant") else _BLOCKS[:1]:
        bv = ev.with_block(vals, bidx)
        idx = L.per_thread(L.evaluate(a.index_expr, bv), ev.nthreads)
        act, ok = ev.mask(a.mask_expr, bv)
        if not ok:
            assumptions.append("guarding condition not evaluable: all lanes assumed active")
        idx_rows.append(L.as_warps(idx, ev.nthreads, 0))
        act_rows.append(L.as_warps(act, ev.nthreads, False))
    index = np.concatenate(idx_rows)
    active = np.concatenate(act_rows)
    live = active.any(axis=1)
    if not live.any():
        return {"pattern": "inactive"}
    index, active = index[live], active[live]
    stride = M.lane_stride(index, active)
    distinct = M.distinct_addresses(index, active)
    out: dict[str, Any] = {"lane_stride": stride}
    if stride not in (None, 0, 1) and not bool(active.all()) and M.lane_stride(index[:1], np.ones_like(active[:1])) == 1:
        out["stride_from_mask"] = True  # unit stride over all lanes: the gaps are the branch's idle lanes
    if a.space == "constant":
        d = float(distinct.mean())
        out.update(distinct_addresses=d, pattern="broadcast" if d == 1 else "divergent-addresses")
        return out
    if a.space == "local":
        varies = stride != 0 and not bool((distinct == 1).all())
        out.update(pattern="dynamic-index" if _has_thread_symbols(a.index_expr) or varies else "constant-index")
        return out
    if width is None:
        out.update(pattern="unknown-width")
        return out
    addr = index * width
    if a.space == "global":
        sectors, ideal = M.global_sectors(addr, active, width)
        s, i = float(sectors.mean()), float(ideal.mean())
        if bool((distinct == 1).all()):
            pattern = "broadcast"
        elif s <= i + 1e-9:
            pattern = "coalesced"
        elif stride == 1:
            pattern = "misaligned"
        elif stride is not None and stride not in (0, 1):
            pattern = f"strided-{abs(stride)}"
        else:
            pattern = "uncoalesced"
        out.update(sectors_per_request=round(s, 4), ideal_sectors_per_request=round(i, 4), pattern=pattern)
        if a.op == "load" and a.loop_context:
            out["reuse"] = _reuse(a, ev, vals, index, active)
        if a.op == "load" and stride is not None and abs(stride) >= 2 and s > i + 1e-9:
            out["staging"] = staging(a, ev, ev.with_block(vals, _BLOCKS[0]), abs(stride), width)
        if ev.block[1] > 1 and ev.block[0] < ev.nthreads:
            row0 = index[0][: ev.block[0]]
            nxt = index.reshape(-1)[ev.block[0]: 2 * ev.block[0]]
            diffs = np.unique(nxt - row0) if len(nxt) == len(row0) else np.array([])
            out["row_pitch"] = int(diffs[0]) if len(diffs) == 1 else None
        return out
    ways, waves, ideal_w = M.shared_wavefronts(addr, active, width)
    w = float(ways.mean())
    out.update(bank_conflict_ways=round(w, 4), wavefronts_per_request=round(float(waves.mean()), 4),
               ideal_wavefronts_per_request=round(float(ideal_w.mean()), 4),
               pattern="broadcast" if bool((distinct == 1).all()) else
               ("conflict-free" if bool((ways == 1).all()) else f"{int(ways.max())}-way-conflict"))
    if a.op == "load" and a.loop_context and _iteration_step(a, ev, vals) == 1:
        out["vectorized_wavefronts"] = {
            w: round(float(M.shared_wavefronts(addr - addr % w, active, w)[1].mean()), 4)
            for w in (8, 16) if w > width and w % width == 0}
    return out


def _iteration_step(a: Access, ev: _KernelEval, vals: dict[str, Any]) -> int | None:
    """Elements every thread's index advances by from one iteration of the innermost loop to the
    next, when that is one number for all threads of block 0 (None otherwise or when unknown)."""
    inner = next((lp for lp in reversed(a.loop_context) if lp[0]), None)
    if inner is None or E.unknowns(inner[2]):
        return None
    sym, start, step, _line = inner
    nxt = ev.with_block(dict(vals), _BLOCKS[0])
    nxt[sym] = ("b", "+", start, step)
    try:
        again = L.per_thread(L.evaluate(a.index_expr, nxt), ev.nthreads)
        first = L.per_thread(L.evaluate(a.index_expr, ev.with_block(vals, _BLOCKS[0])), ev.nthreads)
    except (E.Unknown, ValueError, TypeError, OverflowError):
        return None
    diff = np.unique(np.asarray(again) - np.asarray(first))
    return int(diff[0]) if diff.size == 1 else None


def _has_thread_symbols(e: E.Expr) -> bool:
    return any(s.startswith(("threadIdx", "blockIdx")) or "@" in s for s in E.symbols(e))


def _reuse(a: Access, ev: _KernelEval, vals: dict[str, Any], index: np.ndarray, active: np.ndarray) -> dict[str, Any]:
    """Block-level re-use of a global load inside loops (facts for G8 and SH2).

    ``invariant_in_loop``: the innermost enclosing loop's next iteration reads the same addresses
    (None when the loop's step is unknown). ``threads_per_element``: active threads of block 0 per
    distinct element they read in one iteration.
    """
    inner = next((lp for lp in reversed(a.loop_context) if lp[0]), None)
    nwarps_b0 = -(-ev.nthreads // 32)
    b0_idx, b0_act = index[:nwarps_b0], active[:nwarps_b0]
    vals_act = b0_idx[b0_act]
    tpe = float(vals_act.size / max(len(np.unique(vals_act)), 1))
    invariant: bool | None = None
    loop_line = a.loop_context[-1][3]
    if inner is not None:
        sym, start, step, loop_line = inner
        if sym not in E.symbols(a.index_expr) and not any(sym in E.symbols(lp[1]) for lp in a.loop_context):
            invariant = True
        elif not E.unknowns(step):
            nxt = ev.with_block(dict(vals), _BLOCKS[0])
            nxt[sym] = ("b", "+", start, step)
            try:
                again = L.per_thread(L.evaluate(a.index_expr, nxt), ev.nthreads)
                first = L.per_thread(L.evaluate(a.index_expr, ev.with_block(vals, _BLOCKS[0])), ev.nthreads)
                invariant = bool(np.array_equal(again, first))
            except (E.Unknown, ValueError, TypeError, OverflowError):
                invariant = None
    return {"loop_line": loop_line, "invariant_in_loop": invariant, "threads_per_element": round(tpe, 3)}


def _branch(b: Branch, ev: _KernelEval) -> Branch:
    cond = b.condition_expr
    if cond is None or E.unknowns(cond):
        return b
    sets, trial = ev.value_sets([cond, b.mask_expr], b.loop_context)
    verdicts = set()
    for vals in sets:  # with unknown integers tried at several values, only a verdict they all give
        split = warps = most_taken = 0  # most_taken: most lanes taking it in a split warp (1: single lane)
        try:
            for bidx in _BLOCKS:
                bv = ev.with_block(vals, bidx)
                c = L.per_thread(L.evaluate(cond, bv), ev.nthreads) != 0
                act, ok = ev.mask(b.mask_expr, bv)
                if not ok and trial:
                    return b
                cw, aw = L.as_warps(c, ev.nthreads, False), L.as_warps(act, ev.nthreads, False)
                taken, live = (cw & aw).sum(axis=1), aw.sum(axis=1)
                splits = (taken > 0) & (taken < live)
                split += int(splits.sum())
                warps += int((live > 0).sum())
                if splits.any():
                    most_taken = max(most_taken, int(taken[splits].max()))
        except (E.Unknown, ValueError, TypeError, OverflowError, RecursionError):
            return b
        verdicts.add((split, warps, most_taken))
    if len(verdicts) != 1:
        return b  # depends on a value nobody gave: not established
    split, warps, most_taken = verdicts.pop()
    return dataclasses.replace(b, divergent=split > 0, divergent_warps=split, warps=warps,
                               lanes_taken=most_taken if split else None)
