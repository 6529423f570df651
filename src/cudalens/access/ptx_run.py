"""Run a PTX kernel on the lane machine (cudalens.access.ptx_exec): memory instructions (with the
warp-level sector and wavefront counts of every execution), warp shuffles and votes, and the
min-PC scheduler over basic blocks (see ptx_exec's docstring for the rules). Every lane mask the
scheduler hands out is a subset of the launch's valid lanes (it starts from them and only narrows
them), so no step masks with them again. Sectors, wavefronts and branch splits are counted once at
the end of a run, for all executions together."""

from __future__ import annotations

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
    _int_bits,
    _NotModelled,
    _types,
    basic_blocks,
)
from cudalens.access.ptx_predicated import count_skipped
from cudalens.access.ptx_slice import slice_of
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
    if m.zero_seed is not None:
        h = np.where(m.zero_seed, 0, h)
    return h.astype(np.float64) if typ.startswith("f") else h


def _record(m: Machine, ins: Instruction, space: str, op: str, addr: Val, active: np.ndarray, present: np.ndarray,
            width: int, extra_taint: tuple[int, str] = (0, "")) -> None:
    """One execution of a memory instruction: its records (per variant with a warp at it) and their taint now;
    its requests, lanes and sectors (wavefronts) at the end of the run (:func:`cudalens.access.ptx_counts.count_deferred`, all at once)."""
    rows_present = np.logical_or.reduce(present.reshape(-1, WARP), axis=1)
    variants = rows_present.reshape(m.V, -1).any(axis=1)  # rows are variant-major
    if not variants.any():
        for mem in m.mem_v:
            mem.setdefault(ins.index, MemRecord(ins.index, space, op, width))
        return
    known = m.record_sets.get((ins.index, variants.tobytes()))
    if known is not None and addr.taint <= 0 and extra_taint[0] <= 0:  # its records made: no taint to raise
        m.deferred.setdefault((space, width), []).append((addr.a, active, rows_present, *known))
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
    m.record_sets[(ins.index, variants.tobytes())] = (vs, ids)
    m.deferred.setdefault((space, width), []).append((addr.a, active, rows_present, vs, ids))


def _count_branches(m: Machine, runs: list[tuple[int, np.ndarray, np.ndarray, int, str]]) -> None:
    """Per conditional branch and variant: the warp executions (warps with a lane at it) and those
    whose lanes split, from every execution of the run at once; records made in execution order."""
    if not runs:
        return
    act = np.stack([r[1] for r in runs]).reshape(len(runs), -1, WARP)
    tk = np.stack([r[2] for r in runs]).reshape(act.shape).sum(axis=2)
    live = act.any(axis=2)
    div = live & (tk > 0) & (tk < act.sum(axis=2))
    key = np.arange(len(runs))[:, None] * m.V + m.row_variant[None, :]
    req = np.bincount(key[live], minlength=len(runs) * m.V).reshape(len(runs), m.V)
    dv = np.bincount(key[div], minlength=len(runs) * m.V).reshape(len(runs), m.V)
    for e, (index, _mask, _taken, taint, why) in enumerate(runs):
        for v in np.nonzero(req[e])[0].tolist():
            rec = m.branches_v[v].setdefault(index, BranchRecord(index))
            rec.requests += int(req[e, v])
            rec.divergent += int(dv[e, v])
            if taint > rec.taint:
                rec.taint, rec.why = taint, why


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
        addr, pname = m.address(o[1])
        k, v = m.params.get(pname, (None, 0)) if pname else (None, 0)
        off = int(addr.a[0]) if addr.a.size else 0
        vals = [_param_value(x, off, eb) for x in (v if isinstance(v, list) else [v])]
        dt = np.float64 if typ.startswith("f") or any(isinstance(x, float) for x in vals) else np.int64
        arr = np.full(m.T, vals[0], dtype=dt) if len(set(vals)) == 1 else np.asarray(vals, dtype=dt)[m.variant]
        for d in (d.strip() for d in o[0].strip("{}").split(",")):
            m.write(d, Val(arr), typ, mask)
        return
    mem_tok = o[1] if op in ("ld", "ldu") else o[0]
    addr, _ = m.address(mem_tok)
    if space is None:  # generic: shared window or global, by value
        sh = (addr.a >= SHARED_BASE) & (addr.a < SHARED_BASE + (1 << 32))
        on = np.count_nonzero(mask)
        space = "shared" if on and np.count_nonzero(sh[mask]) == on else "global"
    if space == "shared" and (_int_bits(addr.form) or 64) > 32:  # a 32-bit address is a shared-window one
        addr = Val(np.where(addr.a >= SHARED_BASE, addr.a - SHARED_BASE, addr.a), addr.taint, addr.why)
    line = ins.loc.line if ins.loc else 0
    width = m.launch.merged.get(ins.index, vec * eb)
    if width < 0:  # vectorized by ptxas across unrolled iterations: the aligned wider access holding it
        width = -width
        addr = Val(addr.a - addr.a % width, addr.taint, addr.why)
    if space in ("global", "shared", "const", "local") and width:
        _record(m, ins, space, "load" if op in ("ld", "ldu") else "store", addr, mask, present,
                width, ptaint)
    dsts = [d.strip() for d in o[0].strip("{}").split(",")] if op in ("ld", "ldu") else []
    if dsts and m.launch.needed is not None and not any(d in m.launch.needed for d in dsts):
        return  # a value nothing executed reads: counted above, not made
    if op in ("ld", "ldu"):
        rows = addr.a.reshape(-1, WARP)
        act = mask.reshape(-1, WARP)
        first = np.where(act, rows, 0).max(axis=1, keepdims=True)
        uniform = np.count_nonzero((rows != first) & act) == 0
        taint = max(addr.taint, 1 if uniform else 2)
        why = addr.why if addr.taint >= (1 if uniform else 2) else (
            f"{'warp-uniform ' if uniform else 'per-lane '}value loaded at line {line}")
        for k, d in enumerate(dsts):
            m.write(d, Val(_synthetic(m, addr.a + k * eb if k else addr.a, typ), taint, why), typ, mask)


def _shfl(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
    o = ins.operands
    dst = o[0].split("|")
    a, b, c = m.read(o[1], "b32"), m.read(o[2], "u32"), m.read(o[3], "u32")
    lane = m.special["%laneid"]
    seg = (c.a >> 8) & 0x1F
    min_lane = lane & seg
    max_lane = min_lane | (c.a & 0x1F & ~seg)
    mode = next(p for p in ins.parts if p in ("up", "down", "bfly", "idx"))
    if mode == "up":
        j = lane - b.a
        ok = j >= min_lane
    elif mode == "down":
        j = lane + b.a
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ b.a
        ok = j <= max_lane
    else:
        j = min_lane | (b.a & ~seg)
        ok = j <= max_lane
    j = np.where(ok, j, lane) & 31
    src = (np.arange(m.T) // WARP) * WARP + j
    t = max(a.taint, b.taint, c.taint)
    m.write(dst[0], Val(a.a[src], t, a.why or b.why), "b32", mask)
    if len(dst) > 1:
        m.write(dst[1], Val(ok.astype(np.int64), max(b.taint, c.taint)), "pred", mask)


def _vote(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
    o = ins.operands
    p = m.read(o[1], "pred") if len(o) > 1 else Val(np.ones(m.T, dtype=np.int64))
    act = mask.reshape(-1, WARP)
    v = (p.a != 0).reshape(-1, WARP) & act
    if "ballot" in ins.parts:
        bits = (v.astype(np.int64) << np.arange(WARP)).sum(axis=1)
        r = np.repeat(bits, WARP)
        m.write(o[0], Val(r, p.taint, p.why), "b32", mask)
        return
    if "all" in ins.parts:
        r = np.repeat((v | ~act).all(axis=1), WARP)
    elif "any" in ins.parts:
        r = np.repeat(v.any(axis=1), WARP)
    else:
        r = np.repeat((v == v[:, :1]).all(axis=1) | ~act.any(axis=1), WARP)
    m.write(o[0], Val(r.astype(np.int64), p.taint, p.why), "pred", mask)


def _match_redux(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
    """``match.any``/``match.all`` (the lanes of the member mask holding the same value) and
    ``redux.sync`` (add/min/max/and/or/xor over the member mask), per warp."""
    o = ins.operands
    typ = _types(ins)[-1] if _types(ins) else "b32"
    a, mm = m.read(o[1], typ), m.read(o[2], "b32")
    lane_bit = np.int64(1) << np.arange(WARP, dtype=np.int64)
    act = mask.reshape(-1, WARP) & ((mm.a.reshape(-1, WARP) & lane_bit) != 0)
    v = a.a.reshape(-1, WARP)
    taint, why = max(a.taint, mm.taint), a.why or mm.why
    dst = o[0].split("|")
    if ins.base == "redux":
        kind = next(k for k in ("add", "min", "max", "and", "or", "xor") if k in ins.parts)
        ident = {"add": 0, "min": np.iinfo(np.int64).max, "max": np.iinfo(np.int64).min, "and": -1, "or": 0, "xor": 0}
        w = np.where(act, v, ident[kind])
        red = {"add": w.sum(axis=1), "min": w.min(axis=1), "max": w.max(axis=1), "and": np.bitwise_and.reduce(w, axis=1),
               "or": np.bitwise_or.reduce(w, axis=1), "xor": np.bitwise_xor.reduce(w, axis=1)}[kind]
        m.write(dst[0], Val(np.repeat(red, WARP), taint, why), typ, mask)
        return
    same = (v[:, :, None] == v[:, None, :]) & act[:, None, :]  # [warp, lane, other lane]
    peers = (same.astype(np.int64) * lane_bit).sum(axis=2)
    if "any" in ins.parts:
        m.write(dst[0], Val(peers.reshape(-1), taint, why), "b32", mask)
        return
    members = (act.astype(np.int64) * lane_bit).sum(axis=1, keepdims=True)
    equal = (peers == members) | ~act
    all_equal = np.repeat(equal.all(axis=1), WARP)
    m.write(dst[0], Val(np.where(all_equal, np.repeat(members[:, 0], WARP), 0), taint, why), "b32", mask)
    if len(dst) > 1:
        m.write(dst[1], Val(all_equal.astype(np.int64), taint, why), "pred", mask)


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
        _shfl(m, ins, mask)
    elif op == "vote":
        _vote(m, ins, mask)
    elif op in ("match", "redux"):
        _match_redux(m, ins, mask)
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
    with np.errstate(all="ignore"):  # lanes' arithmetic wraps and overflows as on the GPU
        return _run_variants(module, fn, launch)


def _run_variants(module: PtxModule, fn: Function, launch: Launch) -> list[RunResult]:
    m = Machine(module, fn, launch)
    dead = launch.dead
    if dead is None or launch.needed is None:  # see ptx_slice
        dead, needed = slice_of(fn)
        m.launch = launch = dataclasses.replace(launch, dead=dead, needed=needed)
    if launch.control is None or launch.sides is None:
        cd, sides = control_and_sides(fn)
        m.launch = launch = dataclasses.replace(launch, control=deciding(fn, cd), sides=sides)
    control = launch.control or {}
    decided: dict[int, tuple[int, str]] = {}  # branch -> the worst taint of its condition so far, and why
    blocks = basic_blocks(fn)
    start_of = {s: k for k, (s, _e) in enumerate(blocks)}
    block_of_label = {lab: start_of.get(i) for lab, i in fn.labels.items()}
    pending: dict[int, np.ndarray] = {0: m.valid.copy()} if blocks else {}
    counts: dict[int, int] = {}
    back_taken: dict[int, int] = {}
    truncated: set[int] = set()
    branch_runs: list[tuple[int, np.ndarray, np.ndarray, int, str]] = []
    steps = 0
    complete = True

    def send(k: int, lanes: np.ndarray) -> None:
        if k >= len(blocks) or not np.count_nonzero(lanes):
            return
        pending[k] = pending[k] | lanes if k in pending else lanes

    while pending:
        k = min(pending)
        mask = pending.pop(k)
        s, e = blocks[k]
        steps += e - s
        if steps > launch.max_steps:
            complete = False
            break
        last = fn.instructions[e - 1]
        if decided:
            m.ctl = max((decided.get(b, (0, "")) for b in control.get(k, ())), default=(0, ""), key=lambda t: t[0])
            m.ctl_taint = m.ctl[0]
        for ins in fn.instructions[s:e]:
            if ins is last and ins.base in ("bra", "ret", "exit", "brx"):
                break
            if ins.index not in dead:
                _step(m, ins, mask)
        if last.base in ("ret", "exit"):
            if last.pred:
                p = m.read(last.pred, "pred")
                send(k + 1, mask & ~(p.a != 0))
            continue
        if last.base != "bra":
            send(k + 1, mask)
            continue
        target = block_of_label.get(last.operands[0].strip()) if last.operands else None
        if target is None:
            complete = False
            continue
        if last.pred:
            p = m.read(last.pred, "pred")
            taken = mask & (p.a != 0)
            branch_runs.append((last.index, mask, taken, p.taint, p.why))  # counted at the end (_count_branches)
            if p.taint > decided.get(last.index, (0, ""))[0]:  # what runs under it depends on its data
                why = p.why if "under a branch" in p.why else (
                    f"value chosen under a branch (line {last.loc.line if last.loc else 0}) on a {p.why or 'loaded value'}")
                decided[last.index] = (p.taint, why)
        else:
            taken = mask
        fall = mask & ~taken
        if target <= k and np.count_nonzero(taken):  # a loop's back edge
            if counts.get(last.index, 0) >= _loop_cap(launch, steps):
                truncated.add(last.index)
                send(k + 1, taken)
                taken = np.zeros_like(taken)
            else:
                counts[last.index] = counts.get(last.index, 0) + 1
                back_taken[last.index] = back_taken.get(last.index, 0) + 1
                for other in list(counts):
                    if other != last.index and blocks[target][0] <= other < last.index:
                        counts[other] = 0
        send(target, taken)
        send(k + 1, fall)
    count_deferred(m)
    _count_branches(m, branch_runs)
    count_skipped(fn, m.mem_v, m.row_variant, branch_runs, launch.sides or {})
    return [RunResult(mem, br, back_taken, truncated, steps, complete, m.unmodelled, m.calls,
                      tuple(m.indirect))
            for mem, br in zip(m.mem_v, m.branches_v)]
