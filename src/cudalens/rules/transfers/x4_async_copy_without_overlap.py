"""X4: Asynchronous copies on non-default streams to overlap with kernels."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


@rule("X4", name="async-copy-without-overlap", layers="S L")
def async_copy_without_overlap(ctx: RuleContext) -> Iterator[Finding]:
    """`cudaMemcpyAsync` that cannot overlap anything.

    What it does:
        Flags `cudaMemcpyAsync`/`cudaMemcpy2DAsync` calls issued on the default stream (stream
        argument omitted, `0`, `NULL`, `nullptr` or `cudaStreamLegacy`) or whose host side is a
        pageable buffer (see X3).

    Why it matters:
        Overlapping transfers with kernels needs three things: an asynchronous copy, a non-default
        stream (the legacy default stream synchronizes with all other streams), and pinned host
        memory (a pageable copy is staged and returns only when done). Missing any one of them
        makes the "async" copy behave like a plain `cudaMemcpy`.

    Example:
        ```cuda
        float *h = (float *)malloc(bytes);
        cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, 0);
        ```

    Fix:
        ```cuda
        float *h; cudaMallocHost(&h, bytes);
        cudaStream_t s; cudaStreamCreate(&s);
        cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        bufs = host.host_buffers(fn.node)
        for c in host.copies(fn.node):
            if not c.is_async:
                continue
            reasons = []
            if c.on_default_stream:
                reasons.append(
                    "on the default stream"
                    if c.stream is None
                    else f"on stream `{syn.text(c.stream)}` (the default stream)"
                )
            name = syn.base_name(c.host_operand)
            if name in bufs.pageable:
                reasons.append(f"from pageable host memory `{name}` ({bufs.pageable[name]})")
            if not reasons:
                continue
            yield ctx.finding(
                c.line,
                f"`{c.func}` {' and '.join(reasons)}: it cannot overlap with kernels or other copies",
                "issue it on a created stream, with a pinned host buffer (cudaMallocHost/cudaHostAlloc)",
                facts=(("default_stream", c.on_default_stream), ("pageable", name in bufs.pageable)),
            )
