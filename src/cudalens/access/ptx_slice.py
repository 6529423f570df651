"""Which PTX instructions the lane machine may skip: those whose results reach no address, branch,
call target or predicate of such an instruction.

Memory is not modelled (a load yields a synthetic value from its address; cudalens.access.ptx_exec),
so a value that is only stored, or only feeds arithmetic that is only stored, changes no figure the
model reports: the sectors and wavefronts of every access, the lanes of every branch and the taint
(which loaded data a figure depends on) all follow from addresses, branch predicates and
instruction predicates alone. The backward slice from those uses, over register names (flow-
insensitive, so it keeps more than it must, never less), is what runs; the rest is skipped. The
step budget still counts skipped instructions, so a skipped instruction never changes how far the
run gets.

Kept always: memory, control flow, calls, barriers and anything the machine does not model (its
notes count them). Skippable: arithmetic, conversions, comparisons, selections, moves, shuffles,
votes, matches and reductions whose destinations nobody in the slice reads.

Pure: :func:`dead_instructions` reads a parsed function and returns instruction indices.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

from cudalens.access.ptx_exec import NOOPS, UNMODELLED
from cudalens.compiled.ptx import Function

_REG = re.compile(r"%[A-Za-z_$][\w$]*")
# executed for their effect, not (only) for a register result: never skipped (memory, control flow,
# calls, and what the machine treats as no-ops or does not model, whose notes count them)
_EFFECT = {"ld", "ldu", "st", "atom", "red", "call", "bra", "brx", "ret", "exit", "mbarrier"} | NOOPS | UNMODELLED


@lru_cache(maxsize=65536)
def _reg_names(tok: str) -> tuple[str, ...]:
    return tuple(_REG.findall(tok))


def _regs(*toks: str) -> tuple[str, ...]:
    return tuple(chain.from_iterable(map(_reg_names, toks)))


@lru_cache(maxsize=65536)
def _uses_of(b: str, o: tuple[str, ...], p: str | None) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """An instruction's (registers it defines, registers it reads, whether what it reads always
    matters), from its base opcode, operands and predicate."""
    pred = (p.lstrip("!"),) if p else ()
    if not o:
        return (), pred, True
    first = _reg_names(o[0])
    if b in ("ld", "ldu"):
        return first, _regs(*o[1:]) + pred, True
    if b in ("st", "red"):
        return (), first + pred, True  # the address; the value stored does not matter
    if b == "atom":
        return first, (_reg_names(o[1]) if len(o) > 1 else ()) + pred, True
    if b in _EFFECT:
        return (), first + _regs(*o[1:]) + pred, True
    return first, _regs(*o[1:]) + pred, False


def dead_instructions(fn: Function) -> frozenset[int]:
    """Indices of the instructions of ``fn`` whose results reach nothing the model reports."""
    return slice_of(fn)[0]


def loads_matter(fn: Function, needed: frozenset[str] | None = None) -> bool:
    """Whether a value loaded from memory (not a kernel parameter) may reach an address, a branch
    or a predicate: only then can the trial values of loads change a figure. ``needed``: the
    registers of :func:`slice_of`, when the caller has them."""
    needed = slice_of(fn)[1] if needed is None else needed
    return any(ins.base in ("ld", "ldu", "atom") and "param" not in ins.parts and ins.operands
               and any(r in needed for r in _reg_names(ins.operands[0])) for ins in fn.instructions)


def slice_of(fn: Function) -> tuple[frozenset[int], frozenset[str]]:
    """(dead instruction indices, registers whose values matter)."""
    return slice_and_params(fn)[:2]  # type: ignore[return-value]


def slice_and_params(fn: Function) -> tuple[frozenset[int], frozenset[str], frozenset[str]]:
    """:func:`slice_of` and the names of the kernel parameters whose values may reach the address
    of a memory access (global, shared or generic; the same flow-insensitive backward slice, from
    addresses alone). A parameter that only decides branches or lane masks is not among them."""
    uses = [_uses_of(ins.base, ins.operands, ins.pred) for ins in fn.instructions]
    defined_by: dict[str, list[int]] = {}
    needed: set[str] = set()
    live: set[int] = set()
    for k, (dsts, srcs, always) in enumerate(uses):
        for d in dsts:
            if d in defined_by:
                defined_by[d].append(k)
            else:
                defined_by[d] = [k]
        if always:
            needed.update(srcs)
            live.add(k)
    work = list(needed)
    while work:
        reg = work.pop()
        for k in defined_by.get(reg, ()):
            if k in live:
                continue
            live.add(k)
            for s in uses[k][1]:
                if s not in needed:
                    needed.add(s)
                    work.append(s)
    dead = frozenset(range(len(uses))).difference(live)
    return dead, frozenset(needed), _at_addresses(fn, uses, defined_by)


def _at_addresses(fn: Function, uses: list, defined_by: dict[str, list[int]]) -> frozenset[str]:
    work: list[str] = []
    for ins in fn.instructions:
        o = ins.operands
        if ins.base in ("ld", "ldu", "st", "atom", "red") and len(o) >= 2 and "param" not in ins.parts:
            work += _reg_names(o[0] if ins.base in ("st", "red") else o[1])
    seen, reached = set(work), set()
    while work:
        for k in defined_by.get(work.pop(), ()):
            if k not in reached:
                reached.add(k)
                new = [s for s in uses[k][1] if s not in seen]
                seen.update(new)
                work += new
    out = set()
    for k in reached:
        ins = fn.instructions[k]
        if ins.base in ("ld", "ldu") and "param" in ins.parts and len(ins.operands) >= 2:
            out.add(ins.operands[1].strip("[]").split("+")[0].strip())
        elif ins.base in ("mov", "cvta"):  # a parameter's address taken (arrays, structs)
            out.update(t.strip("[]").split("+")[0] for t in ins.operands[1:] if not t.startswith("%"))
    return frozenset(out)


def params_at_addresses(fn: Function) -> frozenset[str]:
    """The parameter names of :func:`slice_and_params`."""
    return slice_and_params(fn)[2]
