"""Kernels with no launch (issue #26): a finding is reported only where it holds under every
plausible block.

A kernel no launch site reaches (a library whose launches are made from Python, a kernel only a
test calls) is evaluated under the first of its plausible blocks
(:data:`cudalens.project.resolve.PLAUSIBLE_BLOCKS`, declared there only: 256, 128 and 512 threads;
32x8 and 16x16 for a kernel that reads threadIdx.y). :func:`hold_for_every_block` evaluates it
again under each other one (the source model, the compiled access model on the same PTX, the
rules) and keeps a finding of such a kernel only where the same rule (or one saying the same of the
access: G1 and SH3 for G3) fires at the same line under each; the finding says so. What holds under one block only is named in a note.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cudalens.findings import Evidence, Finding, Layer
from cudalens.source.model import Kernel, SourceModel

#: (a ``--block`` mapping, the rules to run -> their findings): one more evaluation under another block
Evaluate = Callable[[Any, frozenset[str]], Sequence[Finding]]


def assumed_kernels(model: SourceModel) -> list[Kernel]:
    """The kernels of ``model`` evaluated under an assumed launch (no launch found, no ``--block``)."""
    return [k for k in model.kernels if k.launch is not None and k.launch.origin == "assumed"]


def assumed_kernels_under(model: SourceModel, block: Any) -> list[Kernel]:
    """The kernels a further evaluation under ``block`` (:func:`other_blocks`) is for: those whose
    block it names and that have no launch site (origin "user" now, their launch's site None)."""
    named = set(block) if isinstance(block, Mapping) else set()
    return [k for k in model.kernels if k.name in named and k.launch is not None and k.launch.site is None]


def other_blocks(kernels: Sequence[Kernel], block: Any) -> list[dict[str | None, tuple[int, int, int]]]:
    """The ``--block`` mappings of the further evaluations: the i-th plausible block of each kernel
    (its last where it has fewer), on top of the user's per-kernel blocks in ``block``."""
    from cudalens.project.resolve import plausible_blocks

    shapes = {k.name: plausible_blocks(k) for k in kernels}
    n = max((len(s) for s in shapes.values()), default=0)
    base = dict(block) if isinstance(block, Mapping) else {}
    return [{**base, **{name: s[min(i, len(s) - 1)] for name, s in shapes.items()}} for i in range(1, n)]


#: rules that say one thing of an access under different blocks: its global requests waste sectors
#: (a strided access under 32x8 is a strided one with two rows per warp under 16x16: G3, then G1)
_SAME = {"G1": "G3", "SH3": "G3"}


def _key(f: Finding) -> tuple[str, str, str, int | None]:
    return (_SAME.get(f.rule, f.rule), f.kernel or "", f.file, f.line)


def _asked(findings: Sequence[Finding]) -> frozenset[str]:
    """The rules whose findings under another block decide whether ``findings`` hold: theirs, and
    those that say the same of an access (:data:`_SAME`)."""
    said = {_SAME.get(f.rule, f.rule) for f in findings}
    return frozenset({f.rule for f in findings} | said | {r for r, same in _SAME.items() if same in said})


def hold_for_every_block(findings: Sequence[Finding], model: SourceModel, block: Any,
                         evaluate: Evaluate) -> tuple[list[Finding], list[str]]:
    """(``findings`` with those of assumed kernels kept only where they hold under each other plausible
    block, each saying so; notes naming the findings left out). ``evaluate(block, rules)``: the findings
    of those rules in one more evaluation of the file with ``block`` (a ``--block`` mapping); it is
    called only where an assumed kernel has a finding to decide, for the rules that decide it."""
    kernels = assumed_kernels(model)
    if not kernels or isinstance(block, tuple):
        return list(findings), []
    names = {k.name for k in kernels}
    from cudalens.project.resolve import plausible_blocks, shapes_text

    shown = {k.name: shapes_text(plausible_blocks(k)) for k in kernels}
    held = {_key(f) for f in findings if f.kernel in names}
    asked = [f for f in findings if f.kernel in names and not f.advisory]
    for other in other_blocks(kernels, block) if asked else ():
        held &= {_key(f) for f in evaluate(other, _asked(asked)) if f.kernel in names}
    out: list[Finding] = []
    notes: list[str] = []
    for f in findings:
        if f.kernel not in names or f.advisory:
            out.append(f)
        elif _key(f) in held:
            said = f"no launch found; holds for blocks of {shown[f.kernel]}"
            out.append(dataclasses.replace(f, message=f"{f.message} ({said})",
                                           evidence=(*f.evidence, Evidence(Layer.MODEL, "assumption", said))))
        else:
            notes.append(f"{f.rule} of kernel {f.kernel} at line {f.line} not reported: it does not hold under "
                         f"each plausible block ({shown[f.kernel]}) of a kernel with no launch")
    return out, notes
