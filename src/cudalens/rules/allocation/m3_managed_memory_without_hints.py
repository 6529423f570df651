"""M3: Prefetch and advise managed memory."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

_ADVICE = {
    "cudaMemAdvise",
    "cudaMemAdvise_v2",
    "cudaMemPrefetchAsync",
    "cudaMemPrefetchAsync_v2",
    "cudaMemPrefetchBatchAsync",
    "cudaMemAdviseBatch",
}


@rule("M3", name="managed-memory-without-hints", layers="S")
def managed_memory_without_hints(ctx: RuleContext) -> Iterator[Finding]:
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
            yield ctx.finding(
                syn.line(c),
                f"managed buffer `{name}` is never prefetched or advised: pages migrate on demand by page faults",
                f"call cudaMemPrefetchAsync on `{name}` before the kernels that use it (and cudaMemAdvise for"
                " read-mostly or preferred-location data)",
                facts=(("buffer", name),),
            )
