"""Kernel arguments from short text specs (the ``--arg`` option of ``cudalens bench``).

Grammar (one spec per kernel parameter, in parameter order)::

    array   DTYPE[N]            e.g.  float32[1048576]
            DTYPE[N]:INIT       INIT = zeros | ones | rand | arange | empty | <number>
            ...@ROLE            ROLE = in | out | inout   (which way the bytes flow)
    scalar  DTYPE=VALUE         e.g.  int32=1048576   float32=2.5

* DTYPE: int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 float32 float64; the dtype
  decides the C type the kernel sees (int32 -> int, float32 -> float, uint64 -> unsigned long long).
* N: a count of elements, a product (``1024*1024``) or a power (``2^20``).
* INIT defaults to ``rand`` (uniform in [0, 1) for floats, 0..99 for integers; seeded).
* ROLE defaults to ``out`` for ``zeros``/``empty`` and ``in`` otherwise; it only feeds the byte
  count of the effective bandwidth (read = in + inout arrays, written = out + inout arrays).

An array becomes a device buffer holding the initial values; the kernel receives its pointer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from cudalens.errors import InputError

DTYPES: dict[str, str] = {
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float16": "__half",
    "float32": "float",
    "float64": "double",
}
INITS = ("zeros", "ones", "rand", "arange", "empty")
ROLES = ("in", "out", "inout")
MAX_ELEMENTS = 1 << 36

_ARRAY = re.compile(r"^(?P<dtype>\w+)\[(?P<count>[^\]]+)\](?::(?P<init>[^@]+))?(?:@(?P<role>\w+))?$")
_SCALAR = re.compile(r"^(?P<dtype>\w+)=(?P<value>.+)$")


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument: an array (``count`` elements) or a scalar (``value``)."""

    text: str
    dtype: str
    kind: str  # "array" | "scalar"
    count: int = 0
    init: str = "rand"
    role: str = "in"
    value: float | int | None = None

    @property
    def nbytes(self) -> int:
        """Size of the array in bytes (0 for a scalar)."""
        return self.count * np.dtype(self.dtype).itemsize if self.kind == "array" else 0

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "dtype": self.dtype, "kind": self.kind, "count": self.count,
                "init": self.init, "role": self.role, "value": self.value}


def _count(text: str, spec: str) -> int:
    t = text.replace(" ", "")
    try:
        if "^" in t:
            base, exp = t.split("^", 1)
            n = int(base) ** int(exp)
        else:
            n = 1
            for part in t.split("*"):
                n *= int(part)
    except ValueError:
        raise InputError(f"--arg {spec!r}: element count {text!r} is not an integer, a*b or 2^k") from None
    if n <= 0 or n > MAX_ELEMENTS:
        raise InputError(f"--arg {spec!r}: element count must be between 1 and 2^36, got {n}")
    return n


def _dtype(name: str, spec: str) -> str:
    if name not in DTYPES:
        raise InputError(f"--arg {spec!r}: unknown dtype {name!r} (choose from {', '.join(DTYPES)})")
    return name


def parse_arg(spec: str) -> ArgSpec:
    """Parse one ``--arg`` spec; :class:`InputError` names the spec when it is malformed."""
    text = spec.strip()
    m = _ARRAY.match(text)
    if m:
        dtype = _dtype(m["dtype"], spec)
        count = _count(m["count"], spec)
        init = (m["init"] or "rand").strip()
        if init not in INITS:
            try:
                float(init)
            except ValueError:
                raise InputError(
                    f"--arg {spec!r}: unknown initializer {init!r} (choose from {', '.join(INITS)} or a number)"
                ) from None
        role = m["role"] or ("out" if init in ("zeros", "empty") else "in")
        if role not in ROLES:
            raise InputError(f"--arg {spec!r}: unknown role {role!r} (choose from {', '.join(ROLES)})")
        return ArgSpec(text=text, dtype=dtype, kind="array", count=count, init=init, role=role)
    m = _SCALAR.match(text)
    if m:
        dtype = _dtype(m["dtype"], spec)
        raw = m["value"].strip()
        try:
            value: float | int = float(raw) if dtype.startswith("float") else int(raw, 0)
        except ValueError:
            raise InputError(f"--arg {spec!r}: {raw!r} is not a valid {dtype} value") from None
        if not dtype.startswith("float"):
            info = np.iinfo(np.dtype(dtype))
            if not info.min <= value <= info.max:
                raise InputError(f"--arg {spec!r}: {value} does not fit in {dtype}")
        return ArgSpec(text=text, dtype=dtype, kind="scalar", value=value, role="in")
    raise InputError(
        f"--arg {spec!r}: expected DTYPE[N][:INIT][@ROLE] for an array or DTYPE=VALUE for a scalar "
        "(e.g. float32[1048576]:rand, int32=1048576)"
    )


def parse_args(specs: Sequence[str], values: Mapping[str, Any] | None = None,
               names: str = "an axis (axes") -> list[ArgSpec]:
    """The ``--arg`` specs of one launch, each ``{NAME}`` replaced with ``values[NAME]`` first
    (``float32[{n}]``: bench's ``--axis`` values, tune's ``--const`` values; ``names`` says which,
    for the message naming a placeholder nothing defines). The one parser of every command's ``--arg``."""
    from cudalens.measure.axes import substitute

    return [parse_arg(substitute(s, values or {}, "--arg", names)) for s in specs]


def materialize(spec: ArgSpec, rng: np.random.Generator) -> Any:
    """The host value of an argument: a numpy array (arrays) or a numpy scalar (scalars)."""
    dt = np.dtype(spec.dtype)
    if spec.kind == "scalar":
        return dt.type(spec.value)
    n = spec.count
    if spec.init == "zeros":
        return np.zeros(n, dt)
    if spec.init == "empty":
        return np.empty(n, dt)
    if spec.init == "ones":
        return np.ones(n, dt)
    if spec.init == "arange":
        return np.arange(n).astype(dt)
    if spec.init == "rand":
        if dt.kind == "f":
            return rng.random(n, dtype=np.float64).astype(dt)
        return rng.integers(0, 100, size=n).astype(dt)
    return np.full(n, float(spec.init)).astype(dt)


def byte_counts(specs: Sequence[ArgSpec]) -> tuple[int, int]:
    """(bytes read, bytes written) implied by the arrays' roles, assuming each is touched once."""
    read = sum(s.nbytes for s in specs if s.kind == "array" and s.role in ("in", "inout"))
    written = sum(s.nbytes for s in specs if s.kind == "array" and s.role in ("out", "inout"))
    return read, written


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """'256' or '64,4' or '8,8,4' -> a 3-tuple of positive ints (missing dimensions are 1)."""
    try:
        parts = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
    except ValueError:
        raise InputError(f"--{what} {text!r}: expected up to three positive integers, e.g. 256 or 64,4") from None
    if not 1 <= len(parts) <= 3 or any(p <= 0 for p in parts):
        raise InputError(f"--{what} {text!r}: expected up to three positive integers, e.g. 256 or 64,4")
    while len(parts) < 3:
        parts.append(1)
    return parts[0], parts[1], parts[2]
