"""Cross-check: every static prediction that an Nsight Compute counter can verify, compared.

The access model and the occupancy calculator predict numbers before anything runs; ncu measures
the same quantities on a real launch. Comparing them keeps the model honest: a disagreement is not
hidden, it becomes a finding of its own (rule V1) so the user knows which verdict to doubt.

What is compared, per kernel (the rows of :mod:`cudalens.quantities`: each row's counter and
tolerance), and when two numbers "agree":

global load (store) sectors per request
    The model predicts per access; ncu gives one ratio for the whole kernel (all its global load
    requests together). The two are only comparable when every global load of the kernel has the
    same prediction: then any weighting of the accesses gives that value. When the predictions
    differ, or one access could not be modelled, the check is reported as "not comparable"
    (agree = None) with the reason. Tolerance: the row's (10 % of the prediction or 0.5 sector,
    whichever is larger: the tail block, loop iterations after the first and edge guards shift the
    average).

shared load (store) wavefronts per request
    ncu's wavefronts per shared instruction is what the model calls ``wavefronts_per_request``
    (``compiled_wavefronts_per_request`` where the compiler vectorized the load; see
    cudalens.access.memory for the measured rule: 4- and 8-byte loads per warp, 16-byte per
    half-warp). When an older report lacks it, it is derived as ways x phases (2 phases for
    8-byte and 4 for 16-byte words: the rule the model used before the H100 measurement, kept
    for such reports). Same rule as above for several accesses, and the same tolerance.

branch efficiency
    The model marks each branch divergent (lanes of a warp disagree), uniform, or unknown. Any
    divergent branch: expect ncu's branch efficiency below the row's threshold (99 %). None
    divergent and all known: expect at least that (the 1 % allows for tail warps at the array
    edge). Some unknown and none divergent: not comparable.

theoretical occupancy
    The calculator's occupancy (from the compiled resources and the block size) against ncu's
    ``sm__maximum_warps_per_active_cycle_pct``. Both come from the same limits, so they must
    agree within the row's 1 percentage point; a gap means the profiled launch used another block
    size or dynamic shared memory than the analysis assumed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from cudalens.findings import Finding
from cudalens.profile.ncu import LegacyMetrics
from cudalens.quantities import BRANCH_EFFICIENCY, THEORETICAL_OCCUPANCY, Quantity, access_checks
from cudalens.rules.context import RuleContext
from cudalens.rules.layers import ChecksLayer
from cudalens.rules.registry import run_layer

if TYPE_CHECKING:
    from cudalens.evidence.join import CompiledLoad, KernelRecord
    from cudalens.source.model import Access


@dataclass(frozen=True)
class CrossCheck:
    """One predicted quantity next to its measured counter.

    ``agree`` is True/False when the two are comparable, None when they are not (``reason`` says
    why). ``relation`` is "≈" (equal within ``tolerance``), "<" or ">=" (a bound on the counter).
    """

    kernel: str
    file: str
    quantity: str
    line: int | None
    predicted: float | None
    measured: float | None
    agree: bool | None
    unit: str
    relation: str
    tolerance: str
    counter: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def shared_wavefronts_prediction(a: Access, load: CompiledLoad | None = None) -> float | None:
    """Predicted wavefronts per request of one shared access.

    The model's ``wavefronts_per_request``, at the compiled width where the compiler vectorized
    the load (``load``, the record's :class:`~cudalens.evidence.join.CompiledLoad` of the access).
    Without it, the bank-conflict ways: for 4-byte words one warp is served at once, so ways are
    wavefronts; for wider words how the warp is split depends on the width and pattern
    (access/memory.py), so the figure is not established from ways alone: None.
    """
    if load is not None and load.wavefronts_per_request is not None:  # the compiler vectorized the load
        return float(load.wavefronts_per_request)
    if a.wavefronts_per_request is not None:
        return float(a.wavefronts_per_request)
    if a.bank_conflict_ways is None or (a.bytes_per_thread or 4) != 4:
        return None
    return float(a.bank_conflict_ways)


def record_accesses(rec: KernelRecord) -> list[tuple[Access, CompiledLoad | None]]:
    """The kernel's accesses, each with its compiled load (None where the compiler issued it as written)."""
    loads: Sequence[CompiledLoad | None] = rec.compiled_loads or (None,) * len(rec.kernel.accesses)
    return list(zip(rec.kernel.accesses, loads))


def _ratio_check(rec: KernelRecord, q: Quantity, counter_value: float | None) -> CrossCheck | None:
    space, op = q.space, q.op
    accesses = [(a, ld) for a, ld in record_accesses(rec) if a.space == space and a.op == op
                and a.pattern != "inactive"]
    if not accesses:
        return None

    def get(a: Access, ld: CompiledLoad | None) -> float | None:
        return shared_wavefronts_prediction(a, ld) if space == "shared" else getattr(a, q.figure)

    def make(predicted, line, agree, reason=""):
        return CrossCheck(rec.kernel.name, rec.kernel.file, q.name, line, predicted, counter_value, agree,
                          q.unit, "≈", q.tolerance.text, q.counter_name, reason)

    predictions = [get(a, ld) for a, ld in accesses]
    missing = [a for (a, _), v in zip(accesses, predictions) if v is None]
    if missing:
        a = missing[0]
        return make(None, a.line, None, f"{space} {op} of {a.array} at line {a.line} not modelled ({a.pattern})")
    values = sorted({round(float(v), 4) for v in predictions if v is not None})
    if len(values) > 1:
        where = ", ".join(f"line {a.line}: {v:g}" for (a, _), v in zip(accesses, predictions) if v is not None)
        return make(None, None, None, f"the kernel's {op}s differ ({where}); ncu gives only their aggregate")
    line = accesses[0][0].line if len(accesses) == 1 else None
    if counter_value is None:
        return make(values[0], line, None, "ncu gave no value for this counter")
    return make(values[0], line, q.tolerance.agrees(values[0], counter_value))


def divergence_class(rec: KernelRecord) -> tuple[bool | None, int | None, str]:
    """(True: some warp diverges at a branch instruction, False: none does, None: unknown), the line
    it rests on, and why when unknown. Uses the compiled facts where the report has them: a
    divergent condition that the compiler predicated (``predicated``) runs no branch, and branch
    instructions the source model did not see (``unmodelled_branch_lines``, library code) make the
    answer unknown unless a modelled branch already diverges."""
    branches = rec.kernel.branches
    predicated = rec.predicated or (False,) * len(branches)
    divergent = [b for b, pred in zip(branches, predicated) if b.divergent is True and not pred]
    if divergent:
        return True, divergent[0].line, ""
    unknown = [b for b in branches if b.divergent is None]
    if unknown:
        line = unknown[0].line
        return None, line, f"branch at line {line} depends on data the model cannot see"
    hidden = rec.unmodelled_branch_lines or ()
    if hidden:
        return None, hidden[0], (f"branch instructions at line(s) {', '.join(map(str, hidden))} come from code the "
                                 "model does not see (e.g. a math library call's internal branches)")
    return False, None, ""


def _branch_check(rec: KernelRecord, measured: float | None) -> CrossCheck:
    cls, cls_line, why = divergence_class(rec)
    divergent = [{"line": cls_line}] if cls is True else []
    unknown = [{"line": cls_line}] if cls is None else []
    q = BRANCH_EFFICIENCY
    tol = q.tolerance
    base: dict[str, Any] = dict(kernel=rec.kernel.name, file=rec.kernel.file, quantity=q.name,
                measured=measured, unit=q.unit, tolerance=tol.text, counter=q.counter_name)
    if divergent:
        line = divergent[0].get("line")
        if measured is None:
            return CrossCheck(line=line, predicted=tol.threshold, agree=None, relation="<",
                              reason="ncu gave no value for this counter", **base)
        return CrossCheck(line=line, predicted=tol.threshold, agree=tol.on_side(True, measured),
                          relation="<", **base)
    if unknown:
        return CrossCheck(line=unknown[0].get("line"), predicted=None, agree=None, relation=">=",
                          reason=why, **base)
    if measured is None:
        return CrossCheck(line=None, predicted=100.0, agree=None, relation=">=",
                          reason="ncu gave no value for this counter", **base)
    return CrossCheck(line=None, predicted=100.0, agree=tol.on_side(False, measured), relation=">=", **base)


def _occupancy_check(rec: KernelRecord, measured_fraction: float | None) -> CrossCheck | None:
    occ = rec.occupancy or {}
    if occ.get("occupancy") is None:
        return None
    q = THEORETICAL_OCCUPANCY
    predicted = 100.0 * float(occ[q.figure])
    measured = None if measured_fraction is None else 100.0 * measured_fraction
    agree = None if measured is None else q.tolerance.agrees(predicted, measured)
    return CrossCheck(rec.kernel.name, rec.kernel.file, q.name, rec.kernel.line,
                      predicted, measured, agree, q.unit, "≈", q.tolerance.text, q.counter_name,
                      "" if measured is not None else "ncu gave no value for this counter")


def cross_check(records: Sequence[KernelRecord], counters: Mapping[str, LegacyMetrics]) -> list[CrossCheck]:
    """Every comparable prediction of the kernel ``records`` (the pipeline's) against ``counters``.

    Kernels are matched by name (ncu's base name, without templates or parameters). A kernel
    without counters is skipped; so is a quantity the model made no prediction for.
    """
    out: list[CrossCheck] = []
    for kernel in records:
        m = counters.get(kernel.name)
        if m is None:
            continue
        for q in access_checks():
            check = _ratio_check(kernel, q, getattr(m, q.counter))
            if check is not None:
                out.append(check)
        out.append(_branch_check(kernel, getattr(m, BRANCH_EFFICIENCY.counter)))
        occ = _occupancy_check(kernel, getattr(m, THEORETICAL_OCCUPANCY.counter))
        if occ is not None:
            out.append(occ)
    return out


def disagreement_findings(checks: list[CrossCheck]) -> list[Finding]:
    """One V1 finding (priority info) per check whose counter contradicts the prediction."""
    return v1_findings(kernels=checks)


def v1_findings(*, kernels: Sequence[CrossCheck] = (), lines: Sequence[Any] = ()) -> list[Finding]:
    """The V1 rule's findings on the ``checks`` layer: per kernel (:class:`CrossCheck`) and per line
    (:class:`cudalens.profile.ncu_source.LineCheck`)."""
    first = next(iter((*kernels, *lines)), None)
    if first is None:
        return []
    ctx = RuleContext.without_source(first.file, checks=ChecksLayer(kernels=tuple(kernels), lines=tuple(lines)))
    return run_layer(ctx, "checks")
