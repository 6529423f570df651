"""M1: No allocation in hot loops."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules import _trace as tr
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

_FREE = {"cudaFree", "cudaFreeHost", "cudaFreeArray"}


_SETUP_MARKERS = {"cudaSetDevice"}


def _is_work_loop(loop: Any) -> tuple[bool, str]:
    """Whether a loop is a hot loop worth judging, and why.

    A loop counts when it launches kernels or copies data, or when it both allocates and frees
    (allocation churn). A loop that only allocates (a set-up loop over buffers or devices) does not.
    """
    names = {syn.call_name(c) for c in syn.calls(loop)}
    if names & _SETUP_MARKERS:
        return False, ""
    if syn.launches(loop):
        return True, "launches kernels"
    if names & set(host.COPY_FUNCS):
        return True, "copies data"
    if names & host.ALLOC_FUNCS and names & _FREE:
        return True, "allocates and frees on every iteration"
    return False, ""


@rule("M1", name="allocation-in-hot-loop", layers="S L")
def allocation_in_hot_loop(ctx: RuleContext) -> Iterator[Finding]:
    """`cudaMalloc`/`cudaFree` repeated in a working loop.

    What it does:
        Flags `cudaMalloc`-family and `cudaFree`-family calls inside a loop that launches kernels,
        copies data, or both allocates and frees. Set-up loops that only allocate (one buffer per
        stream or per device) are not flagged; `cudaMallocAsync`/`cudaFreeAsync` (stream-ordered,
        pooled) are not flagged.

    Why it matters:
        `cudaMalloc` and `cudaFree` are expensive driver operations, and `cudaFree` synchronizes
        the device, which serializes the work around it. Allocating once before the loop and
        reusing the buffer costs nothing per iteration; where sizes vary, the stream-ordered
        allocator (`cudaMallocAsync`) keeps freed memory in a pool for reuse.

    Example:
        ```cuda
        for (int b = 0; b < batches; ++b) {
            float *tmp; cudaMalloc(&tmp, bytes);
            work<<<g, blk>>>(tmp, b);
            cudaFree(tmp);
        }
        ```

    Fix:
        ```cuda
        float *tmp; cudaMalloc(&tmp, bytes);
        for (int b = 0; b < batches; ++b) work<<<g, blk>>>(tmp, b);
        cudaFree(tmp);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        for c in syn.calls(fn.node):
            name = syn.call_name(c)
            if name not in host.ALLOC_FUNCS and name not in _FREE:
                continue
            for loop in syn.enclosing_loops(c):
                hot, why = _is_work_loop(loop)
                if hot:
                    yield ctx.finding(
                        syn.line(c),
                        f"`{name}` runs on every iteration of the loop at line {syn.line(loop)}, which {why}",
                        "allocate once before the loop and reuse the buffer, or use cudaMallocAsync/"
                        "cudaFreeAsync with a memory pool",
                        facts=(("call", name), ("loop_line", syn.line(loop))),
                    )
                    break


@rule("M1", name="allocation-in-hot-loop", layers="R", requires=("trace",))
def traced_allocations_in_loop(ctx: RuleContext) -> Iterator[Finding]:
    """Device allocations and frees between the kernel launches of a traced run, throughout it."""
    assert ctx.trace is not None
    trace = ctx.trace.records
    allocs = [a for a in trace.api if ("Malloc" in a.name or "Free" in a.name) and "Host" not in a.name
              and "Async" not in a.name]
    inside = [a for a in allocs if tr.between_launches(trace, [a.start_ns])]
    if len(inside) < 2 * tr.REPEAT or not tr.throughout(trace, [a.start_ns for a in inside]):
        return
    t = sum(a.duration_ns for a in inside) * 1e-9
    kinds = Counter(a.name.split("_v")[0] for a in inside)
    yield tr.measured(ctx, f"{len(inside)} device allocations/frees between kernel launches "
                      f"({', '.join(f'{n} {k}' for k, n in kinds.most_common())}) take {tr.fmt_us(t)} of host time, "
                      "and cudaFree synchronizes the device",
                      "allocate once before the loop and reuse the buffers, or use a pool (cudaMallocAsync / the "
                      "framework's caching allocator)", t, (("calls", len(inside)), ("host_time_s", t)))
