"""Warp-wide instructions of the PTX lane machine (cudalens.access.ptx_exec): shuffles, votes,
``match`` and ``redux``, each over the 32 lanes of every warp at once."""

from __future__ import annotations

import numpy as np

from cudalens.access.ptx_exec import WARP, Machine, Val
from cudalens.access.ptx_forms import _types
from cudalens.compiled.ptx import Instruction


def shfl(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
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


def vote(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
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


def match_redux(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
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
