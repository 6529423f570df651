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


_BUILTIN = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
            "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
            "x": "long long", "y": "unsigned long long", "f": "float", "d": "double", "e": "long double",
            "n": "__int128", "o": "unsigned __int128", "w": "wchar_t", "DF16_": "__half"}


def _template_args(text: str) -> tuple[list[str], str] | None:
    """The template arguments at the start of ``text`` (after its ``I``) and the rest after the
    closing ``E``; None where an argument is not a builtin type, a literal or a plain class name."""
    args: list[str] = []
    while text and text[0] != "E":
        if text[0] == "L":  # a literal: L<type><value>E
            m = re.match(r"L([a-z])(n?\d+)E", text)
            if not m:
                return None
            value = m.group(2).replace("n", "-")
            args.append({"b": "false" if value == "0" else "true"}.get(m.group(1), value))
            text = text[m.end():]
            continue
        code = next((c for c in sorted(_BUILTIN, key=len, reverse=True) if text.startswith(c)), None)
        if code is not None:
            args.append(_BUILTIN[code])
            text = text[len(code):]
            continue
        m = _LEN_RE.match(text)
        if not m:
            return None
        n = int(m.group(1))
        args.append(text[m.end():m.end() + n])
        text = text[m.end() + n:]
    return (args, text[1:]) if text else None


def readable_kernel(mangled: str) -> str:
    """A mangled kernel symbol as its source names it, with template arguments where they are
    builtin types, literals or plain class names: ``_Z7reduce0IfEvPT_S1_j`` -> ``reduce0<float>``,
    ``_Z7reduce6IfLj256ELb0EEvPT_S1_jj`` -> ``reduce6<float, 256, false>``; otherwise its base
    name (:func:`base_name_from_mangled`)."""
    base = base_name_from_mangled(mangled)
    if mangled.startswith("_ZN"):
        return base
    m = re.match(r"_Z(\d+)", mangled)
    if not m:
        return base
    rest = mangled[m.end() + int(m.group(1)):]
    if not rest.startswith("I"):
        return base
    parsed = _template_args(rest[1:])
    return f"{base}<{', '.join(parsed[0])}>" if parsed else base


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
