"""G8: Fewer global memory accesses; stage in shared memory."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import accesses
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source.model import Kernel

_CLOBBERS = ("__syncthreads", "__threadfence", "atomic", "__syncwarp")


def _clobber_line(k: Kernel, loop_line: int | None) -> int | None:
    """The first line inside the loop at ``loop_line`` that writes global memory (a store, an
    atomic) or orders memory (a barrier), or None when the loop does neither."""
    if loop_line is None:
        return None
    lines = [a.line for a in k.accesses if a.op == "store" and a.space == "global" and loop_line in a.loop_lines]
    lines += [c.line for c in k.calls if loop_line in c.loop_lines and c.name.startswith(_CLOBBERS)]
    return min(lines, default=None)


@rule("G8", name="global-reread-in-loop", layers="S M", measured="memory")
def global_reread_in_loop(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a global load inside a loop whose addresses do not change from one iteration to the next.

    Why it matters
    The same bytes are fetched again every iteration; at best they hit in cache, at worst they cost
    a full memory round trip each time. A register or shared-memory copy costs nothing.

    Example
    ``for (int k = 0; k < n; ++k) sum += scale[blockIdx.x] * x[k];``

    A loop that writes no global memory (no store, atomic or barrier) lets the compiler hoist the
    load itself, and so does a ``const __restrict__`` pointer: neither is reported. An address that
    advances through a pointer increment or the loop header's update (``p += lda``,
    ``++k, j += n``) changes every iteration and is not loop-invariant.

    Fix
    Load the value once before the loop into a register (or into shared memory for the block).
    """
    for k, a in accesses(ctx, "global"):
        r = a.reuse or {}
        if a.op == "load" and r.get("invariant_in_loop") is True:
            clobber = _clobber_line(k, r.get("loop_line"))
            param = next((p for p in k.params if p.name == a.array), None)
            if clobber is None or (param is not None and param.is_restrict and param.is_const):
                continue  # nothing in the loop may alias it: the compiler keeps it in a register
            yield ctx.finding(
                a.line,
                f"{a.array}[{a.index}] is read again on every iteration of the loop at line "
                f"{r.get('loop_line')} with the same address; the loop writes global memory (line {clobber}), "
                "so the compiler must assume the write may change it and re-loads it",
                "hoist the load out of the loop into a register (or shared memory)",
                kernel=k.name,
                file=k.file,
                impact=None,
                impact_text=None,
                evidence=[
                    Evidence(Layer.MODEL, "invariant_in_loop", True),
                    Evidence(Layer.SOURCE, "loop_line", r.get("loop_line")),
                ],
            )
