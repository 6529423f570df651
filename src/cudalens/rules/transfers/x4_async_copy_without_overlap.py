"""X4: Asynchronous copies on non-default streams to overlap with kernels."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding, Layer
from cudalens.rules import _host as host
from cudalens.rules import _trace as tr
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


@rule("X4", name="async-copy-without-overlap", layers="R", requires=("trace",))
def traced_synchronous_copies(ctx: RuleContext) -> Iterator[Finding]:
    """Synchronous host-device copies between the kernel launches of a traced run, repeated."""
    assert ctx.trace is not None
    trace = ctx.trace.records
    sync = [c for c in tr.host_device(trace) if not c.is_async and tr.between_launches(trace, [c.start_ns])]
    if len(sync) >= tr.REPEAT:
        corr = {c.correlation for c in sync}
        host_t = sum(a.duration_ns for a in trace.api if a.correlation in corr) * 1e-9
        t = host_t or sum(c.duration_ns for c in sync) * 1e-9
        yield tr.measured(ctx, f"{len(sync)} synchronous host-device copies between kernel launches: the host waits "
                          f"{tr.fmt_us(t)} in them and no copy overlaps a kernel",
                          "use cudaMemcpyAsync on a non-default stream from pinned memory and overlap copies with "
                          "independent kernels (staged copy/execute)", t,
                          (("copies", len(sync)), ("host_wait_s", host_t or None)))


@rule("X4", name="async-copy-without-overlap", layers="R", requires=("trace",))
def traced_read_backs(ctx: RuleContext) -> Iterator[Finding]:
    """Small device-to-host read-backs, each followed by a synchronization, between the kernel
    launches of a loop (PyTorch's ``.item()``): measured by the GPU's idle time after them."""
    assert ctx.trace is not None
    found, span_s = ctx.trace.read_backs, ctx.trace.facts.span_s
    if not found or not span_s:
        return
    idle = sum(r.gpu_idle_ns for r in found) * 1e-9
    wait = sum(r.sync.duration_ns for r in found) * 1e-9
    sizes = sorted(r.copy.bytes for r in found)
    calls = sorted({r.sync.name.split("_v")[0] for r in found})
    per = idle / len(found)
    message = (f"{len(found)} read-backs of {sizes[len(sizes) // 2]} B (device-to-host copy, then "
               f"{', '.join(calls)}) between kernel launches (as PyTorch's .item() or CuPy's .get() of a small array "
               "does in a loop): each drains the GPU's queue, and the GPU "
               f"then idles {tr.fmt_us(per)} on average until the host launches again ({tr.fmt_us(idle)} in all, "
               f"{idle / span_s:.1%} of the assessed span); the host waits {tr.fmt_us(wait)} in the synchronizing calls")
    fix = ("read the value back less often (every N steps), keep running metrics on the device and read them "
           "once, or copy into pinned memory with non_blocking=True and read it an iteration later "
           "(an event instead of a stream synchronize)")
    yield ctx.finding(None, message, fix, file=ctx.trace.program, layer=Layer.RUNTIME,
                      facts=(("read_backs", len(found)), ("bytes_each", sizes[0]), ("gpu_idle_after_s", idle),
                             ("host_wait_s", wait), ("sync_calls", ", ".join(calls))),
                      impact=min(idle / span_s, 1.0),
                      impact_text="of the assessed span (measured: GPU idle after the read-backs)", status="confirmed")
