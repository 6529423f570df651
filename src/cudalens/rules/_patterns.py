"""Which pattern an access belongs to, so that each rule gives the fix that fits it.

- :func:`swapped_mapping`: the kernel maps threadIdx.x to a row and threadIdx.y to the column
  (``x = ...threadIdx.x; y = ...threadIdx.y; C[x * N + y]``): the fix is to swap the two, not to
  stage through shared memory.
- :func:`interleaved_tree`: a shared-memory tree reduction whose index doubles with the step
  (``index = 2 * s * tid; s[index] += s[index + s]`` in a loop ``s *= 2``): the fix is sequential
  addressing (``if (tid < s) s[tid] += s[tid + s]`` with ``s`` halving).
"""

from __future__ import annotations

import functools
import re
from typing import Any

_DECL = re.compile(r"\b(?:const\s+)?(?:unsigned\s+int|unsigned|int|size_t|long|uint32_t|int64_t)\s+"
                   r"([A-Za-z_]\w*)\s*=\s*([^;]+);")
_DOUBLING = re.compile(r"(\*=\s*2\b|<<=\s*1\b|=\s*\w+\s*\*\s*2\b|=\s*2\s*\*\s*\w+)")


@functools.lru_cache(maxsize=4)
def _lines(text: str) -> tuple[str, ...]:
    """A file's lines (asked for each access of its kernels: split once)."""
    return tuple(text.splitlines())


@functools.lru_cache(maxsize=64)
def _thread_vars(text: str, first: int, last: int) -> tuple[set[str], set[str]]:
    """The variables lines ``first``..``last`` of ``text`` (a kernel) declare from threadIdx.x and from
    threadIdx.y; kept per kernel (the same sets each time: not to be changed)."""
    xs, ys = set(), set()
    for name, value in _DECL.findall("\n".join(_lines(text)[first - 1:last])):
        if "threadIdx.x" in value:
            xs.add(name)
        elif "threadIdx.y" in value:
            ys.add(name)
    return xs, ys


def swapped_mapping(k: Any, a: Any, source: Any) -> tuple[str, str] | None:
    """(row variable from threadIdx.x, column variable from threadIdx.y) when the access scales the
    threadIdx.x variable by a row pitch, the kernel has a threadIdx.y variable it could use instead,
    and no global access scales that one (a transpose does: its fix is a shared tile); None otherwise."""
    xs, ys = _thread_vars(getattr(source, "text", ""), k.line, k.end_line)
    if not ys:
        return None

    def scaled(v: str, index: str) -> bool:
        return bool(re.search(rf"\b{re.escape(v)}\s*\*\s*[A-Za-z_(]", index) or re.search(rf"\*\s*{re.escape(v)}\b", index))

    if any(scaled(y, b.index) for y in ys for b in k.accesses if b.space == "global"):
        return None  # another access walks rows with threadIdx.y (a transpose): swapping moves the stride there
    for x in xs:
        if scaled(x, a.index):
            return x, sorted(ys)[0]
    return None


def interleaved_tree(k: Any, a: Any, source: Any) -> bool:
    """True when the shared access sits in a loop whose step doubles and its index (or the
    variable it reads) scales the thread index by that loop's variable."""
    lines = _lines(getattr(source, "text", ""))
    for lp in k.loops:
        if not (lp.line <= a.line <= lp.end_line) or not lp.induction_variable or not _DOUBLING.search(lp.step or ""):
            continue
        v = re.escape(lp.induction_variable)
        body = "\n".join(lines[lp.line - 1:a.line])
        names = set(re.findall(r"[A-Za-z_]\w*", a.index))
        scaled = [n for n, value in _DECL.findall(body) if n in names and re.search(rf"\b{v}\b", value)
                  and re.search(r"\b(tid|threadIdx\.x|t|lane|thread)\b", value)]
        if scaled or (re.search(rf"\b{v}\b", a.index) and re.search(r"\*", a.index)):
            return True
    return False


def swap_fix(k: Any, a: Any, source: Any) -> str | None:
    """The fix of a swapped mapping (:func:`swapped_mapping`), or None when the access is not one."""
    found = swapped_mapping(k, a, source)
    if found is None:
        return None
    x, y = found
    return (f"swap the mapping: derive `{x}` from threadIdx.y and `{y}` from threadIdx.x (and swap the grid's "
            "dimensions), so consecutive lanes walk the contiguous dimension")


def modulo_tree(k: Any, line: int, condition: str) -> bool:
    """True when a branch ``tid % (2 * s) == 0`` sits in a loop whose step ``s`` doubles: the
    interleaved tree reduction whose fix is sequential addressing."""
    for lp in k.loops:
        if (lp.line <= line <= lp.end_line and lp.induction_variable and _DOUBLING.search(lp.step or "")
                and "%" in condition and re.search(rf"\b{re.escape(lp.induction_variable)}\b", condition)):
            return True
    return False


#: The fix of an interleaved tree reduction (SH1 on its strided index, D1 on its modulo branch).
SEQUENTIAL = ("use sequential addressing: halve the step (for (s = blockDim.x / 2; s > 0; s >>= 1)) and let "
              "thread tid add s[tid + s] into s[tid] (if (tid < s)): consecutive threads then touch consecutive "
              "words and whole warps retire together")
