"""What the compiled access model says per source line and per kernel (:func:`cudalens.access.ptx_eval.evaluate`
makes them): frozen facts, read by the evidence join, the line checks and the rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cudalens.quantities import MODEL_PER_REQUEST

LAYER = "compiled-ptx"
#: the name of the quantity predicted for each (space, op) access (the table's per-request rows)
QUANTITIES = {key: q.name for key, q in MODEL_PER_REQUEST.items()}


@dataclass(frozen=True)
class LinePrediction:
    kernel: str
    file: str
    line: int
    quantity: str
    value: float | None  # None: see ``reason`` (or the range)
    low: float | None = None
    high: float | None = None
    condition: str = ""  # for a range: which values give which
    reason: str = ""  # why null
    instructions: int = 0
    requests: int = 0  # warp requests in the evaluated blocks
    ideal: float | None = None  # ideal sectors (wavefronts) per request
    threads_per_request: float | None = None
    iteration_invariant: bool | None = None
    width: int | None = None  # bytes per lane (the widest instruction of the line)
    layer: str = LAYER
    # shared lines: Nsight Compute's "L1 Conflicts Shared N-Way" as it prints it (per instruction the
    # whole part of its wavefronts per execution, averaged over the line's executions); for a range
    # (``value`` None, ``low``/``high`` set) its low and high
    nway: float | None = None
    nway_low: float | None = None
    nway_high: float | None = None
    # shared lines: the N-way where ptxas predicated the line's instructions (a branch side without a
    # loop): warps that reach the branch with no lane on the side execute them too, with no wavefront,
    # and Nsight Compute averages over those executions as well (ptx_predicated); None: as ``nway``
    nway_predicated: float | None = None
    # shared lines, likewise: the wavefronts per request over those executions too (None: as ``value``)
    value_predicated: float | None = None
    # (lowest, highest) of ``value_predicated`` / ``nway_predicated`` over the parameter trials where they
    # differ (how many warps have no lane on depends on a parameter nobody gave); the single figure is None then
    value_predicated_range: tuple[float, float] | None = None
    nway_predicated_range: tuple[float, float] | None = None
    # (file, line) of the calls the line's instructions were inlined into (ptxas may place their SASS there)
    call_sites: tuple[tuple[str, int], ...] = ()
    # per call site: (file, line, lowest, highest figure of one instruction, lowest, highest N-way,
    # lowest, highest sectors over ideal sectors of one instruction: global lines)
    site_bounds: tuple[tuple[Any, ...], ...] = ()
    # global lines: the address distance (bytes) between neighbouring active lanes, the same in every
    # request of the base trial (None: not one distance); and in each parameter trial (PLAUSIBLE order)
    lane_stride: int | None = None
    lane_strides: tuple[int | None, ...] = ()
    # bytes per lane the line's instructions of this quantity move, summed (pieces of one struct add up)
    bytes_per_lane: int | None = None
    # per parameter trial (PLAUSIBLE order; empty when no parameter was tried): (figure, ideal, active
    # lanes per request), so a reader can tell full warps (32 lanes) from edge warps of a bounds guard
    trials: tuple[tuple[float | None, float | None, float | None], ...] = ()
    # a line whose executions differ (a loop's iterations): the lowest and highest figure of one
    # execution (``value`` is the weighted figure over all of them); None when they are all the same
    iter_low: float | None = None
    iter_high: float | None = None
    # global lines given as a range whose ideal varies with the trials (ideal None): the lowest and
    # highest sectors over ideal sectors of those trials (ptx_reach.reached_in_trials)
    ratio_range: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class KernelEvaluation:
    kernel: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    blocks_evaluated: int
    predictions: tuple[LinePrediction, ...]
    complete: bool
    notes: tuple[str, ...] = ()
    loops: tuple[dict, ...] = field(default=())  # {"line", "iterations", "cut"}
