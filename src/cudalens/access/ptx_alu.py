"""The arithmetic of the PTX lane machine (cudalens.access.ptx_exec): integer, float, predicate,
conversion and bit-field instructions, with PTX's type rules (32-bit values wrap; signedness is a
property of the instruction, not of the register)."""

from __future__ import annotations

import numpy as np

from cudalens.access.ptx_exec import _CMP, _M32, SHARED_BASE, Machine, Val, _merge, _NotModelled
from cudalens.access.ptx_forms import _types
from cudalens.compiled.ptx import Instruction

#: integer operations whose result modulo 2**n is the same for signed and unsigned operands
_MODULAR = frozenset({"add", "sub", "mul", "mad", "and", "or", "xor", "shl"})
_NARROW = frozenset({"s8", "s16", "s32", "u8", "u16", "u32", "b8", "b16", "b32"})
_BINARY = frozenset({"add", "sub", "mul", "mad", "min", "max", "div", "rem", "and", "or", "xor", "shl", "shr", "fma",
                     "mul24", "mad24", "sad", "copysign"})
_UNARY = frozenset({"mov", "neg", "not", "abs", "cnot", "popc", "clz", "brev", "cvta", "sqrt", "rcp", "rsqrt", "ex2",
                    "lg2", "sin", "cos", "tanh", "cvt", "bfind", "isspacep", "testp"})


def alu(m: Machine, ins: Instruction, mask: np.ndarray) -> None:  # noqa: C901 - one dispatch table
    op, ts, o = ins.base, _types(ins), ins.operands
    typ = ts[-1] if ts else "s64"
    parts = ins.parts
    if op in _BINARY:
        wide = "wide" in parts
        src_t = typ
        if op in _MODULAR and not wide and typ in _NARROW and "sat" not in parts and "hi" not in parts:
            src_t = "u" + typ[1:]  # the low bits these give do not depend on signedness: no sign extension
        a = m.read(o[1], src_t)
        b = m.read(o[2], "u32" if op in ("shl", "shr") else src_t)
        x, y = a.a, b.a
        if op == "add":
            r = x + y
        elif op == "sub":
            r = x - y
        elif op in ("mul", "mul24"):
            if "hi" in parts and not typ.startswith("f"):
                bits = int(typ[1:])
                if bits == 64:
                    raise _NotModelled("mul.hi.64")
                r = (x * y) >> bits
            else:
                r = x * y
        elif op in ("mad", "fma", "mad24", "sad"):
            c = m.read(o[3], ("s64" if typ[0] == "s" else "u64") if wide else src_t)
            if op == "sad":
                r = np.abs(x - y) + c.a
            elif "hi" in parts and not typ.startswith("f"):
                r = ((x * y) >> int(typ[1:])) + c.a
            else:
                r = x * y + c.a
            t, w = _merge(a, b, c)
            m.write(o[0], Val(r, t, w), ("s64" if typ[0] == "s" else "u64") if wide else typ, mask)
            return
        elif op == "min":
            r = np.minimum(x, y)
        elif op == "max":
            r = np.maximum(x, y)
        elif op == "div":
            if typ.startswith("f"):
                r = x / np.where(y == 0, np.nan, y)
            else:
                yy = np.where(y == 0, 1, y)
                q = np.abs(x) // np.abs(yy)
                r = np.where((x >= 0) == (yy >= 0), q, -q)
        elif op == "rem":
            yy = np.where(y == 0, 1, y)
            q = np.abs(x) // np.abs(yy)
            r = x - np.where((x >= 0) == (yy >= 0), q, -q) * yy
        elif op == "copysign":
            r = np.copysign(y, x)
        elif typ == "pred":
            xb, yb = x != 0, y != 0
            r = {"and": xb & yb, "or": xb | yb, "xor": xb ^ yb}[op].astype(np.int64)
        else:
            xi, yi = x.astype(np.int64, copy=False), y.astype(np.int64, copy=False)
            if op == "and":
                r = xi & yi
            elif op == "or":
                r = xi | yi
            elif op == "xor":
                r = xi ^ yi
            elif o[2].isdigit():  # a constant shift: one operation
                k = int(o[2])
                r = (xi << k if k < 64 else np.zeros_like(xi)) if op == "shl" else xi >> min(k, 63)
            elif op == "shl":
                r = np.where(yi >= 64, 0, xi << np.minimum(yi, 63))
            else:
                r = xi >> np.minimum(yi, 63)
        t, w = _merge(a, b)
        out_t = ("s64" if typ[0] == "s" else "u64") if wide else typ
        m.write(o[0], Val(r, t, w, "f" if r.dtype.kind == "f" else "i" if r.dtype == np.int64 else ""), out_t, mask)
        return
    if op in _UNARY:
        if op == "mov" and o[0].startswith("{"):  # unpack
            dsts = [d.strip() for d in o[0][1:-1].split(",")]
            v = m.read(o[1], "u64" if typ in ("b64", "u64") else "u32")
            bits = (64 if typ in ("b64", "u64") else 32) // len(dsts)
            for k, d in enumerate(dsts):
                m.write(d, Val((v.a >> (bits * k)) & ((1 << bits) - 1), v.taint, v.why), f"u{bits}", mask)
            return
        if op == "mov" and o[1].startswith("{"):  # pack
            srcs = [s.strip() for s in o[1][1:-1].split(",")]
            bits = (64 if typ in ("b64", "u64") else 32) // len(srcs)
            acc, t, w = np.zeros(m.T, dtype=np.int64), 0, ""
            for k, s in enumerate(srcs):
                v = m.read(s, f"u{bits}")
                acc = acc | ((v.a.astype(np.int64) & ((1 << bits) - 1)) << (bits * k))
                if v.taint > t:
                    t, w = v.taint, v.why
            m.write(o[0], Val(acc, t, w), typ, mask)
            return
        src_t = ts[-1] if op == "cvt" and len(ts) >= 2 else typ
        dst_t = ts[0] if op == "cvt" and len(ts) >= 2 else typ
        a = m.read(o[1], src_t)
        x = a.a
        if op in ("mov", "cvt"):
            r = x
            if op == "cvt" and dst_t[0] in "su" and x.dtype.kind == "f":
                r = np.trunc(np.where(np.isfinite(x), x, 0)) if "rzi" in parts or "rni" not in parts else np.rint(x)
                if "rmi" in parts:
                    r = np.floor(x)
                if "rpi" in parts:
                    r = np.ceil(x)
            if op == "mov" and x.dtype.kind == "f" and dst_t[0] in "bsu":
                if a.taint == 0 and src_t in ("b32", "f32"):
                    r = np.frombuffer(x.astype(np.float32).tobytes(), dtype=np.uint32).astype(np.int64)
                else:
                    r = x
        elif op == "cvta":
            r = x - SHARED_BASE if ("to" in parts and "shared" in parts) else (
                x + SHARED_BASE if "shared" in parts else x)
            if "to" in parts and "shared" in parts and bool((x[mask] < SHARED_BASE).any()) if mask.any() else False:
                r = x
        elif op == "neg":
            r = -x
        elif op == "not":
            r = (x == 0).astype(np.int64) if typ == "pred" else ~x.astype(np.int64)
        elif op == "cnot":
            r = (x == 0).astype(np.int64)
        elif op == "abs":
            r = np.abs(x)
        elif op == "popc":
            r = _popc(x)
        elif op == "clz":
            r = _clz(x, int(typ[1:]))
        elif op == "brev":
            r = _brev(x, int(typ[1:]))
        elif op == "bfind":
            r = _bfind(x, typ, "shiftamt" in parts)
            dst_t = "u32"
        elif op == "sqrt":
            r = np.sqrt(np.abs(x))
        elif op == "rcp":
            r = 1.0 / np.where(x == 0, np.nan, x)
        elif op == "rsqrt":
            r = 1.0 / np.sqrt(np.abs(np.where(x == 0, np.nan, x)))
        elif op == "ex2":
            r = np.exp2(x)
        elif op == "lg2":
            r = np.log2(np.abs(np.where(x == 0, np.nan, x)))
        elif op in ("sin", "cos", "tanh"):
            r = getattr(np, op)(x)
        else:
            raise _NotModelled(op)
        if op == "cvta" and "to" in parts and "shared" in parts:
            dst_t = "u64" if typ == "u64" else "u32"
        m.write(o[0], Val(r, a.taint, a.why, a.form if r is x else ""), dst_t, mask)
        return
    if op == "setp":
        cmp = next(p for p in parts[1:] if p in _CMP)
        # equality of two registers' n-bit patterns does not depend on signedness: no sign extension
        # (an immediate is read as written, so a signed comparison with one keeps its type)
        both_regs = o[1].startswith("%r") and o[2].startswith("%r")  # nvcc's %r, %rd, %rs registers
        read_t = "u" + typ[1:] if cmp in ("eq", "ne") and typ in _NARROW and both_regs else typ
        a, b = m.read(o[1], read_t), m.read(o[2], read_t)
        r = _CMP[cmp](a.a, b.a).astype(np.int64)
        t, w = _merge(a, b)
        comb = next((p for p in parts if p in ("and", "or", "xor")), None)
        dsts = o[0].split("|")
        if comb and len(o) > 3:
            c = m.read(o[3], "pred")
            fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[comb]
            r2 = fn(r != 0, c.a != 0).astype(np.int64)
            r3 = fn(r == 0, c.a != 0).astype(np.int64)
            t, w = _merge(a, b, c)
        else:
            r2, r3 = r, ((r == 0).astype(np.int64) if "|" in o[0] else r)
        m.write(dsts[0], Val(r2, t, w, "u1"), "pred", mask)
        if len(dsts) > 1:
            m.write(dsts[1], Val(r3, t, w, "u1"), "pred", mask)
        return
    if op in ("selp", "slct"):
        a, b = m.read(o[1], typ), m.read(o[2], typ)
        c = m.read(o[3], "pred" if op == "selp" else ts[-1])
        cond = (c.a != 0) if op == "selp" else (c.a >= 0)
        t, w = _merge(a, b, c)
        m.write(o[0], Val(np.where(cond, a.a, b.a), t, w), typ, mask)
        return
    if op == "bfe":
        a, p, n = m.read(o[1], typ), m.read(o[2], "u32"), m.read(o[3], "u32")
        bits = int(typ[1:])
        pos, ln = np.minimum(p.a & 0xFF, bits), np.minimum(n.a & 0xFF, bits)
        r = (a.a.astype(np.int64) >> pos) & ((np.int64(1) << ln) - 1)
        if typ[0] == "s":
            sign = (r >> np.maximum(ln - 1, 0)) & 1
            r = np.where((ln > 0) & (sign == 1), r - (np.int64(1) << ln), r)
        t, w = _merge(a, p, n)
        m.write(o[0], Val(r, t, w), typ, mask)
        return
    if op == "bfi":
        f, b, p, n = m.read(o[1], typ), m.read(o[2], typ), m.read(o[3], "u32"), m.read(o[4], "u32")
        msk = ((np.int64(1) << (n.a & 0xFF)) - 1) << (p.a & 0xFF)
        r = (b.a & ~msk) | ((f.a << (p.a & 0xFF)) & msk)
        t, w = _merge(f, b, p, n)
        m.write(o[0], Val(r, t, w), typ, mask)
        return
    if op == "bmsk":
        a, b = m.read(o[1], "u32"), m.read(o[2], "u32")
        pos, ln = a.a & 0xFF, b.a & 0xFF
        if "clamp" in parts:
            pos, ln = np.minimum(pos, 32), np.minimum(ln, 32)
        else:
            pos, ln = pos & 31, ln & 31
        r = (((np.int64(1) << np.minimum(pos + ln, 32)) - 1) ^ ((np.int64(1) << pos) - 1)) & _M32
        t, w = _merge(a, b)
        m.write(o[0], Val(r, t, w), "b32", mask)
        return
    if op == "shf":
        lo, hi, n = m.read(o[1], "u32"), m.read(o[2], "u32"), m.read(o[3], "u32")
        sh = (n.a & 31) if "wrap" in parts else np.minimum(n.a, 32)
        both = (hi.a << 32) | lo.a
        r = ((both << sh) >> 32) if "l" in parts else (both >> sh)
        t, w = _merge(lo, hi, n)
        m.write(o[0], Val(r & _M32, t, w), "u32", mask)
        return
    if op == "prmt":
        a, b, c = m.read(o[1], "u32"), m.read(o[2], "u32"), m.read(o[3], "u32")
        if len(parts) == 2 and a.taint == 0 and b.taint == 0 and c.taint == 0:
            both = (b.a << 32) | a.a
            r = np.zeros(m.T, dtype=np.int64)
            for k in range(4):
                sel = (c.a >> (4 * k)) & 7
                r |= ((both >> (8 * sel)) & 0xFF) << (8 * k)
            m.write(o[0], Val(r, 0), "u32", mask)
            return
        t, w = _merge(a, b, c)
        m.write(o[0], Val(np.zeros(m.T, dtype=np.int64), max(t, 2), w or "byte permute of loaded data"), "u32", mask)
        return
    raise _NotModelled(ins.opcode)


def _popc(x: np.ndarray) -> np.ndarray:
    """Set bits per lane (of the 64-bit pattern)."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(x.astype(np.int64).view(np.uint64)).astype(np.int64)
    return np.array([bin(int(v) & ((1 << 64) - 1)).count("1") for v in x], dtype=np.int64)


def _clz(x: np.ndarray, bits: int) -> np.ndarray:
    """Leading zeros per lane of the low ``bits`` bits."""
    u = x.astype(np.int64) & ((1 << bits) - 1) if bits < 64 else x.astype(np.int64)
    if bits <= 32:  # exact in float64: bit length from frexp
        return (bits - np.frexp(u.astype(np.float64))[1]).astype(np.int64)
    return np.where(u < 0, 0, 64 - _bit_length(u))  # the 64-bit pattern, unsigned


def _bit_length(u: np.ndarray) -> np.ndarray:
    """Python's ``int.bit_length`` per lane of int64 values (of the magnitude, for negatives)."""
    a = np.abs(u)  # -2**63 stays negative: its magnitude has 64 bits
    hi, lo = (a >> 32).astype(np.float64), (a & 0xFFFFFFFF).astype(np.float64)  # exact below 2**32
    bl = np.where(hi > 0, 32 + np.frexp(hi)[1], np.frexp(lo)[1]).astype(np.int64)
    return np.where(a < 0, 64, bl)


def _bfind(x: np.ndarray, typ: str, shiftamt: bool) -> np.ndarray:
    """PTX bfind: the position of the most significant non-sign bit (0xFFFFFFFF if none); with
    .shiftamt the left shift that brings it to the top."""
    bits = int(typ[1:])
    u = x.astype(np.int64)
    if typ[0] == "s":
        u = np.where(u < 0, ~u, u)
    u = u & ((1 << bits) - 1) if bits < 64 else u
    pos = _bit_length(u) - 1 if bits > 32 else (np.frexp(u.astype(np.float64))[1] - 1).astype(np.int64)
    out = (bits - 1 - pos) if shiftamt else pos
    return np.where(pos < 0, 0xFFFFFFFF, out)


_REV8 = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.int64)


def _brev(x: np.ndarray, bits: int) -> np.ndarray:
    """PTX brev: the low ``bits`` bits in reverse order."""
    u = x.astype(np.int64)
    out = np.zeros_like(u)
    for k in range(bits // 8):
        out |= _REV8[(u >> (8 * k)) & 0xFF] << (bits - 8 * (k + 1))
    return out
