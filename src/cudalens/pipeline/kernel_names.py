"""The kernels a source text declares, read without parsing it (the batch scheduler's view of every file:
which kernels each defines, before any worker parses one)."""

from __future__ import annotations

import re

_SPEC_END = re.compile(r"[;{(]")
_NAME = re.compile(r"[A-Za-z_]\w*")
_WORD = re.compile(r"\w*")
_PARENTHESIS = re.compile(r"[()]")
_GLOBAL = "__global__"
#: what may stand between ``__global__`` and the kernel's name with arguments of its own
_ATTRIBUTES = frozenset({"__launch_bounds__", "__cluster_dims__", "__maxnreg__"})


def kernel_names(text: str) -> frozenset[str]:
    """The names ``__global__`` declares: the word before the first ``(`` that follows it (with no
    ``;`` or ``{`` between; a ``__global__`` before that ``(`` belongs to the same declaration; an
    attribute's parentheses, ``__launch_bounds__(256)``, are passed over). One search from each
    ``__global__`` to its ``;``, ``{`` or ``(``, linear in the text (the regex this replaced
    backtracked in cubic time: ``__global__ x `` repeated over 100 kB took 100 s, in the parent,
    outside any deadline)."""
    out: set[str] = set()
    at = text.find(_GLOBAL)
    while at >= 0:
        start = at + len(_GLOBAL)
        end = _SPEC_END.search(text, start)
        attribute = False  # the name follows an attribute's arguments
        while end is not None and end.group() == "(":
            head = text[start:end.start()].rstrip()
            word = _WORD.match(head[::-1])
            name = word.group()[::-1] if word is not None else ""
            if name not in _ATTRIBUTES:
                if (attribute or len(name) < len(head)) and _NAME.fullmatch(name):  # a word apart from __global__
                    out.add(name)
                break
            start, attribute = _past_parentheses(text, end.end()), True
            end = _SPEC_END.search(text, start) if start >= 0 else None
        if end is None:
            break
        at = text.find(_GLOBAL, end.end())
    return frozenset(out)


def _past_parentheses(text: str, at: int) -> int:
    """Where the parenthesis opened just before ``at`` is closed (the index after it), or -1."""
    depth = 1
    for m in _PARENTHESIS.finditer(text, at):
        depth += 1 if m.group() == "(" else -1
        if depth == 0:
            return m.end()
    return -1

