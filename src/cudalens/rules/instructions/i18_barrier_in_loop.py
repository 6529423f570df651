"""I18: Few synchronization points."""

from __future__ import annotations

import re
from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import block_barriers, kernel_nodes
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

_TREE_UPDATE = re.compile(r"(>>=|<<=|\*=|/=)|=\s*\w+\s*(>>|<<|\*|/)\s*\d")


def _tree_loop(loop: Any) -> bool:
    """A loop whose counter halves or doubles (``s >>= 1``, ``s *= 2``): a tree over the block,
    whose last steps involve fewer than 32 threads."""
    update = loop.child_by_field_name("update") if loop.type == "for_statement" else None
    return update is not None and bool(_TREE_UPDATE.search(syn.text(update)))


@rule("I18", name="barrier-in-loop", layers="S")
def barrier_in_loop(ctx: RuleContext) -> Iterator[Finding]:
    """`__syncthreads()` executed on every iteration of a loop.

    What it does:
        Reports each innermost tree loop (its counter halves or doubles, as in a block reduction or
        scan) that contains a block-wide barrier (`__syncthreads` and its `_count/_and/_or` forms),
        with the number of barriers per iteration: its last steps involve fewer than 32 threads,
        which need no block-wide barrier. Loops with an additive counter (tiles of a matrix multiply)
        are not reported: their barriers order the staging the data flow needs.

    Why it matters:
        A barrier makes every warp of the block wait for the slowest one, and while warps wait
        the SM has fewer warps to switch between. A loop multiplies that cost. Common ways to drop
        barriers: finish the last five steps of a reduction with warp shuffles (no barrier),
        double-buffer shared tiles so one barrier per iteration suffices, or use `__syncwarp()`
        where only one warp shares the data.

    Example:
        ```cuda
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) buf[tid] += buf[tid + s];
            __syncthreads();
        }
        ```

    Fix:
        ```cuda
        for (int s = blockDim.x / 2; s >= 32; s >>= 1) { ...; __syncthreads(); }
        if (tid < 32) { float v = buf[tid]; for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(~0u, v, o); }
        ```
    """
    src = ctx.source
    for k, node in kernel_nodes(src):
        per_loop: dict[int, list[Any]] = {}
        loops: dict[int, Any] = {}
        for b in block_barriers(node):
            enclosing = syn.enclosing_loops(b)
            if not enclosing:
                continue
            loop = enclosing[0]
            per_loop.setdefault(loop.start_byte, []).append(b)
            loops[loop.start_byte] = loop
        for start in sorted(per_loop):
            loop, bs = loops[start], per_loop[start]
            if not _tree_loop(loop):
                continue  # a tile loop's barriers order the staging the data flow needs
            yield ctx.finding(
                syn.line(loop),
                f"the loop at line {syn.line(loop)} of `{k.name}` runs {len(bs)} block-wide barrier(s) per"
                f" iteration (line(s) {', '.join(str(syn.line(b)) for b in bs)})",
                "keep only the barriers the data flow needs: warp shuffles for the last 32 elements,"
                " double buffering, or __syncwarp() where one warp shares the data",
                kernel=k.name,
                facts=(("barriers_per_iteration", len(bs)),),
            )
