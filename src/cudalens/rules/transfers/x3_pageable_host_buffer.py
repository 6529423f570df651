"""X3: Page-locked host buffers for transfers."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


@rule("X3", name="pageable-host-buffer", layers="S L")
def pageable_host_buffer(ctx: RuleContext) -> Iterator[Finding]:
    """Synchronous copies from or to pageable host memory.

    What it does:
        Flags host buffers allocated with `malloc`/`calloc`/`new`, held in a `std::vector`, or
        declared as arrays, that are the host side of a `cudaMemcpy`/`cudaMemcpy2D`. Buffers
        allocated with `cudaMallocHost`/`cudaHostAlloc` or registered with `cudaHostRegister` are
        pinned and not flagged. One finding per buffer, at its first copy, when the buffer is
        copied inside a loop: page-locking a buffer costs about what a staged copy loses, so a
        buffer copied once or twice at set-up gains nothing.

    Why it matters:
        The DMA engines can only read page-locked memory. A copy from pageable memory is staged by
        the driver through an internal pinned buffer, chunk by chunk, which lowers the achieved
        bandwidth (often by half or more) and makes asynchronous copies synchronous. Pinned memory
        is a scarce system resource, so pin the buffers that are copied repeatedly, not everything.

    Example:
        ```cuda
        float *h = (float *)malloc(bytes);
        cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
        ```

    Fix:
        ```cuda
        float *h; cudaMallocHost(&h, bytes);   // ... cudaFreeHost(h);
        cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        bufs = host.host_buffers(fn.node)
        first: dict[str, tuple[host.Copy, int]] = {}
        looped: set[str] = set()
        for c in host.copies(fn.node):
            if c.is_async:
                continue  # X4 covers asynchronous copies
            name = syn.base_name(c.host_operand)
            if name in bufs.pageable:
                prev = first.get(name)
                repeats = 2 if syn.enclosing_loops(c.node) else 1  # a copy in a loop runs more than once
                first[name] = (prev[0], prev[1] + repeats) if prev else (c, repeats)
                looped.add(name) if repeats > 1 else None
        for name, (c, count) in sorted(first.items(), key=lambda kv: kv[1][0].line):
            if name not in looped:
                continue  # copies at set-up: pinning costs about what it saves, nothing to gain
            how = bufs.pageable[name]
            yield ctx.finding(
                c.line,
                f"host buffer `{name}` ({how}) is pageable and is copied {'repeatedly' if count > 2 else f'{count} times'}: the driver stages"
                " each copy through a pinned bounce buffer",
                f"allocate `{name}` with cudaMallocHost/cudaHostAlloc (or cudaHostRegister it) if it is"
                " copied often or in bulk",
                facts=(("buffer", name), ("allocation", how), ("copies", count)),
            )
