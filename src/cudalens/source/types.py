"""Sizes of the element types a CUDA kernel typically indexes (bytes per element)."""

from __future__ import annotations

_SCALARS = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1, "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2,
    "nv_bfloat16": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "signed": 4, "signed int": 4, "int32_t": 4, "uint32_t": 4,
    "float": 4, "half2": 4, "__half2": 4, "__nv_bfloat162": 4, "long": 8, "unsigned long": 8,
    "long long": 8, "unsigned long long": 8, "long long int": 8, "unsigned long long int": 8, "int64_t": 8,
    "uint64_t": 8, "size_t": 8, "double": 8, "ptrdiff_t": 8,
}
_VECTOR_BASE = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "float": 4, "long": 8,
                "ulong": 8, "longlong": 8, "ulonglong": 8, "double": 8}
_VECTOR_ALIGN = {1: 1, 2: 2, 3: 4, 4: 4}  # vec3 types are padded to the size of 3 elements only
_QUALIFIERS = {"const", "volatile", "__restrict__", "restrict", "__restrict", "struct", "static", "extern",
               "__shared__", "__constant__", "__device__", "__managed__", "register"}


def strip_type(type_text: str) -> str:
    """``const float *__restrict__`` -> ``float``: the element type a subscript reads."""
    t = type_text.replace("*", " ").replace("&", " ")
    words = [w for w in t.split() if w not in _QUALIFIERS]
    return " ".join(words)


def element_bytes(type_text: str | None) -> int | None:
    """Bytes of one element of ``type_text`` (qualifiers and ``*`` ignored); None when unknown."""
    if not type_text:
        return None
    t = strip_type(type_text)
    if t.startswith("std::"):
        t = t[5:]
    if t in _SCALARS:
        return _SCALARS[t]
    for base, size in _VECTOR_BASE.items():
        for n in (1, 2, 3, 4):
            if t == f"{base}{n}":
                return size * n
    return None
