"""The measured quantities: what the model predicts and Nsight Compute measures, one row each.

A row names the quantity as reports print it, its unit, where the model's figure is read, the
counters it is compared with, and the tolerance of that comparison. Everything that predicts or
compares such a figure reads this table:

- the compiled access model names its per-line predictions by it (``access.ptx_figures``), and the
  compiled figures fill the source model's accesses by it (``evidence.compiled_figures``);
- the per-kernel cross-check reads the counter and tolerance of each row (``guided.crosscheck``);
- the per-line check reads the source-page columns and tolerance of each row
  (``profile.ncu_source``);
- a rule's ``@rule(..., verified_by=...)`` names rows (checked when the rule registers).

Adding a measured quantity is adding a row (CONTRIBUTING.md, "Adding a measured quantity").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    """When a measurement agrees with a prediction.

    ``relative``/``absolute``: within max(relative x |predicted|, absolute) of it (``unit`` names the
    absolute part's unit where the text says it). ``threshold``: the prediction is a side of this
    value, ``below`` (measured < threshold) or ``above`` (measured >= threshold), in ``unit``."""

    relative: float = 0.0
    absolute: float = 0.0
    unit: str = ""
    threshold: float | None = None
    below: str = ""
    above: str = ""

    def margin(self, predicted: float) -> float:
        return max(self.relative * abs(predicted), self.absolute)

    def agrees(self, predicted: float, measured: float) -> bool:
        """``measured`` within the margin of ``predicted``."""
        return abs(measured - predicted) <= self.margin(predicted)

    def covers(self, low: float, high: float, measured: float) -> bool:
        """``measured`` in the predicted range [low, high], each end widened by its margin."""
        return low - self.margin(low) <= measured <= high + self.margin(high)

    def on_side(self, below: bool, measured: float) -> bool:
        """``measured`` on the predicted side of the threshold (``below`` or not)."""
        assert self.threshold is not None
        return measured < self.threshold if below else measured >= self.threshold

    @property
    def text(self) -> str:
        """The tolerance as a comparison prints it."""
        if self.threshold is not None:
            t = f"{self.threshold:g} {self.unit}"
            return f"{self.below}: < {t}; {self.above}: >= {t}"
        if self.relative:
            return f"±max({self.relative:.0%} of predicted, {self.absolute})"
        return f"±{self.absolute:g} {self.unit}".rstrip()


#: per-request ratios (sectors, wavefronts, conflict ways): the tail block, loop iterations after the
#: first and edge guards shift a measured average by up to this much
RATIO = Tolerance(relative=0.10, absolute=0.5)


@dataclass(frozen=True)
class Quantity:
    """One quantity the model predicts and a counter measures.

    ``model``: the attribute of the compiled model's per-line prediction
    (``access.ptx_figures.LinePrediction``) holding the figure, divided by ``per`` where the counter
    is a ratio to an ideal; "" where the model gives no per-line figure. ``figure``: what the
    per-kernel cross-check predicts from, an attribute of the source model's ``Access`` (memory
    quantities), of its ``Branch``, or of the kernel's occupancy result.

    ``counter``: the per-kernel measurement, an attribute of ``profile.ncu.LegacyMetrics`` ("": not
    compared per kernel), computed from the ncu ``metrics``; ``shown``: its name in a cross-check
    where that is not ``counter``. ``columns``: per line, the columns of ncu's source page summed over
    the line's SASS instructions, the first over the second (a single column: averaged over the
    executions); () where not compared per line. ``space``/``op``: the accesses a memory quantity
    is of. ``tolerance``: of both comparisons (unused where no counter measures the quantity)."""

    name: str
    unit: str
    tolerance: Tolerance
    model: str = ""
    per: str = ""
    figure: str = ""
    counter: str = ""
    metrics: tuple[str, ...] = ()
    shown: str = ""
    columns: tuple[str, ...] = ()
    space: str = ""
    op: str = ""

    @property
    def counter_name(self) -> str:
        return self.shown or self.counter

    @property
    def measured(self) -> bool:
        return bool(self.counter or self.columns)


_SECTORS, _IDEAL, _EXECUTED = "L2 Theoretical Sectors Global", "L2 Theoretical Sectors Global Ideal", "Instructions Executed"
_WAVEFRONTS, _NWAY = "L1 Wavefronts Shared", "L1 Conflicts Shared N-Way"


def _ncu(space: str, op: str) -> tuple[str, ...]:
    """The ncu metrics of a per-request ratio: sectors (wavefronts) over requests (instructions)."""
    o = {"load": "ld", "store": "st"}[op]
    if space == "global":
        return f"l1tex__t_sectors_pipe_lsu_mem_global_op_{o}.sum", f"l1tex__t_requests_pipe_lsu_mem_global_op_{o}.sum"
    return (f"smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{o}.sum",
            f"smsp__sass_inst_executed_op_shared_{o}.sum",
            f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{o}.sum")  # captures without the sass metric


def _per_request(space: str, op: str) -> Quantity:
    """The model's figure of every global or shared access: sectors (wavefronts) per warp request."""
    o = {"load": "ld", "store": "st"}[op]
    unit, cols = ("sectors/request", (_SECTORS, _EXECUTED)) if space == "global" else \
        ("wavefronts/request", (_WAVEFRONTS, _EXECUTED))
    return Quantity(f"{space} {op} {unit}", unit, RATIO, model="value", figure=unit.replace("/", "_per_"),
                    counter=f"{space}_{o}_{unit.replace('/', '_per_')}", metrics=_ncu(space, op), columns=cols,
                    space=space, op=op)


GLOBAL_LOAD_SECTORS = _per_request("global", "load")
GLOBAL_STORE_SECTORS = _per_request("global", "store")
SHARED_LOAD_WAVEFRONTS = _per_request("shared", "load")
SHARED_STORE_WAVEFRONTS = _per_request("shared", "store")
# where a line's SASS is predicated (@P), ncu counts executions with no lane on too: sectors over ideal
# sectors does not depend on them
GLOBAL_LOAD_SECTORS_PER_IDEAL = Quantity("global load sectors/ideal", "sectors/ideal", RATIO, model="value",
                                         per="ideal", columns=(_SECTORS, _IDEAL), space="global", op="load")
GLOBAL_STORE_SECTORS_PER_IDEAL = Quantity("global store sectors/ideal", "sectors/ideal", RATIO, model="value",
                                          per="ideal", columns=(_SECTORS, _IDEAL), space="global", op="store")
# an export without the wavefront column: ncu's N-way (whole wavefronts per execution of each instruction)
SHARED_LOAD_CONFLICT_WAYS = Quantity("shared load conflict ways", "conflict ways", RATIO, model="nway",
                                     columns=(_NWAY,), space="shared", op="load")
SHARED_STORE_CONFLICT_WAYS = Quantity("shared store conflict ways", "conflict ways", RATIO, model="nway",
                                      columns=(_NWAY,), space="shared", op="store")
# a divergent branch: expect below 99 % (the 1 % allows for tail warps at the array edge)
BRANCH_EFFICIENCY = Quantity(
    "branch efficiency", "%", Tolerance(threshold=99.0, unit="%", below="divergent", above="uniform"),
    figure="divergent", counter="branch_efficiency", metrics=("smsp__sass_average_branch_targets_threads_uniform.pct",))
# both come from the same limits: a gap means the profiled launch used another block size or shared memory
THEORETICAL_OCCUPANCY = Quantity(
    "theoretical occupancy", "%", Tolerance(absolute=1.0, unit="percentage point"), figure="occupancy",
    counter="theoretical_occupancy", metrics=("sm__maximum_warps_per_active_cycle_pct",),
    shown="sm__maximum_warps_per_active_cycle_pct")
# a shared atomic's addresses (no counter of its own: the per-line check compares it with the load of
# the compare-and-swap loop ptxas makes of the atomic, profile.ncu_cas)
SHARED_ATOMIC_WAVEFRONTS = Quantity("shared atomic wavefronts/request", "wavefronts/request", RATIO, model="value",
                                    space="shared", op="atomic")
# predicted per line by the compiled model, measured by no counter yet
BRANCH_DIVERGENT_SHARE = Quantity("branch divergent share", "share", Tolerance(), model="value")

#: every row, by name
QUANTITIES: dict[str, Quantity] = {q.name: q for q in (
    GLOBAL_LOAD_SECTORS, GLOBAL_STORE_SECTORS, SHARED_LOAD_WAVEFRONTS, SHARED_STORE_WAVEFRONTS,
    GLOBAL_LOAD_SECTORS_PER_IDEAL, GLOBAL_STORE_SECTORS_PER_IDEAL, SHARED_LOAD_CONFLICT_WAYS,
    SHARED_STORE_CONFLICT_WAYS, BRANCH_EFFICIENCY, THEORETICAL_OCCUPANCY, SHARED_ATOMIC_WAVEFRONTS,
    BRANCH_DIVERGENT_SHARE)}



def access_checks() -> tuple[Quantity, ...]:
    """The rows the per-kernel cross-check compares over a kernel's accesses: memory quantities with
    a per-kernel counter (the model's figure of each access of the row's space and op)."""
    return tuple(q for q in QUANTITIES.values() if q.space and q.counter)


#: the per-request figure of each (space, op) access that a per-kernel counter measures
PER_REQUEST: dict[tuple[str, str], Quantity] = {(q.space, q.op): q for q in access_checks() if q.model == "value"}
#: the figure the compiled model predicts for each (space, op) access: the rows it names its lines by
MODEL_PER_REQUEST: dict[tuple[str, str], Quantity] = {(q.space, q.op): q for q in QUANTITIES.values()
                                                      if q.space and q.model == "value" and not q.per}


def line_quantity(space: str, op: str, unit: str) -> Quantity:
    """The row a per-line check of a (space, op) line in ``unit`` compares."""
    return next(q for q in QUANTITIES.values() if (q.space, q.op, q.unit) == (space, op, unit))


def measured_rows(names: str | tuple[str, ...]) -> tuple[Quantity, ...]:
    """The rows ``names`` names (a rule's ``verified_by``): ValueError naming any that is not a measured row."""
    wanted = (names,) if isinstance(names, str) else tuple(names)
    bad = [n for n in wanted if n not in QUANTITIES or not QUANTITIES[n].measured]
    if bad or not wanted:
        known = ", ".join(q.name for q in QUANTITIES.values() if q.measured)
        raise ValueError(f"not a measured quantity: {', '.join(map(repr, bad)) or '()'} (the rows: {known})")
    return tuple(QUANTITIES[n] for n in wanted)
