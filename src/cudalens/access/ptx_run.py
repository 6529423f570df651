"""Run a PTX kernel on the lane machine (cudalens.access.ptx_exec): memory instructions (with the
warp-level sector and wavefront counts of every execution), warp shuffles and votes, and the
min-PC scheduler over basic blocks (see ptx_exec's docstring for the rules). Every lane mask the
scheduler hands out is a subset of the launch's valid lanes (it starts from them and only narrows
them), so no step masks with them again. Sectors, wavefronts and branch splits are counted once at
the end of a run, for all executions together. The instructions run as decoded steps
(cudalens.access.ptx_decode), each decoded when its basic block first runs."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from cudalens.access.memory import lanes_on
from cudalens.access.ptx_control import control_and_sides, deciding
from cudalens.access.ptx_counts import count_deferred
from cudalens.access.ptx_decode import block_steps, shared_by_text
from cudalens.access.ptx_exec import (
    WARP,
    BranchRecord,
    Launch,
    Machine,
    MemRecord,
    RunResult,
)
from cudalens.access.ptx_predicated import count_skipped
from cudalens.access.ptx_slice import slice_of
from cudalens.compiled.ptx import Function, PtxModule

_UNGUARDED = (0, "")  # the guard taint of an instruction without a predicate


def _count_branches(m: Machine, runs: list[tuple[int, np.ndarray, np.ndarray, int, str]]
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """Per conditional branch and variant: the warp executions (warps with a lane at it) and those
    whose lanes split, from every execution of the run at once; records made in execution order.
    Returns per execution and warp its lanes at the branch and those taking it (None: no execution)."""
    if not runs:
        return None
    shape = (len(runs), -1)
    on = lanes_on(np.stack([r[1] for r in runs]).reshape(-1, WARP)).reshape(shape)
    tk = lanes_on(np.stack([r[2] for r in runs]).reshape(-1, WARP)).reshape(shape)
    live = on > 0
    div = live & (tk > 0) & (tk < on)
    key = np.arange(len(runs))[:, None] * m.V + m.row_variant[None, :]
    req = np.bincount(key[live], minlength=len(runs) * m.V).reshape(len(runs), m.V)
    dv = np.bincount(key[div], minlength=len(runs) * m.V).reshape(len(runs), m.V)
    for (index, _mask, _taken, taint, why), req_e, dv_e in zip(runs, req.tolist(), dv.tolist()):
        for v, n in enumerate(req_e):
            if not n:
                continue
            rec = m.branches_v[v].get(index)
            if rec is None:
                rec = m.branches_v[v][index] = BranchRecord(index)
            rec.requests += n
            rec.divergent += dv_e[v]
            if taint > rec.taint:
                rec.taint, rec.why = taint, why
    return on, tk


def _loop_cap(launch: Launch, steps: int) -> int:
    """Iterations per loop entry: ``launch.loop_cap`` in the first quarter of the step budget, then
    2, then 0 past half of it (each loop body once), so that the code after deep or long loops is
    still reached: a loop's figures come from its first iterations (``per_call`` says whether they
    were the same). With ``launch.whole_loops``: ``launch.loop_cap`` throughout."""
    if launch.whole_loops or steps <= launch.max_steps // 4:
        return launch.loop_cap
    return min(launch.loop_cap, 2) if steps <= launch.max_steps // 2 else 0


def run(module: PtxModule, fn: Function, launch: Launch) -> RunResult:
    """Execute ``fn`` for ``launch.blocks`` and return what every memory instruction and branch did."""
    return run_variants(module, fn, launch)[0]


def run_variants(module: PtxModule, fn: Function, launch: Launch) -> list[RunResult]:
    """:func:`run` for every variant of ``launch.variants`` (seed and parameter values) at once, in
    one lane machine (each variant has its own copy of the blocks' lanes): one result per variant,
    sharing the step count and the loops' iteration counts (the variants run in lock step where
    their control flow agrees)."""
    return run_forked(module, fn, launch, fork=False)[0]


def run_forked(module: PtxModule, fn: Function, launch: Launch, fork: bool = True
               ) -> tuple[list[RunResult], Resume | None]:
    """:func:`run_variants`, and (with ``fork``) the run as it stood where it first cut a loop at
    its cap, before cutting it: :meth:`Resume.whole` goes on from there with every loop whole,
    as a fresh run with that launch would (until then both took the same steps). None when no loop
    was cut."""
    with np.errstate(all="ignore"):  # lanes' arithmetic wraps and overflows as on the GPU
        r = _Run(module, fn, launch, fork)
        r.loop()
        return r.finish(), r.forked


class _Run:
    """One run of the lane machine: the min-PC scheduler over basic blocks and its state."""

    def __init__(self, module: PtxModule, fn: Function, launch: Launch, fork: bool) -> None:
        self.m = m = Machine(module, fn, launch)
        if launch.dead is None or launch.needed is None:  # see ptx_slice
            dead, needed = slice_of(fn)
            m.launch = launch = dataclasses.replace(launch, dead=dead, needed=needed)
        if launch.control is None or launch.sides is None:
            cd, sides = control_and_sides(fn)
            m.launch = launch = dataclasses.replace(launch, control=deciding(fn, cd), sides=sides)
        self.fn, self.launch = fn, launch
        self.shared, consts, specials = shared_by_text(module.files)  # (ptx_decode: what one text's kernels share)
        m._consts = consts.setdefault(m.T, m._consts)
        m._specials = specials.setdefault((launch.block, launch.grid, launch.blocks, m.V), m._specials)
        self.decided: dict[int, tuple[int, str]] = {}  # branch -> the worst taint of its condition so far, and why
        self.blocks = blocks = fn.blocks
        start_of = {s: k for k, (s, _e) in enumerate(blocks)}
        self.block_of_label = {lab: start_of.get(i) for lab, i in fn.labels.items()}
        self.pending: dict[int, np.ndarray] = {0: m.valid.copy()} if blocks else {}
        self.counts: dict[int, int] = {}
        self.back_taken: dict[int, int] = {}
        self.truncated: set[int] = set()
        self.branch_runs: list[tuple[int, np.ndarray, np.ndarray, int, str]] = []
        self.steps = 0
        self.complete = True
        self.fork = fork
        self.forked: Resume | None = None
        # basic block -> its decoded steps (ptx_decode.block_steps), made when it first runs; a forked run
        # shares them (they hold none of a machine's mutable state)
        self.decoded: dict[int, list] = {}

    def send(self, k: int, lanes: np.ndarray) -> None:
        if k >= len(self.blocks) or not np.count_nonzero(lanes):
            return
        self.pending[k] = self.pending[k] | lanes if k in self.pending else lanes

    def loop(self) -> None:
        m, fn, launch, pending, decided, dead = self.m, self.fn, self.launch, self.pending, self.decided, self.launch.dead
        decoded = self.decoded
        control = launch.control or {}
        while pending:
            k = min(pending)
            mask = pending.pop(k)
            s, e = self.blocks[k]
            self.steps += e - s
            if self.steps > launch.max_steps:
                self.complete = False
                break
            last = fn.instructions[e - 1]
            if decided:
                m.ctl = max((decided.get(b, (0, "")) for b in control.get(k, ())), default=(0, ""), key=lambda t: t[0])
                m.ctl_taint = m.ctl[0]
            steps = decoded.get(k)
            if steps is None:
                steps = decoded[k] = block_steps(m, fn, s, e, dead, self.shared)
            for guard, step in steps:
                if guard is None:
                    step(m, mask, mask, _UNGUARDED)
                else:
                    p = guard(m)
                    step(m, mask & (p.a != 0), mask, (p.taint, p.why))
            if last.base in ("ret", "exit"):
                if last.pred:
                    p = m.read(last.pred, "pred")
                    self.send(k + 1, mask & ~(p.a != 0))
                continue
            if last.base != "bra":
                self.send(k + 1, mask)
                continue
            target = self.block_of_label.get(last.operands[0].strip()) if last.operands else None
            if target is None:
                self.complete = False
                continue
            if last.pred:
                p = m.read(last.pred, "pred")
                taken = mask & (p.a != 0)
                self.branch_runs.append((last.index, mask, taken, p.taint, p.why))  # counted at the end
                if p.taint > decided.get(last.index, (0, ""))[0]:  # what runs under it depends on its data
                    why = p.why if "under a branch" in p.why else (
                        f"value chosen under a branch (line {last.loc.line if last.loc else 0}) on a "
                        f"{p.why or 'loaded value'}")
                    decided[last.index] = (p.taint, why)
            else:
                taken = mask
            self.edge(k, last.index, target, taken, mask & ~taken)

    def edge(self, k: int, index: int, target: int, taken: np.ndarray, fall: np.ndarray) -> None:
        """Block ``k`` ends in the branch ``index`` to block ``target``, taken by lanes ``taken``."""
        if target <= k and np.count_nonzero(taken):  # a loop's back edge
            if self.counts.get(index, 0) >= _loop_cap(self.launch, self.steps):
                if self.fork and self.forked is None and self.steps <= self.launch.max_steps // 4:  # (past it: no rerun)
                    self.forked = Resume(fork_run(self), (k, index, target, taken, fall))
                self.truncated.add(index)
                self.send(k + 1, taken)
                taken = np.zeros_like(taken)
            else:
                self.counts[index] = self.counts.get(index, 0) + 1
                self.back_taken[index] = self.back_taken.get(index, 0) + 1
                for other in list(self.counts):
                    if other != index and self.blocks[target][0] <= other < index:
                        self.counts[other] = 0
        self.send(target, taken)
        self.send(k + 1, fall)

    def finish(self) -> list[RunResult]:
        m = self.m
        count_deferred(m)
        lanes = _count_branches(m, self.branch_runs)
        if lanes is not None and self.launch.sides:
            count_skipped(self.fn, m.mem_v, m.row_variant, self.branch_runs, self.launch.sides, *lanes)
        return [RunResult(mem, br, self.back_taken, self.truncated, self.steps, self.complete, m.unmodelled, m.calls,
                          tuple(m.indirect))
                for mem, br in zip(m.mem_v, m.branches_v)]


@dataclasses.dataclass(frozen=True)
class Resume:
    """A run stopped where it first cut a loop (:func:`run_forked`): its state, and that back edge."""

    run: _Run
    edge: tuple[int, int, int, np.ndarray, np.ndarray]

    def whole(self, loop_cap: int, max_steps: int) -> list[RunResult] | None:
        """The run with every loop whole (``Launch.whole_loops``, ``loop_cap``, ``max_steps``) from
        this point on: what a fresh run with that launch gives. None where this point is not one
        such a run passes (a step budget it had spent by then, a cap no higher)."""
        r = fork_run(self.run)
        if max_steps < r.steps or loop_cap < r.launch.loop_cap:
            return None
        r.launch = r.m.launch = dataclasses.replace(r.launch, loop_cap=loop_cap, max_steps=max_steps, whole_loops=True)
        r.fork = False
        with np.errstate(all="ignore"):
            r.edge(*self.edge)
            r.loop()
            return r.finish()


def fork_run(r: _Run) -> _Run:
    """A copy of a run that goes on apart from it: its scheduler's and machine's mutable state
    copied (register values and masks are never changed in place: shared), its records too."""
    c = copy.copy(r)
    c.pending, c.counts, c.back_taken = dict(r.pending), dict(r.counts), dict(r.back_taken)
    c.truncated, c.branch_runs, c.decided, c.forked = set(r.truncated), list(r.branch_runs), dict(r.decided), None
    m = c.m = copy.copy(r.m)
    recs = {id(x): _copied(x) for x in [*r.m.records, *(x for d in r.m.mem_v for x in d.values())]}
    m.mem_v = [{i: recs[id(x)] for i, x in d.items()} for d in r.m.mem_v]
    m.branches_v = [{i: _fresh(x) for i, x in d.items()} for d in r.m.branches_v]
    m.records = [recs[id(x)] for x in r.m.records]
    m.record_id = {id(x): k for k, x in enumerate(m.records)}
    m.record_sets, m.regs, m.unmodelled = dict(r.m.record_sets), dict(r.m.regs), dict(r.m.unmodelled)
    m.deferred = {k: list(v) for k, v in r.m.deferred.items()}
    m.indirect = list(r.m.indirect)
    return c


def _fresh(rec: BranchRecord) -> BranchRecord:
    c = object.__new__(BranchRecord)  # (what copy.copy makes, without its protocol's cost)
    c.__dict__.update(rec.__dict__)
    return c


def _copied(rec: MemRecord) -> MemRecord:
    c = object.__new__(MemRecord)
    c.__dict__.update(rec.__dict__)
    c.per_call = list(rec.per_call)
    return c
