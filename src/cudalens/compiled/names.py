"""Kernel names: mangled (as in the cubin), demangled (full signature), base (as in the source)."""

from __future__ import annotations

import re
import subprocess

_LEN_RE = re.compile(r"(\d+)")


def base_name_from_mangled(mangled: str) -> str:
    """The unqualified function name of an Itanium-mangled symbol, without a demangler.

    ``_Z5saxpyifPKfPf`` -> ``saxpy``; ``_ZN2ns6kernelEPf`` -> ``kernel``;
    ``_Z6kernelIfEvPT_`` -> ``kernel``; an ``extern "C"`` name is returned as is."""
    if not mangled.startswith("_Z"):
        return mangled
    rest = mangled[2:]
    nested = rest.startswith("N")
    if nested:
        rest = rest[1:]
        while rest and rest[0] in "rVKL":  # cv-qualifiers of a nested name
            rest = rest[1:]
    last = mangled
    while True:
        m = _LEN_RE.match(rest)
        if not m:
            break
        n = int(m.group(1))
        start = m.end()
        last = rest[start:start + n]
        rest = rest[start + n:]
        if not nested:
            break
        if rest.startswith("I"):  # template arguments of this component: stop here
            break
        if rest.startswith("E"):
            break
    return last


def split_top_level(text: str, brackets: str = "<>()") -> list[str]:
    """``text`` split at the commas outside brackets (pairs of opening and closing characters).

    ``split_top_level("T=pair<int,int>,float")`` -> ``["T=pair<int,int>", "float"]``; the pieces
    are not stripped. Template argument lists, ``--grid`` expressions and PTX operand lists
    (``brackets="{}[]"``) are split this way.
    """
    opens, closes = brackets[0::2], brackets[1::2]
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def parameters_start(demangled: str) -> int:
    """Index of the ``(`` that opens the parameter list (the first one outside template brackets),
    or ``len(demangled)`` when there is none."""
    depth = 0
    for i, ch in enumerate(demangled):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            return i
    return len(demangled)


def base_name_from_demangled(demangled: str) -> str:
    """``void ns::kernel<float>(float*)`` or ``kernel(float*)`` -> ``kernel``."""
    head = demangled[:parameters_start(demangled)]
    while head.endswith(">"):  # drop trailing template arguments
        depth = 0
        for i in range(len(head) - 1, -1, -1):
            if head[i] == ">":
                depth += 1
            elif head[i] == "<":
                depth -= 1
                if depth == 0:
                    head = head[:i]
                    break
        else:
            break
    head = head.split("::")[-1]
    return head.split()[-1] if head.split() else demangled


def demangle_all(mangled: list[str], demangler: str | None) -> dict[str, str]:
    """Mangled -> demangled with ``cu++filt``/``c++filt`` (one process for all names); names it
    cannot demangle map to themselves. Without a demangler every name maps to its base name."""
    if not mangled:
        return {}
    if demangler:
        try:
            out = subprocess.run(
                [demangler], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=30
            ).stdout.splitlines()
            if len(out) == len(mangled):
                return dict(zip(mangled, out))
        except (OSError, subprocess.SubprocessError):
            pass
    return {m: base_name_from_mangled(m) for m in mangled}


def kernel_base_name(name: str) -> str:
    """The name as in the source: ``_Z9transposePfS_ii`` -> ``transpose``; ``void f<int>(int*)`` -> ``f``."""
    if name.startswith("_Z"):
        return base_name_from_mangled(name)
    return base_name_from_demangled(name) if "(" in name or "<" in name else name
