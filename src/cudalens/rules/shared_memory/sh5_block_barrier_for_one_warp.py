"""SH5: Warp-level synchronization when one warp shares the data."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import block_barriers, kernel_nodes, threads
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval


def _tid_names(body: Any) -> set[str]:
    """Variables set to `threadIdx.x` (possibly with `+ 0`), plus `threadIdx.x` itself."""
    out = {"threadIdx.x"}
    for n in syn.nodes_of(body, "declaration"):
        if n.type == "declaration":
            for name, value in syn.declared_names(n):
                # (a value of fewer than 11 bytes cannot read "threadIdx.x": its text is not read)
                if value is not None and value.end_byte - value.start_byte >= 11 and syn.norm(value) == "threadIdx.x":
                    out.add(name)
    return out


def _single_warp_guard(barrier: Any, tids: set[str]) -> Any | None:
    """The enclosing `if (tid < N)` with N <= 32, if any."""
    for a in syn.ancestors(barrier):
        if a.type == "function_definition":
            return None
        if a.type != "if_statement":
            continue
        cond = a.child_by_field_name("condition")
        cond = syn.strip_parens(
            cond.named_children[0]
            if cond is not None and cond.type == "condition_clause" and cond.named_children
            else cond
        )
        if cond is None or cond.type != "binary_expression":
            continue
        op = syn.text(cond.child_by_field_name("operator"))
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        bound = const_eval(right)
        if (
            syn.norm(left) in tids
            and bound is not None
            and ((op == "<" and bound.value <= 32) or (op == "<=" and bound.value <= 31))
        ):
            # the barrier must sit in the then-branch
            cons = a.child_by_field_name("consequence")
            if cons is not None and syn.contains(cons, barrier):
                return a
    return None


@rule("SH5", name="block-barrier-for-one-warp", layers="S")
def block_barrier_for_one_warp(ctx: RuleContext) -> Iterator[Finding]:
    """`__syncthreads()` where only one warp shares the data.

    What it does:
        Flags block-wide barriers that order memory between the threads of a single warp:
        (a) every barrier of a kernel whose blocks are at most 32 threads (all launch sites with an
        established block size, or a literal `__launch_bounds__`, say so; a block size that is not
        established, such as `__launch_bounds__(BLOCK_THREADS)` of a template, gives no finding); (b) a barrier inside
        `if (threadIdx.x < N)` with N <= 32 (or a variable set to `threadIdx.x`). In case (b) the
        barrier is also reached by only part of the block, which the programming model leaves
        undefined.

    Why it matters:
        When the writer and the reader of a shared-memory value are in the same warp, `__syncwarp()`
        orders their accesses; a block-wide barrier makes the whole block wait for nothing. Inside
        a branch taken by one warp, `__syncthreads()` may hang or silently not synchronize.

    Example:
        ```cuda
        if (tid < 32) { buf[tid] += buf[tid + 16]; __syncthreads(); buf[tid] += buf[tid + 8]; }
        ```

    Fix:
        ```cuda
        if (tid < 32) { buf[tid] += buf[tid + 16]; __syncwarp(); buf[tid] += buf[tid + 8]; }
        ```
    """
    src = ctx.source
    for k, node in kernel_nodes(src):
        barriers = block_barriers(node)
        if not barriers:
            continue
        sizes = [threads(s.block_dims) for s in src.launch_sites if s.kernel == k.name]
        known = [t for t in sizes if t]
        bound = k.launch_bounds[0] if k.launch_bounds else 0
        one_warp_block = (bool(known) and len(known) == len(sizes) and max(known) <= 32) or 0 < bound <= 32
        tids = _tid_names(node)
        for b in barriers:
            if one_warp_block:
                yield ctx.finding(
                    syn.line(b),
                    f"`{k.name}` runs with blocks of at most 32 threads (one warp), so `{syn.text(b)}`"
                    " synchronizes a single warp",
                    "use __syncwarp()",
                    kernel=k.name,
                    facts=(("block_threads_max", max(known) if known else bound),),
                )
                continue
            guard = _single_warp_guard(b, tids)
            if guard is not None:
                cond = syn.text(guard.child_by_field_name("condition"))
                yield ctx.finding(
                    syn.line(b),
                    f"`{syn.text(b)}` sits under `if {cond}` (line {syn.line(guard)}): only one warp reaches it,"
                    " so it orders memory within that warp and leaves the block's other warps out",
                    "use __syncwarp() for the warp-level steps (or warp shuffles); keep block-wide barriers"
                    " outside divergent code",
                    kernel=k.name,
                    facts=(("guard", cond),),
                )
