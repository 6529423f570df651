"""Value types and forms of the PTX lane machine (cudalens.access.ptx_exec): immediates, reading
raw lane values at a PTX type, storing them at one, and the *forms* that let both skip work (a
form is only ever a fact about the values: dropping it changes no result, only the time)."""

from __future__ import annotations

import struct
from functools import lru_cache

import numpy as np

from cudalens.compiled.ptx import Instruction


@lru_cache(maxsize=16384)
def _imm(tok: str) -> int | float | None:
    t = tok.strip()
    try:
        if t.startswith(("0f", "0F")) and len(t) == 10:
            return struct.unpack(">f", bytes.fromhex(t[2:]))[0]
        if t.startswith(("0d", "0D")) and len(t) == 18:
            return struct.unpack(">d", bytes.fromhex(t[2:]))[0]
        if t.lower().startswith(("0x", "-0x")):
            return int(t.rstrip("U"), 16)
        return int(t.rstrip("U"))
    except ValueError:
        try:
            return float(t)
        except ValueError:
            return None


def _as(v: np.ndarray, typ: str) -> np.ndarray:
    """Interpret raw lane values as PTX type ``typ``."""
    k, bits = typ[0], typ[1:]
    if k == "f":
        return v if v.dtype == np.float64 else v.astype(np.float64)
    if v.dtype.kind == "f":
        v = np.clip(np.where(np.isfinite(v), v, 0), -(2.0 ** 62), 2.0 ** 62).astype(np.int64)
    if bits in ("64", "") or not bits.isdigit():
        return v if v.dtype == np.int64 else v.astype(np.int64)
    n = int(bits)
    m = (1 << n) - 1
    u = v.astype(np.int64, copy=False) & m
    if k == "s":  # u in [0, 2**n): flipping the sign bit and taking it away sign-extends
        u = (u ^ (1 << (n - 1))) - (1 << (n - 1))
    return u


def _int_bits(form: str) -> int | None:
    return int(form[1:]) if form[:1] == "u" else 64 if form == "i" else None


@lru_cache(maxsize=1024)
def _same_as(form: str, typ: str) -> bool:
    """Whether values of ``form`` are unchanged by ``_as(v, typ)`` (so reading them needs no work)."""
    if not form or typ == "pred":
        return typ == "pred"
    if typ[0] == "f":
        return form == "f"
    bits, n = _int_bits(form), typ[1:]
    if bits is None or not n.isdigit() or typ[0] not in "bsu":
        return False
    if n == "64":
        return True
    if form == "i":
        return False
    return bits < int(n) if typ[0] == "s" else bits <= int(n)


@lru_cache(maxsize=1024)
def _stored_form(form: str, typ: str) -> tuple[bool, str]:
    """(whether ``_store_as(v, typ)`` leaves values of ``form`` unchanged, the form stored)."""
    if typ == "pred":
        return form == "u1", "u1"
    if typ[0] == "f":
        return form == "f", "f"
    n, bits = typ[1:], _int_bits(form)
    if not n.isdigit() or int(n) > 64:
        return False, ""
    if n == "64":
        return bits is not None, form if bits is not None else "i"
    kept = bits is not None and bits <= int(n)
    return kept, form if kept else "u" + n


def _form_of(arr: np.ndarray) -> str:
    """The form of a constant array (an immediate, a special register, a symbol's address)."""
    if arr.dtype.kind == "f":
        return "f"
    return _int_form(int(arr.min()), int(arr.max())) if arr.size else "i"


def _int_form(lo: int, hi: int) -> str:
    """The form of int64 lanes from ``lo`` to ``hi``: in [0, 2**n) with n as small as they allow (so that
    sums and products of them keep a form that needs no conversion), below 2**32; else any."""
    return f"u{max(1, hi.bit_length())}" if 0 <= lo and hi < (1 << 32) else "i"


@lru_cache(maxsize=256)
def _read_form(typ: str) -> str:
    """The form of ``_as(v, typ)``'s result."""
    if typ[0] == "f":
        return "f"
    n = typ[1:]
    if typ[0] in "bu" and n.isdigit() and int(n) < 64:
        return "u" + n
    return "i" if typ[0] in "bsu" and n.isdigit() and int(n) <= 64 else ""


#: integer types narrower than 64 bits: their stored lanes keep the low bits
_LOW_BITS = {f"{k}{n}": (1 << n) - 1 for k in "bsu" for n in (8, 16, 32)}


@lru_cache(maxsize=256)
def _union(a: str, b: str) -> str:
    """The form of lanes taken from values of forms ``a`` and ``b``."""
    if a == b:
        return a
    x, y = _int_bits(a), _int_bits(b)
    return "" if x is None or y is None else "i" if 64 in (x, y) else f"u{max(x, y)}"


def _store_as(v: np.ndarray, typ: str) -> np.ndarray:
    low = _LOW_BITS.get(typ)
    if low is not None and v.dtype == np.int64:  # what the general path does to int64 lanes, in one step
        return v & low
    if typ.startswith("f"):
        return np.asarray(v, dtype=np.float64)
    return _as(np.asarray(v), "u" + typ[1:] if typ[1:].isdigit() and typ[1:] != "64" else "s64")


_TYPES = {"b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f32", "f64", "pred",
          "b128", "bf16", "f16x2", "bf16x2"}


def _types(ins: Instruction) -> tuple[str, ...]:
    return _opcode_types(ins.opcode)


@lru_cache(maxsize=4096)
def _opcode_types(opcode: str) -> tuple[str, ...]:
    return tuple(p for p in opcode.split(".")[1:] if p in _TYPES)
