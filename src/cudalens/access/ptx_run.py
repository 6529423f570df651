"""Run a PTX kernel on the lane machine (cudalens.access.ptx_exec): memory instructions (with the
warp-level sector and wavefront counts of every execution), warp shuffles and votes, and the
min-PC scheduler over basic blocks (see ptx_exec's docstring for the rules). Every lane mask the
scheduler hands out is a subset of the launch's valid lanes (it starts from them and only narrows
them), so no step masks with them again. Sectors, wavefronts and branch splits are counted once at
the end of a run, for all executions together."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from cudalens.access.ptx_alu import alu
from cudalens.access.ptx_control import control_and_sides, deciding
from cudalens.access.ptx_counts import count_deferred
from cudalens.access.ptx_exec import (
    NOOPS,
    SHARED_BASE,
    UNMODELLED,
    WARP,
    BranchRecord,
    Launch,
    Machine,
    MemRecord,
    RunResult,
    Val,
    _address_parts,
    _NotModelled,
    basic_blocks,
    offset_address,
)
from cudalens.access.ptx_forms import _int_bits, _types
from cudalens.access.ptx_predicated import count_skipped
from cudalens.access.ptx_slice import slice_of
from cudalens.access.ptx_warp import match_redux, shfl, vote
from cudalens.compiled.ptx import Function, Instruction, PtxModule, type_bytes

_SYNTHETIC_MOD = 61


def _space(ins: Instruction) -> str | None:
    for s in ("global", "shared", "const", "local", "param"):
        if s in ins.parts:
            return s
    return None


def _width(ins: Instruction) -> tuple[int, int, str]:
    """(vector length, element bytes, element type)."""
    vec = 4 if "v4" in ins.parts else 2 if "v2" in ins.parts else 8 if "v8" in ins.parts else 1
    ts = _types(ins)
    typ = ts[-1] if ts else "b32"
    return vec, type_bytes(typ) or 4, typ


def _synthetic(m: Machine, addr: np.ndarray, typ: str) -> np.ndarray:
    """The value a load yields in each lane's trial seed: 0 for seed 0 (zero-filled memory), else a
    hash of the address, different per seed."""
    h = ((addr >> 2) * 2654435761 + m.seed_term) % _SYNTHETIC_MOD
    for lo, hi in m.zero_seed:  # (a new array: set in place)
        h[lo:hi] = 0
    return h.astype(np.float64) if typ.startswith("f") else h


def _record(m: Machine, ins: Instruction, space: str, op: str, addr: Val, active: np.ndarray, present: np.ndarray,
            width: int, extra_taint: tuple[int, str] = (0, ""), lanes: np.ndarray | tuple[np.ndarray, int] | None = None
            ) -> None:
    """One execution of a memory instruction: its records (per variant with a warp at it) and their taint now;
    its requests, lanes and sectors (wavefronts) at the end of the run (:func:`cudalens.access.ptx_counts.count_deferred`, all at once).
    ``lanes``: the addresses kept for then, ``addr``'s or (base lanes, offset) whose sum they are (a
    register's lanes shared by the executions that add offsets to it, not a new array each)."""
    kept = addr.a if lanes is None else lanes
    if m.rows_of[0] is not present:  # (the same block mask for every instruction of a block)
        rows = np.logical_or.reduce(present.reshape(-1, WARP), axis=1)
        on = rows.reshape(m.V, -1).any(axis=1)  # rows are variant-major
        m.rows_of = (present, rows, on, on.tobytes(), bool(on.any()))
    _, rows_present, variants, vkey, anyv = m.rows_of
    if not anyv:
        for mem in m.mem_v:
            mem.setdefault(ins.index, MemRecord(ins.index, space, op, width))
        return
    known = m.record_sets.get((ins.index, vkey))
    if known is not None and addr.taint <= known[2] and extra_taint[0] <= known[2]:  # its records made, each
        # with a taint at least this one's (taints only rise): nothing to raise
        m.deferred.setdefault((space, width), []).append((kept, active, rows_present, known[0], known[1]))
        return
    vs, ids = np.nonzero(variants)[0].tolist(), []
    for v in vs:
        rec = m.mem_v[v].get(ins.index)
        if rec is None:
            rec = m.mem_v[v][ins.index] = MemRecord(ins.index, space, op, width)
        for t, w in ((addr.taint, addr.why), extra_taint):
            if t > rec.taint:
                rec.taint, rec.why = t, w
        k = m.record_id.get(id(rec))
        if k is None:  # (the machine holds its records: their ids stay theirs)
            m.records.append(rec)
            k = m.record_id[id(rec)] = len(m.records) - 1
        ids.append(k)
    m.record_sets[(ins.index, vkey)] = (vs, ids, min(m.records[k].taint for k in ids))
    m.deferred.setdefault((space, width), []).append((kept, active, rows_present, vs, ids))


def _count_branches(m: Machine, runs: list[tuple[int, np.ndarray, np.ndarray, int, str]]
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """Per conditional branch and variant: the warp executions (warps with a lane at it) and those
    whose lanes split, from every execution of the run at once; records made in execution order.
    Returns per execution and warp its lanes at the branch and those taking it (None: no execution)."""
    if not runs:
        return None
    act = np.stack([r[1] for r in runs]).reshape(len(runs), -1, WARP)
    tk = np.count_nonzero(np.stack([r[2] for r in runs]).reshape(act.shape), axis=2)
    on = np.count_nonzero(act, axis=2)
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


def _param_value(v: object, off: int, eb: int) -> int | float:
    """The value a kernel parameter load reads: a pointer's address, a struct's bytes, a scalar."""
    if isinstance(v, tuple) and v[0] == "ptr":
        return int(v[1]) + off
    if isinstance(v, (bytes, bytearray)):
        return int.from_bytes(bytes(v[off:off + eb]).ljust(eb, b"\0"), "little")
    if isinstance(v, (int, float)):
        return v
    return 0


def _memory(m: Machine, ins: Instruction, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
    op = ins.base
    o = ins.operands
    vec, eb, typ = _width(ins)
    space = _space(ins)
    if op in ("ld", "ldu") and space == "param":
        pname, off = _address_parts(o[1])  # (a parameter's lanes all hold the offset)
        k, v = m.params.get(pname, (None, 0))  # (not a parameter: 0, whatever the offset)
        vals = [_param_value(x, off, eb) for x in (v if isinstance(v, list) else [v])]
        dt = np.float64 if typ.startswith("f") or any(isinstance(x, float) for x in vals) else np.int64
        arr = np.full(m.T, vals[0], dtype=dt) if len(set(vals)) == 1 else np.asarray(vals, dtype=dt)[m.variant]
        for d in (d.strip() for d in o[0].strip("{}").split(",")):
            m.write(d, Val(arr), typ, mask)
        return
    mem_tok = o[1] if op in ("ld", "ldu") else o[0]
    base, off, _p = m.address_base(mem_tok)
    # the addresses (offset_address), made when something needs their lanes (the counts keep the base and
    # the offset); a Val is never false, so ``addr or ...`` makes them only while they are not made
    addr = base if not off else None
    kept: np.ndarray | tuple[np.ndarray, int] = (base.a, off) if off else base.a
    if space is None:  # generic: shared window or global, by value
        addr = addr or offset_address(base, off)
        sh = (addr.a >= SHARED_BASE) & (addr.a < SHARED_BASE + (1 << 32))
        on = np.count_nonzero(mask)
        space = "shared" if on and np.count_nonzero(sh[mask]) == on else "global"
    if space == "shared" and (_int_bits(addr.form if addr else _sum_form(base.form, off)) or 64) > 48:  # (2**48: SHARED_BASE)
        addr = addr or offset_address(base, off)
        if addr.a.size and addr.a.max() >= SHARED_BASE:
            addr = Val(np.where(addr.a >= SHARED_BASE, addr.a - SHARED_BASE, addr.a), addr.taint, addr.why)  # generic
            kept = addr.a
    line = ins.loc.line if ins.loc else 0
    width = m.launch.merged.get(ins.index, vec * eb)
    if width < 0:  # vectorized by ptxas across unrolled iterations: the aligned wider access holding it
        width = -width
        addr = addr or offset_address(base, off)
        addr = Val(addr.a - addr.a % width, addr.taint, addr.why)
        kept = addr.a
    if space in ("global", "shared", "const", "local") and width:
        _record(m, ins, space, "load" if op in ("ld", "ldu") else "store", addr or base, mask, present,
                width, ptaint, kept)
    dsts = [d.strip() for d in o[0].strip("{}").split(",")] if op in ("ld", "ldu") else []
    if dsts and m.launch.needed is not None and not any(d in m.launch.needed for d in dsts):
        return  # a value nothing executed reads: counted above, not made
    if op in ("ld", "ldu"):
        addr = addr or offset_address(base, off)
        if addr.taint >= 2:  # its taint and why, whether or not the address is the same for a warp's lanes
            taint, why = addr.taint, addr.why
        else:
            rows = addr.a.reshape(-1, WARP)
            if m.full(mask):  # every lane active: whether each row holds one address
                uniform = bool((rows == rows[:, :1]).all())
            else:
                act = mask.reshape(-1, WARP)
                first = np.where(act, rows, 0).max(axis=1, keepdims=True)
                uniform = np.count_nonzero((rows != first) & act) == 0
            taint = max(addr.taint, 1 if uniform else 2)
            why = addr.why if addr.taint >= (1 if uniform else 2) else (
                f"{'warp-uniform ' if uniform else 'per-lane '}value loaded at line {line}")
        for k, d in enumerate(dsts):
            m.write(d, Val(_synthetic(m, addr.a + k * eb if k else addr.a, typ), taint, why), typ, mask)


def _sum_form(form: str, off: int) -> str:
    """The form of ``base + off`` for lanes of ``form``, where it is known to stay below SHARED_BASE."""
    bits = _int_bits(form)
    return "u48" if bits is not None and bits < 48 and 0 <= off < (1 << 47) else "i"


def _taint_dsts(m: Machine, ins: Instruction, mask: np.ndarray, why: str) -> None:
    if not ins.operands:
        return
    first = ins.operands[0].strip("()")
    if ins.base == "call":
        first = ins.operands[0].strip("()") if ins.operands[0].startswith("(") else ""
    for d in first.strip("{}").split(","):
        d = d.strip().split("|")[0]
        if d.startswith("%"):
            m.write(d, Val(np.zeros(m.T, dtype=np.int64), 2, why), "s64", mask)


def _step(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
    present = mask
    ptaint = (0, "")
    if ins.pred:
        p = m.read(ins.pred, "pred")
        mask = mask & (p.a != 0)
        ptaint = (p.taint, p.why)
    op = ins.base
    if op in ("ld", "ldu", "st"):
        _memory(m, ins, mask, present, ptaint)
    elif op == "shfl":
        shfl(m, ins, mask)
    elif op == "vote":
        vote(m, ins, mask)
    elif op in ("match", "redux"):
        match_redux(m, ins, mask)
    elif op == "activemask":
        act = mask.reshape(-1, WARP)
        m.write(ins.operands[0], Val(np.repeat((act.astype(np.int64) << np.arange(WARP)).sum(axis=1), WARP)), "b32",
                mask)
    elif op in ("atom", "red"):
        space = _space(ins) or "global"
        addr, _ = m.address(ins.operands[1] if op == "atom" else ins.operands[0])
        if space == "shared":  # its wavefronts: the load of the compare-and-swap loop ptxas may make of it reads them
            if (_int_bits(addr.form) or 64) > 32:
                addr = Val(np.where(addr.a >= SHARED_BASE, addr.a - SHARED_BASE, addr.a), addr.taint, addr.why)
            _record(m, ins, "shared", "atomic", addr, mask, present, _width(ins)[1], ptaint)
        for v in np.unique(m.row_variant[mask.reshape(-1, WARP).any(axis=1)]).tolist() if space != "shared" else ():
            m.mem_v[v].setdefault(ins.index, MemRecord(ins.index, f"atomic-{space}", "atomic", _width(ins)[1]))
        if op == "atom":
            _taint_dsts(m, ins, mask, f"atomic result at line {ins.loc.line if ins.loc else 0}")
    elif op == "mbarrier":
        if "try_wait" in ins.parts or "test_wait" in ins.parts:
            m.write(ins.operands[0], Val(np.ones(m.T, dtype=np.int64)), "pred", mask)
    elif op in NOOPS:
        if op == "cp" and "async" in ins.parts and "bulk" not in ins.parts and len(ins.operands) >= 3:
            src, _ = m.address(ins.operands[1])
            size = int(ins.operands[2]) if ins.operands[2].isdigit() else 16
            _record(m, ins, "global", "load", src, mask, present, size, ptaint)
        return
    elif op == "call":
        m.calls += 1
        target = next((t for t in ins.operands if t.startswith("%")), None)
        if target is not None:  # through a pointer (a virtual call): the target is data
            t = m.read(target, "u64")
            why = t.why or "a value computed per lane"
            if why not in m.indirect:
                m.indirect.append(why)
        _taint_dsts(m, ins, mask, "result of a call the model does not follow")
    elif op in UNMODELLED:
        m.unmodelled[op] = m.unmodelled.get(op, 0) + 1
        _taint_dsts(m, ins, mask, f"{op} not modelled")
    else:
        try:
            alu(m, ins, mask)
        except (_NotModelled, KeyError, ValueError, IndexError, StopIteration, TypeError, OverflowError):
            m.unmodelled[ins.opcode] = m.unmodelled.get(ins.opcode, 0) + 1
            _taint_dsts(m, ins, mask, f"{ins.opcode} not modelled")


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
        self.decided: dict[int, tuple[int, str]] = {}  # branch -> the worst taint of its condition so far, and why
        self.blocks = blocks = basic_blocks(fn)
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

    def send(self, k: int, lanes: np.ndarray) -> None:
        if k >= len(self.blocks) or not np.count_nonzero(lanes):
            return
        self.pending[k] = self.pending[k] | lanes if k in self.pending else lanes

    def loop(self) -> None:
        m, fn, launch, pending, decided, dead = self.m, self.fn, self.launch, self.pending, self.decided, self.launch.dead
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
            for ins in fn.instructions[s:e]:
                if ins is last and ins.base in ("bra", "ret", "exit", "brx"):
                    break
                if dead is None or ins.index not in dead:
                    _step(m, ins, mask)
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
