"""X3: Page-locked host buffers for transfers."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules import _trace as tr
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


@rule("X3", name="pageable-host-buffer", layers="R", requires=("trace",))
def traced_pageable_copies(ctx: RuleContext) -> Iterator[Finding]:
    """Host-device copies from or to pageable host memory in a traced run."""
    assert ctx.trace is not None
    facts = ctx.trace.facts
    link_txt = tr.link_text(facts)
    hd = tr.host_device(ctx.trace.records)
    pageable = [c for c in hd if c.host_side == "pageable"]
    if pageable:
        t = sum(c.duration_ns for c in pageable) * 1e-9
        b = sum(c.bytes for c in pageable)
        pinned = [c for c in hd if c.host_side == "pinned"]
        pin_b, pin_t = sum(c.bytes for c in pinned), sum(c.duration_ns for c in pinned)
        pin_bw = pin_b / pin_t if pin_b >= tr.X1_MIN_BYTES and pin_t else None
        extra = f"; pinned copies in this run reached {pin_bw:.2f} GB/s" if pin_bw else ""
        yield tr.measured(ctx, f"{len(pageable)} copies use pageable host memory ({tr.fmt_bytes(b)} in {tr.fmt_us(t)}, "
                          f"{(b / t / 1e9) if t else 0:.2f} GB/s{link_txt}{extra}): the driver stages them through a "
                          "pinned buffer and cannot overlap them with kernels",
                          "allocate the host buffers with cudaMallocHost / cudaHostAlloc (cupyx.empty_pinned, "
                          "tensor.pin_memory()) and copy asynchronously", t,
                          (("copies", len(pageable)), ("bytes", b), ("copy_time_s", t)))
