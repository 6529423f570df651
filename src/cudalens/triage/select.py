"""Rule selection: ``--select``/``--ignore`` with rule ids (``G8``) or chapter prefixes (``SH``).

A selector matches a rule when it is the rule's id, or the rule's chapter (the letters before the
number: ``SH`` for ``SH5``, ``G`` for ``G8``), or ``ALL``. ``S`` does not match ``SH5``: a chapter
prefix is the whole letter part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_ID = re.compile(r"^([A-Z]+)(\d+)$")


def chapter(rule: str) -> str:
    m = _ID.match(rule.upper())
    return m.group(1) if m else rule.upper()


def matches(rule: str, selector: str) -> bool:
    s = selector.strip().upper()
    r = rule.upper()
    return s in ("ALL", "*") or s == r or (s.isalpha() and s == chapter(r))


def validate(selectors: Iterable[str], known: Iterable[str], origin: str) -> tuple[str, ...]:
    """The selectors, upper-cased; a selector that names no known rule or chapter raises ValueError
    naming ``origin`` (the option or the config key it came from)."""
    known = {k.upper() for k in known}
    chapters = {chapter(k) for k in known}
    out = []
    for raw in selectors:
        for s in (p.strip().upper() for p in str(raw).split(",")):
            if not s:
                continue
            if s not in known and s not in chapters and s not in ("ALL", "*"):
                raise ValueError(f"{origin}: unknown rule or chapter {s!r}")
            out.append(s)
    return tuple(out)


def selected(rule: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    """True when ``rule`` is selected (empty ``select``: every rule) and not ignored.

    As in ruff, the more specific selector wins: ``--select SH --ignore SH5`` drops SH5 only, and
    ``--ignore SH --select SH5`` keeps SH5.
    """
    def best(sels: tuple[str, ...]) -> int:
        rank = -1
        for s in sels:
            if matches(rule, s):
                rank = max(rank, 2 if s.upper() == rule.upper() else 1 if s.isalpha() and s not in ("ALL",) else 0)
        return rank

    sel = best(select) if select else 0
    ign = best(ignore)
    if sel < 0:
        return False
    return ign < 0 or sel > ign
