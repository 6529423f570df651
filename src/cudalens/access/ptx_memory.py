"""Loads and stores of the PTX lane machine (cudalens.access.ptx_exec), decoded once per
instruction (:func:`memory_step`, for cudalens.access.ptx_decode): per execution the warp-level
records of the access (counted at the end of the run, cudalens.access.ptx_counts) and, for a load,
the synthetic values it yields (memory is not modelled: a hash of the address and the trial's seed)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from cudalens.access.memory import rows_on
from cudalens.access.ptx_exec import (
    SHARED_BASE,
    WARP,
    Machine,
    MemRecord,
    Reader,
    Step,
    Val,
    _address_parts,
    offset_address,
)
from cudalens.access.ptx_forms import _int_bits, _int_form, _types
from cudalens.compiled.ptx import Instruction, type_bytes

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
    x = (addr >> 2) * 2654435761
    x += m.seed_term
    h = x - (x // _SYNTHETIC_MOD) * _SYNTHETIC_MOD  # (x % _SYNTHETIC_MOD: the same lanes, wrapping or not, at half
    # its cost: numpy divides by a constant without a division per lane, and takes a remainder with one)
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
        rows = rows_on(present.reshape(-1, WARP))
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


def _param_value(v: object, off: int, eb: int) -> int | float:
    """The value a kernel parameter load reads: a pointer's address, a struct's bytes, a scalar."""
    if isinstance(v, tuple) and v[0] == "ptr":
        return int(v[1]) + off
    if isinstance(v, (bytes, bytearray)):
        return int.from_bytes(bytes(v[off:off + eb]).ljust(eb, b"\0"), "little")
    if isinstance(v, (int, float)):
        return v
    return 0


def memory_step(m: Machine, ins: Instruction, reader: Callable[[str, str], Reader]) -> Step:
    """The step of a load or store (``ld``, ``ldu``, ``st``), decoded: its width, state space,
    address base and offset, merged width, destinations and whether any of them is needed.
    ``reader``: ptx_decode's operand readers."""
    op, o = ins.base, ins.operands
    vec, eb, typ = _width(ins)
    space = _space(ins)
    load = op in ("ld", "ldu")
    dsts = [d.strip() for d in o[0].strip("{}").split(",")] if load else []
    if load and space == "param":
        pname, poff = _address_parts(o[1])  # (a parameter's lanes all hold the offset)

        def param_load(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
            k, v = m.params.get(pname, (None, 0))  # (not a parameter: 0, whatever the offset)
            vals = [_param_value(x, poff, eb) for x in (v if isinstance(v, list) else [v])]
            dt = np.float64 if typ.startswith("f") or any(isinstance(x, float) for x in vals) else np.int64
            arr = np.full(m.T, vals[0], dtype=dt) if len(set(vals)) == 1 else np.asarray(vals, dtype=dt)[m.variant]
            # the form of the values (from them, not the lanes): a size that stays small in the sums it enters
            form = "f" if dt is np.float64 else _int_form(int(min(vals)), int(max(vals))) if m.T else "i"
            for d in dsts:
                m.put(d, Val(arr, form=form), typ, mask)
        return param_load
    bname, boff = _address_parts(o[1] if load else o[0])
    if bname in m.params:  # [param]: its lanes hold the offset (Machine.address_base)
        off = 0
        read_base: Reader = lambda m: Val(np.full(m.T, boff, dtype=np.int64))  # noqa: E731
    else:
        off, read_base = boff, reader(bname, "s64")
    rec_op = "load" if load else "store"
    line = ins.loc.line if ins.loc else 0
    merged_width = m.launch.merged.get(ins.index, vec * eb)
    needed = m.launch.needed
    made = not (dsts and needed is not None and not any(d in needed for d in dsts))  # else counted, not made
    loaded = "f" if typ.startswith("f") else f"u{(_SYNTHETIC_MOD - 1).bit_length()}"  # (_synthetic's values' form)
    uniform_why, per_lane_why = f"warp-uniform value loaded at line {line}", f"per-lane value loaded at line {line}"

    def memory(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
        base = read_base(m)
        # the addresses (offset_address), made when something needs their lanes (the counts keep the base and
        # the offset); a Val is never false, so ``addr or ...`` makes them only while they are not made
        addr = base if not off else None
        kept: np.ndarray | tuple[np.ndarray, int] = (base.a, off) if off else base.a
        sp = space
        if sp is None:  # generic: shared window or global, by value
            addr = addr or offset_address(base, off)
            sh = (addr.a >= SHARED_BASE) & (addr.a < SHARED_BASE + (1 << 32))
            on = np.count_nonzero(mask)
            sp = "shared" if on and np.count_nonzero(sh[mask]) == on else "global"
        if sp == "shared" and (_int_bits(addr.form if addr else _sum_form(base.form, off)) or 64) > 48:  # (2**48: SHARED_BASE)
            addr = addr or offset_address(base, off)
            if addr.a.size and addr.a.max() >= SHARED_BASE:
                addr = Val(np.where(addr.a >= SHARED_BASE, addr.a - SHARED_BASE, addr.a), addr.taint, addr.why)  # generic
                kept = addr.a
        width = merged_width
        if width < 0:  # vectorized by ptxas across unrolled iterations: the aligned wider access holding it
            width = -width
            addr = addr or offset_address(base, off)
            addr = Val(addr.a - addr.a % width, addr.taint, addr.why)
            kept = addr.a
        if sp in ("global", "shared", "const", "local") and width:
            _record(m, ins, sp, rec_op, addr or base, mask, present, width, ptaint, kept)
        if not load or not made:
            return
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
            why = addr.why if addr.taint >= (1 if uniform else 2) else (uniform_why if uniform else per_lane_why)
        for k, d in enumerate(dsts):
            m.put(d, Val(_synthetic(m, addr.a + k * eb if k else addr.a, typ), taint, why, loaded), typ, mask)
    return memory


def _sum_form(form: str, off: int) -> str:
    """The form of ``base + off`` for lanes of ``form``, where it is known to stay below SHARED_BASE."""
    bits = _int_bits(form)
    return "u48" if bits is not None and bits < 48 and 0 <= off < (1 << 47) else "i"
