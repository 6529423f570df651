"""Memory allocation patterns in host code (BPG 9.3, PG 5.5)."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules import _host as host
from cudalens.rules import _syntax as syn
from cudalens.rules._common import finding, host_functions
from cudalens.rules.registry import rule

_ALLOC = {"cudaMalloc", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged", "cudaMallocPitch",
          "cudaMalloc3D", "cudaMallocArray", "cudaMalloc3DArray"}
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
    if names & _ALLOC and names & _FREE:
        return True, "allocates and frees on every iteration"
    return False, ""


@rule(id="M1", name="allocation-in-hot-loop", priority=Priority.INFO, section="BPG 9.3", layers="S L")
def check_m1(ctx: Any) -> Iterator[Finding]:
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
            if name not in _ALLOC and name not in _FREE:
                continue
            for loop in syn.enclosing_loops(c):
                hot, why = _is_work_loop(loop)
                if hot:
                    yield finding(
                        "M1", src, syn.line(c),
                        f"`{name}` runs on every iteration of the loop at line {syn.line(loop)}, which {why}",
                        "allocate once before the loop and reuse the buffer, or use cudaMallocAsync/"
                        "cudaFreeAsync with a memory pool",
                        facts=(("call", name), ("loop_line", syn.line(loop))),
                    )
                    break


def _mentions(node: Any, names: set[str]) -> bool:
    return any(syn.text(n) in names for n in syn.nodes_of(node, "identifier"))


@rule(id="M2", name="allocation-sized-from-free-memory", priority=Priority.INFO, section="PG 5.5", layers="S")
def check_m2(ctx: Any) -> Iterator[Finding]:
    """Device allocation sized from the free or total memory reported by `cudaMemGetInfo`.

    What it does:
        Flags `cudaMalloc`-family calls whose size is computed from the `free` or `total` values
        returned by `cudaMemGetInfo` in the same function (directly or through variables derived
        from them).

    Why it matters:
        Grabbing all (or a fixed share of all) device memory up front starves everything else that
        needs device memory: other processes and libraries on the same GPU, the CUDA runtime's own
        allocations, and later allocations of the program itself. Allocate what the problem needs,
        and let a memory pool grow on demand where sizes vary.

    Example:
        ```cuda
        size_t free, total; cudaMemGetInfo(&free, &total);
        cudaMalloc(&arena, free);
        ```

    Fix:
        ```cuda
        cudaMalloc(&arena, n * sizeof(float));   // what the problem needs
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        tainted: set[str] = set()
        for c in syn.calls(fn.node):
            if syn.call_name(c) == "cudaMemGetInfo":
                tainted.update(filter(None, (syn.base_name(a) for a in syn.call_args(c))))
        if not tainted:
            continue
        for n in syn.nodes_of(fn.node, "declaration", "assignment_expression"):  # one pass in source order: derived sizes
            if n.type == "declaration":
                for name, value in syn.declared_names(n):
                    if value is not None and _mentions(value, tainted):
                        tainted.add(name)
            elif n.type == "assignment_expression" and _mentions(n.child_by_field_name("right"), tainted):
                left = syn.base_name(n.child_by_field_name("left"))
                if left:
                    tainted.add(left)
        for c in syn.calls(fn.node):
            name = syn.call_name(c)
            args = syn.call_args(c)
            if name not in _ALLOC or len(args) < 2:
                continue
            if any(_mentions(a, tainted) for a in args[1:]):
                yield finding(
                    "M2", src, syn.line(c),
                    f"`{name}` is sized from the memory reported by cudaMemGetInfo"
                    f" ({', '.join(sorted(tainted & {syn.text(i) for a in args[1:] for i in syn.walk(a)}))}):"
                    " it takes device memory others need",
                    "allocate what the problem needs; use a growing pool (cudaMallocAsync) for varying sizes",
                    facts=(("size", ", ".join(syn.text(a) for a in args[1:])),),
                )


_ADVICE = {"cudaMemAdvise", "cudaMemAdvise_v2", "cudaMemPrefetchAsync", "cudaMemPrefetchAsync_v2",
           "cudaMemPrefetchBatchAsync", "cudaMemAdviseBatch"}


@rule(id="M3", name="managed-memory-without-hints", priority=Priority.INFO, section="PG 5.5", layers="S")
def check_m3(ctx: Any) -> Iterator[Finding]:
    """`cudaMallocManaged` buffers with no prefetch or advice.

    What it does:
        Flags `cudaMallocManaged` allocations whose pointer is never passed to `cudaMemPrefetchAsync`
        or `cudaMemAdvise` anywhere in the file.

    Why it matters:
        Without hints, managed memory moves on demand: the first kernel touching a page takes a
        page fault, and the driver migrates pages piecemeal, which is far slower than a bulk copy.
        When the data exceeds device memory (oversubscription) pages thrash back and forth.
        Prefetching to the device before the kernels, and advising read-mostly or preferred
        locations, restores bulk transfers.

    Example:
        ```cuda
        cudaMallocManaged(&x, bytes);
        init_on_host(x, n);
        kernel<<<g, b>>>(x, n);
        ```

    Fix:
        ```cuda
        cudaMallocManaged(&x, bytes);
        init_on_host(x, n);
        cudaMemPrefetchAsync(x, bytes, device, stream);   // CUDA 13: a cudaMemLocation instead of device
        kernel<<<g, b, 0, stream>>>(x, n);
        ```
    """
    src = ctx.source
    fns = list(host_functions(src))
    advised: set[str] = set()
    for fn in fns:
        for c in syn.calls(fn.node):
            if syn.call_name(c) in _ADVICE:
                args = syn.call_args(c)
                if args:
                    advised.add(syn.base_name(args[0]))
    for fn in fns:
        for c in syn.calls(fn.node):
            if syn.call_name(c) != "cudaMallocManaged":
                continue
            args = syn.call_args(c)
            name = syn.base_name(args[0]) if args else ""
            if not name or name in advised:
                continue
            yield finding(
                "M3", src, syn.line(c),
                f"managed buffer `{name}` is never prefetched or advised: pages migrate on demand by page faults",
                f"call cudaMemPrefetchAsync on `{name}` before the kernels that use it (and cudaMemAdvise for"
                " read-mostly or preferred-location data)",
                facts=(("buffer", name),),
            )
