"""SH2: Shared memory to avoid redundant global loads."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import accesses, share
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("SH2", name="redundant-global-loads", layers="S L", measured="memory")
def redundant_global_loads(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a global load in a loop where several threads of one block read the same element (for
    example the naive ``C = A * B`` inner loop, where a row of A is read by every thread of the row).

    Why it matters
    Each element crosses the memory bus once per reading thread instead of once per block. Loading a
    tile into shared memory once and reading it from there removes the redundant traffic.

    Example
    ``for (i...) sum += a[row * N + i] * b[i * N + col];`` with a 2-D block.

    A warp-uniform load (every lane of a warp reads one address, such as ``x[k]`` in a GEMV) is
    not reported: it costs one request per warp and is served from cache to the block's other warps.

    Nor is a load under a guard the model cannot evaluate (``if (grid.thread_rank() == 0)``): how many
    threads read each element is then not established.

    Fix
    Cooperatively load the tile the block needs into ``__shared__`` memory, ``__syncthreads()``, then
    read the tile in the loop.
    """
    for k, a in accesses(ctx, "global"):
        r = a.reuse or {}
        tpe = r.get("threads_per_element") or 0
        if a.pattern == "broadcast":
            continue  # one address per warp: one request, served to all lanes (and cached for the others)
        if any(x.startswith("guarding condition not evaluable") for x in a.assumptions):
            continue  # who runs it is unknown (e.g. `if (grid.thread_rank() == 0)`): readers per element too
        if a.op == "load" and r.get("invariant_in_loop") is False and tpe >= 2:
            yield ctx.finding(
                a.line,
                f"each element of {a.array} read at {a.array}[{a.index}] is loaded by {tpe:g} threads of "
                "the block in every iteration",
                "load the tile once per block into __shared__ memory, synchronize, and read it from there",
                kernel=k.name,
                file=k.file,
                impact=share(1.0 - 1.0 / tpe),
                impact_text="share of global loads that are redundant within the block",
                evidence=[Evidence(Layer.MODEL, "threads_per_element", tpe)],
            )
