"""Nsight Compute's per-instruction source page, read per source line, and the compiled access
model's predictions checked against the counters of their own instructions.

``ncu --import REP --csv --page source --print-source cuda,sass --print-kernel-base mangled``
prints, per kernel and source file: a ``"File Path"`` row, a ``"Function Name"`` row, a header
(``"Line No","Source","Address","Source",<metrics>``), then for every source line its totals row
followed by the SASS rows attributed to it (first two cells empty). The build needs ``-lineinfo``.
``--print-source sass`` (no line rows; ``"Kernel Name"`` rows) is read too, without lines.

Per line, from the SASS rows of each class (by opcode; generic LD/ST by the Address Space column),
the quantities of :mod:`cudalens.quantities` that name source-page columns, each with its tolerance:

- global load/store sectors per request: sum of ``L2 Theoretical Sectors Global`` over the sum of
  ``Instructions Executed`` (a warp's execution of one instruction is one request; the model counts
  the same way, a predicated-off execution included);
- shared load/store wavefronts per request: the sum of ``L1 Wavefronts Shared`` over the sum of
  ``Instructions Executed``, compared with the model's wavefronts per request (a conflict-free 4-byte
  access is one wavefront; a unit-stride ``LDS.128`` four). ncu's ``L1 Conflicts Shared N-Way`` is the
  whole part of that ratio per instruction over the whole grid (so one partial warp among full ones
  prints 1 for 1.97); an export without the wavefront column compares it, averaged over the
  executions, with the model's N-way (``LinePrediction.nway``) instead ("conflict ways").

A predicated SASS instruction (``@P``) that executed also counts the executions in which all its lanes
were off: global lines with one are compared as sectors over ideal sectors, shared lines with the
model's figure that counts those executions too (no wavefront each: ``LinePrediction.value_predicated``,
``nway_predicated``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from cudalens.errors import InputError
from cudalens.profile.ncu_cas import cas_load
from cudalens.quantities import QUANTITIES, Quantity, line_quantity


@dataclass(frozen=True)
class SassRow:
    kernel: str
    file: str | None
    line: int | None
    address: str
    sass: str
    executed: float  # Instructions Executed (warp level)
    sectors: float | None  # L2 Theoretical Sectors Global
    ideal_sectors: float | None
    nway: float | None  # L1 Conflicts Shared N-Way
    space: str  # Address Space column ("Global", "Shared", "Local", "" when blank)
    threads: float | None  # Avg. Predicated-On Threads Executed
    wavefronts: float | None = None  # L1 Wavefronts Shared (None: not in the export)

    @property
    def opcode(self) -> str:
        parts = self.sass.strip().split()
        if not parts:
            return ""
        return parts[1] if parts[0].startswith("@") and len(parts) > 1 else parts[0]


def _num(v: str | None) -> float | None:
    if v is None:
        return None
    v = v.strip().replace(",", "")
    if v in ("", "-", "n/a"):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def parse_source_csv(text: str) -> tuple[SassRow, ...]:
    """The SASS rows of an ``ncu --csv --page source`` export (cuda,sass or sass view)."""
    out: list[SassRow] = []
    seen: set[tuple[str, str]] = set()  # an instruction listed again under the same kernel counts once
    kernel = file = None
    line: int | None = None
    header: list[str] | None = None
    offset = 0  # index of "Address" in the header
    for row in csv.reader(io.StringIO(text)):
        if not row or (row[0].startswith("#") and len(row) == 1):
            continue
        head = row[0].strip()
        if "Block Size" in row and "Grid Size" in row and "Metric Name" in row:  # a details page (ncu_launch)
            kernel = header = line = None
            continue
        if head in ("Kernel Name", "Function Name") and len(row) >= 2:
            kernel, header, line = row[1], None, None
            continue
        if head == "File Path" and len(row) >= 2:
            file, header, line = row[1], None, None
            continue
        if head in ("Line No", "Address", "# Address"):
            header = row
            offset = row.index("Address") if "Address" in row else 0
            continue
        if header is None or kernel is None or len(row) < len(header):
            continue
        if head.isdigit() and offset > 0:
            line = int(head)
            continue
        addr = row[offset].strip()
        if not addr.startswith("0x") or (kernel, addr) in seen:
            continue
        seen.add((kernel, addr))
        rec = dict(zip(header[offset:], row[offset:]))
        sass = row[offset + 1]
        out.append(SassRow(kernel, file if offset > 0 else None, line if offset > 0 else None, addr, sass,
                           _num(rec.get("Instructions Executed")) or 0.0, _num(rec.get("L2 Theoretical Sectors Global")),
                           _num(rec.get("L2 Theoretical Sectors Global Ideal")), _num(rec.get("L1 Conflicts Shared N-Way")),
                           (rec.get("Address Space") or "").strip(), _num(rec.get("Avg. Predicated-On Threads Executed")),
                           _num(rec.get("L1 Wavefronts Shared"))))
    if text.strip() and not out and "Address" not in text:
        raise InputError("not an Nsight Compute source page (ncu --csv --page source --print-source cuda,sass)")
    return tuple(out)


def sass_class(row: SassRow) -> tuple[str, str] | None:
    """(space, op) of a memory instruction, None for others."""
    op = row.opcode.split(".")[0]
    if op in ("LDG", "LDGSTS"):
        return "global", "load"
    if op == "STG":
        return "global", "store"
    if op in ("LDS", "LDSM"):
        return "shared", "load"
    if op == "STS":
        return "shared", "store"
    if op in ("LD", "ST") and row.space in ("Global", "Shared"):
        return row.space.lower(), "load" if op == "LD" else "store"
    return None


def _atomic_space(row: SassRow) -> str:
    """The space (shared, global) of an atomic or reduction SASS instruction; "" for others."""
    op = row.opcode.split(".")[0]
    if op == "ATOMS":
        return "shared"
    if op in ("ATOMG", "RED", "REDG") or (op == "ATOM" and row.space == "Global"):
        return "global"
    return "shared" if op == "ATOM" and row.space == "Shared" else ""


@dataclass(frozen=True)
class LineCounter:
    kernel: str
    file: str
    line: int
    space: str
    op: str
    executed: float
    instructions: int
    sectors_per_request: float | None  # global
    ideal_sectors_per_request: float | None
    nway: float | None  # shared: average N-way conflict per executed instruction
    threads: float | None
    predicated: bool = False  # some executed SASS instruction of the class on the line carries a predicate (@P)
    sectors_per_ideal: float | None = None  # global: sectors over ideal sectors (ratio of sums)
    atomic: bool = False  # the line also holds an atomic of the space (ptxas may expand one into a load + CAS loop)
    # shared: L1 Wavefronts Shared over the executions (ratio of sums; None where the export lacks the column)
    wavefronts_per_request: float | None = None
    cas_loop: bool = False  # an instruction of the line lies in a loop (a backward branch) holding a compare-and-swap


def _cas_loops(rows: tuple[SassRow, ...]) -> dict[str, list[tuple[int, int]]]:
    """Per kernel, the address ranges of loops (a branch back to a lower address) that hold an
    atomic compare-and-swap (``ATOMG.E.CAS``): a retry loop, whose trips depend on contention."""
    def addr(a: str) -> int | None:
        try:
            return int(a, 16)
        except ValueError:
            return None

    cas: dict[str, list[int]] = {}
    for r in rows:
        a = addr(r.address)
        if a is not None and r.opcode.startswith("ATOM") and "CAS" in r.opcode.split("."):
            cas.setdefault(r.kernel, []).append(a)
    out: dict[str, list[tuple[int, int]]] = {}
    for r in rows:
        words = r.sass.split()
        if r.kernel not in cas or "BRA" not in [w.split(".")[0] for w in words]:
            continue
        a, target = addr(r.address), addr(words[-1]) if words[-1].startswith("0x") else None
        if a is not None and target is not None and target < a and any(target <= c <= a for c in cas[r.kernel]):
            out.setdefault(r.kernel, []).append((target, a))
    return out


def line_counters(rows: Iterable[SassRow]) -> dict[tuple[str, str, int, str, str], LineCounter]:
    """Per (kernel, file, line, space, op): the line's memory instructions' counters summed."""
    acc: dict[tuple[str, str, int, str, str], dict[str, Any]] = {}
    seen: set[tuple[str, str]] = set()
    rows = tuple(rows)
    atomics = {(r.kernel, r.file or "", r.line, _atomic_space(r)) for r in rows if _atomic_space(r)}
    loops = _cas_loops(rows)
    in_loop: set[tuple[Any, ...]] = set()  # (kernel, file, line, space, op) of memory instructions in such loops
    for r in rows:
        at = int(r.address, 16) if r.kernel in loops and r.address.startswith("0x") else None
        cls = sass_class(r)
        if at is not None and cls is not None and any(lo <= at <= hi for lo, hi in loops[r.kernel]):
            in_loop.add((r.kernel, r.file or "", r.line, *cls))
    for r in rows:
        cls = sass_class(r)
        if cls is None or r.line is None or (r.kernel, r.address) in seen:
            continue
        seen.add((r.kernel, r.address))
        key = (r.kernel, r.file or "", r.line, *cls)
        a = acc.setdefault(key, {"ex": 0.0, "n": 0, "sec": 0.0, "ideal": 0.0, "nway": 0.0, "thr": 0.0, "pred": False,
                                 "wf": 0.0})
        a["n"] += 1
        # a predicated instruction that never executed (ptxas put it behind a branch too) adds no execution
        a["pred"] = a["pred"] or (r.sass.strip().startswith("@") and r.executed > 0)
        a["ex"] += r.executed
        a["sec"] += r.sectors or 0.0
        a["ideal"] += r.ideal_sectors or 0.0
        a["nway"] += (r.nway or 0.0) * r.executed
        a["wf"] = None if a["wf"] is None or r.wavefronts is None else a["wf"] + r.wavefronts
        a["thr"] += (r.threads or 0.0) * r.executed
    out = {}
    for key, a in acc.items():
        ex = a["ex"]
        glob = key[3] == "global"
        out[key] = LineCounter(*key, executed=ex, instructions=a["n"],
                               sectors_per_request=round(a["sec"] / ex, 4) if ex and glob else None,
                               ideal_sectors_per_request=round(a["ideal"] / ex, 4) if ex and glob else None,
                               nway=round(a["nway"] / ex, 4) if ex and not glob else None,
                               threads=round(a["thr"] / ex, 3) if ex else None, predicated=a["pred"],
                               sectors_per_ideal=round(a["sec"] / a["ideal"], 4) if glob and a["ideal"] else None,
                               atomic=key[:4] in atomics, cas_loop=key in in_loop,
                               wavefronts_per_request=round(a["wf"] / ex, 4) if ex and not glob and a["wf"] is not None
                               else None)
    return out


@dataclass(frozen=True)
class LineCheck:
    kernel: str
    file: str
    line: int
    quantity: str
    predicted: float | None
    measured: float | None
    agree: bool | None
    layer: str
    reason: str = ""
    executed: float = 0.0
    low: float | None = None  # a predicted range (``predicted`` None): agrees when the measured value lies
    high: float | None = None  # in [low, high], each end widened by the quantity's tolerance

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def measured_value(c: LineCounter) -> tuple[Quantity, float | None, str]:
    """(the quantity compared, value, why None). A predicated SASS instruction also counts the executions in
    which all its lanes were off, so per-request figures are not measurable there: global lines then
    compare sectors over ideal sectors (independent of that count); shared lines compare the model's
    figure that counts those executions too (``value_predicated``, ``nway_predicated``). Shared lines
    compare wavefronts per execution where the export has "L1 Wavefronts Shared" (ncu's N-way is the
    whole part of that ratio per instruction over the whole grid: one partial warp anywhere turns a
    2.0 into 1), else ncu's N-way."""
    if c.space == "global":
        if c.predicated:
            return (line_quantity(c.space, c.op, "sectors/ideal"), c.sectors_per_ideal,
                    "" if c.sectors_per_ideal is not None else "no active lanes")
        return line_quantity(c.space, c.op, "sectors/request"), c.sectors_per_request, ""
    if c.wavefronts_per_request is not None:
        return line_quantity(c.space, c.op, "wavefronts/request"), c.wavefronts_per_request, ""
    return line_quantity(c.space, c.op, "conflict ways"), c.nway, ""


def _access_of(p: Any) -> tuple[str, str]:
    """(space, op) of the accesses a prediction's quantity is of; ("", "") for others (branches)."""
    q = QUANTITIES.get(p.quantity)
    return (q.space, q.op) if q is not None else ("", "")


def _combine(cands: list[Any]) -> Any:
    """One prediction for a measured line holding the SASS of several PTX lines: their figures
    averaged over their warp requests, as the counters average over executions. A null among them
    makes the whole null with its reason (a data dependence first); ranges give the range of the
    average (each end the average of the ends)."""
    if len(cands) == 1:
        return cands[0]
    nulls = [p for p in cands if p.value is None and p.low is None]
    if nulls:
        return min(nulls, key=lambda p: not p.reason.startswith("data-dependent"))
    w = [max(int(getattr(p, "requests", 0) or 0), 0) for p in cands]
    total = sum(w)
    if total == 0:
        return None

    def avg(values: list[float | None]) -> float | None:
        known = [float(v) for v in values if v is not None]
        return None if len(known) < len(values) else round(sum(v * k for v, k in zip(known, w)) / total, 4)

    lows = [p.value if p.value is not None else p.low for p in cands]
    highs = [p.value if p.value is not None else p.high for p in cands]
    ways = [getattr(p, "nway", None) for p in cands]
    ways_lo = [n if n is not None else getattr(p, "nway_low", None) for n, p in zip(ways, cands)]
    ways_hi = [n if n is not None else getattr(p, "nway_high", None) for n, p in zip(ways, cands)]
    ideal = avg([getattr(p, "ideal", None) for p in cands])
    if all(p.value is not None for p in cands):
        preds = [getattr(p, "nway_predicated", None) for p in cands]
        vpreds = [getattr(p, "value_predicated", None) for p in cands]
        return replace(cands[0], value=avg(lows), nway=avg(ways), ideal=ideal, requests=total, reason="",
                       nway_predicated=None if all(x is None for x in preds) else avg(
                           [x if x is not None else n for x, n in zip(preds, ways)]),
                       value_predicated=None if all(x is None for x in vpreds) else avg(
                           [x if x is not None else v for x, v in zip(vpreds, lows)]))
    return replace(cands[0], value=None, low=avg(lows), high=avg(highs), nway=None, nway_low=avg(ways_lo),
                   nway_high=avg(ways_hi), ideal=ideal, requests=total,
                   reason=next(p.reason for p in cands if p.value is None))


def _placed_here(by_key: Mapping[tuple[str, int, str, str], Any], has_sass: set, missing: set, file: str, line: int,
                 space: str, op: str, unit: str, spread: Iterable[Any] = ()) -> tuple[Any, str]:
    """The prediction to compare with a measured line that has no PTX instruction of its class, and
    how it was found. Its SASS comes from PTX accesses of the class that have no SASS of the class on
    their own line (or no line at all: ``.loc`` line 0), which ptxas placed elsewhere:

    1. inlined helper lines called from this line: all of them, combined (:func:`_combine`);
    2. else the unplaced accesses no other such line calls: combined when this is the only measured
       line of the class without PTX, else their figure when they all give the same one;
    3. else, where inlined helper lines called from here have SASS of their own and ptxas placed
       only part of them here, the range of their instructions' figures (:func:`_part_placed`;
       ``spread``: helper lines inlined at several calls, used only there, per call).
    """
    orphans = {key: p for key, p in by_key.items() if key[2:] == (space, op) and key not in has_sass}
    sited = [p for p in orphans.values() if (file, line) in getattr(p, "call_sites", ())]
    if sited:
        return _combine(sited), "attributed through the inlining chain: "
    same = {(f, ln) for (f, ln, s, o) in missing if (s, o) == (space, op)}
    free = [p for p in orphans.values() if not any(site in same for site in getattr(p, "call_sites", ()))]
    if not free:
        return _part_placed(by_key, file, line, space, op, spread, unit)
    where = ", ".join(f"{Path(p.file).name}:{p.line}" for p in free[:4]) + (" ..." if len(free) > 4 else "")
    if len(same) == 1:
        return _combine(free), f"ptxas placed here the SASS of the PTX at {where}: "
    if len({_compared(p, unit) for p in free}) == 1:
        return free[0], f"ptxas placed here SASS of the PTX at {where}, which all give this figure: "
    return _part_placed(by_key, file, line, space, op, spread, unit)


def _part_placed(by_key: Mapping[tuple[str, int, str, str], Any], file: str, line: int, space: str,
                 op: str, spread: Iterable[Any] = (), unit: str = "") -> tuple[Any, str]:
    """An inlined helper whose lines have SASS of their own, and part of it placed at this call:
    the range between the lowest and the highest figure of one of its instructions called from
    here (the measured line averages some of them), widened by the helper's own range where that is
    data-dependent; when the helper's figure is null, or varies with the parameters (the instructions'
    figures are one trial's), its reason."""
    preds = [*by_key.items(), *(((p.file, p.line, *_access_of(p)), p) for p in spread)]
    cands = [(p, b) for (f, ln, s, o), p in preds if (s, o) == (space, op)
             for b in getattr(p, "site_bounds", ()) if (b[0], b[1]) == (file, line)]
    if not cands:
        return None, ""
    nulls = [p for p, _b in cands if p.value is None and p.low is None]
    if nulls:  # what the helper's figure depends on, the part placed here depends on too
        return _combine(nulls), f"ptxas placed part of the inlined code of {Path(nulls[0].file).name}:{nulls[0].line} here: "
    varying = [p for p, _b in cands if p.value is None and p.reason.startswith("varies with parameters")]
    if varying:  # the instructions' figures are those of one trial, not of the launch measured
        v = varying[0]
        return replace(v, value=None, low=None, high=None, nway=None, nway_low=None, nway_high=None,
                       nway_predicated=None, reason=f"ptxas placed part of the inlined code of {Path(v.file).name}:"
                       f"{v.line} here, whose figure varies with parameters nobody gave: not established"), ""
    lo, hi = min(b[2] for _p, b in cands), max(b[3] for _p, b in cands)
    ways = [(b[4], b[5]) for _p, b in cands if b[4] is not None]
    ranged = {id(p): p for p, _b in cands if p.value is None}.values()  # a data-dependent helper figure:
    for p in ranged:  # the part placed here may lie anywhere in its range too
        lo, hi = min(lo, p.low), max(hi, p.high)
        ways += [(p.nway_low, p.nway_high)] if getattr(p, "nway_low", None) is not None else []
    where = ", ".join(sorted({f"{Path(p.file).name}:{p.line}" for p, _b in cands}))
    reason = (f"ptxas placed part of the inlined code of {where} here: the figure lies between those "
              f"instructions' figures" + (" and their data-dependent ranges" if ranged else ""))
    several = {id(p) for p in spread} & {id(p) for p, _b in cands}  # its ideal averages all its calls
    ratios = [(b[6], b[7]) for _p, b in cands if len(b) > 7 and b[6] is not None]
    if unit == "sectors/ideal" and len(ratios) == len(cands) and all(p.ideal for p in ranged):
        # compared as sectors over ideal sectors: the range of one instruction's ratio at this call (ideal 1)
        lo = min([r[0] for r in ratios] + [p.low / p.ideal for p in ranged])
        hi = max([r[1] for r in ratios] + [p.high / p.ideal for p in ranged])
        return replace(cands[0][0], value=None, low=round(lo, 4), high=round(hi, 4), nway=None, nway_predicated=None,
                       ideal=1.0, nway_low=None, nway_high=None, reason=reason + " (sectors over ideal sectors)"), ""
    return replace(cands[0][0], value=None, low=lo, high=hi, nway=None, nway_predicated=None,
                   ideal=None if several else cands[0][0].ideal,
                   nway_low=min((w[0] for w in ways), default=None), nway_high=max((w[1] for w in ways), default=None),
                   reason=reason), ""


def _compared(p: Any, unit: str, predicated: bool = False) -> tuple[float | None, float | None, float | None]:
    """(number, low, high) of a prediction in the unit of the measurement: shared lines compare the
    model's wavefronts per request, or its N-way (whole wavefronts per execution of each
    instruction, as ncu prints it) where the export has no wavefronts; where the SASS is predicated,
    over the executions of warps with no lane on too. Global lines with predicated SASS compare
    sectors over ideal sectors."""
    if unit == "wavefronts/request":
        if predicated and getattr(p, "value_predicated", None) is not None:
            return p.value_predicated, None, None
        if predicated and getattr(p, "value_predicated_range", None) is not None:
            return None, *p.value_predicated_range
        if p.value is not None or not predicated or getattr(p, "nway_low", None) != 0.0:
            return p.value, p.low, p.high
        return None, 0.0, p.high  # lanes the loaded data decides: predicated off in every lane, no wavefront
    if unit == "conflict ways":
        nway = getattr(p, "nway", None)
        if predicated and getattr(p, "nway_predicated", None) is not None:
            return p.nway_predicated, None, None
        if predicated and getattr(p, "nway_predicated_range", None) is not None:
            return None, *p.nway_predicated_range
        if p.value is not None:
            return (nway if nway is not None else p.value), None, None
        lo, hi = getattr(p, "nway_low", None), getattr(p, "nway_high", None)
        return None, (p.low if lo is None else lo), (p.high if hi is None else hi)
    if unit == "sectors/ideal":
        if not p.ideal:
            return (None, *p.ratio_range) if getattr(p, "ratio_range", None) and p.value is None else (None, None, None)
        if p.value is not None:
            return round(p.value / p.ideal, 4), None, None
        return None, (None if p.low is None else round(p.low / p.ideal, 4)), (
            None if p.high is None else round(p.high / p.ideal, 4))
    return p.value, p.low, p.high


def check_lines(predictions: Iterable[Any], counters: Mapping[tuple[str, str, int, str, str], LineCounter],
                kernel: str, files: Iterable[str] | None = None, spread: Iterable[Any] = ()) -> list[LineCheck]:
    """Every measured (line, space, op) of ``kernel`` next to the model's prediction for it.

    ``predictions``: :class:`cudalens.access.ptx_eval.LinePrediction` records of the kernel. A
    measured line without a prediction is reported with ``predicted=None`` and the reason. ``files``:
    the source files of the kernel's translation unit (kernels of the same name in other units are
    left out). ``spread``: predictions of helper lines inlined at several calls, whose figure stands
    for no one call: used only for the part of one call that ptxas placed at the call's line.
    """
    spread = tuple(spread)
    wanted = set(files) if files is not None else None
    by_key: dict[tuple[str, int, str, str], Any] = {}
    for p in predictions:
        space, op = _access_of(p)
        if space:
            by_key[(p.file, p.line, space, op)] = p
    out = []
    has_sass = {(f, ln, s, o) for (k, f, ln, s, o) in counters if k == kernel}
    missing = {(f, ln, s, o) for (k, f, ln, s, o), c in counters.items()
               if k == kernel and c.executed > 0 and (f, ln, s, o) not in by_key}
    for (k, file, line, space, op), c in sorted(counters.items()):
        if k != kernel or c.executed <= 0 or (wanted is not None and file not in wanted):
            continue
        row, meas, why_not = measured_value(c)
        q, unit = row.name, row.unit
        p = by_key.get((file, line, space, op))
        if meas is None:
            out.append(LineCheck(k, file, line, q, None if p is None else p.value, None, None,
                                 "" if p is None else p.layer, why_not, c.executed))
            continue
        if c.cas_loop and c.threads is not None and c.threads < 16:
            out.append(LineCheck(k, file, line, q, None, meas, None, "" if p is None else p.layer,
                                 "data-dependent: ptxas placed this line in a loop with a compare-and-swap retry, and "
                                 f"on average {c.threads:g} of 32 lanes ran each of its instructions (the warps split "
                                 "as the retries contend), which the model does not predict", c.executed))
            continue
        note = ""
        if p is None:
            p, note = _placed_here(by_key, has_sass, missing, file, line, space, op, unit, spread)
        if p is None and c.atomic and op == "load":
            p = cas_load([*by_key.values(), *spread], file, line)
        if p is None and c.atomic and op == "load":
            out.append(LineCheck(k, file, line, q, None, meas, None, "", "not a data dependence: ptxas expanded an atomic "
                                 "on this line into a load and a compare-and-swap loop; the model has no figure for "
                                 "the atomic's addresses (it evaluates shared ones only)", c.executed))
            continue
        if p is None:
            out.append(LineCheck(k, file, line, q, None, meas, None, "", "not a data dependence: no PTX instruction of "
                                 "this class on this line of the kernel (ptxas placed SASS here that the PTX has "
                                 "elsewhere or not at all, or the line is in a function the kernel calls, which the "
                                 "model does not follow)", c.executed))
            continue
        pred, low, high = _compared(p, unit, c.predicated)
        if pred is None and low is not None and high is not None:
            ok = row.tolerance.covers(low, high, meas)
            out.append(LineCheck(k, file, line, q, None, meas, ok, p.layer, note + p.reason, c.executed, low, high))
            continue
        if pred is None:
            why = p.reason or "not established"
            if unit == "sectors/ideal" and not p.ideal and p.low is not None:  # a part of a helper of several calls
                why = f"no ratio to the ideal sectors of this call's instructions ({why}, per request)"
            out.append(LineCheck(k, file, line, q, None, meas, None, p.layer, note + why, c.executed))
            continue
        out.append(LineCheck(k, file, line, q, pred, meas, row.tolerance.agrees(pred, meas), p.layer, note.rstrip(": "),
                             c.executed))
    return out
