"""X2: One large transfer instead of many small ones."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules import _trace as tr
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval

_LARGE_COPY = 1 << 20  # bytes; a copy at least this large is not "small"


@rule("X2", name="small-copies-in-loop", layers="S L")
def small_copies_in_loop(ctx: RuleContext) -> Iterator[Finding]:
    """Many separate copies in a loop instead of one batched copy.

    What it does:
        Flags host-device copies inside a loop that launches no kernel (loops that do launch are
        X1), unless the copy is known to move at least 1 MiB or is an asynchronous copy on a named
        stream. Typical cases: a row-by-row or element-by-element copy of a host structure.

    Why it matters:
        Each copy carries a fixed overhead of several microseconds (driver call, DMA set-up,
        synchronization) that dominates for small sizes; one large copy reaches the bus bandwidth.
        Packing the pieces into one contiguous staging buffer, or using `cudaMemcpy2D` for strided
        rows, replaces N overheads by one.

    Example:
        ```cuda
        for (int r = 0; r < rows; ++r)
            cudaMemcpy(d + r * cols, h[r], cols * sizeof(float), cudaMemcpyHostToDevice);
        ```

    Fix:
        ```cuda
        // pack into one contiguous host buffer (pinned), then one copy
        cudaMemcpy(d, h_packed, rows * cols * sizeof(float), cudaMemcpyHostToDevice);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        for c in host.bus_copies(fn.node):
            loops = syn.enclosing_loops(c.node)
            if not loops or any(host.loop_has_launch(lp) for lp in loops):
                continue
            size = const_eval(c.size)
            if size is not None and size.value >= _LARGE_COPY:
                continue
            size_text = f"{int(size.value)} bytes" if size is not None else f"`{syn.text(c.size)}` bytes"
            yield ctx.finding(
                c.line,
                f"`{c.func}` of {size_text} is issued once per iteration of the loop at line"
                f" {syn.line(loops[0])}: each copy pays the fixed per-transfer overhead",
                "gather the pieces into one contiguous (pinned) buffer and copy once, or use cudaMemcpy2D"
                " for strided rows",
                facts=(("copy_size", syn.text(c.size)), ("loop_line", syn.line(loops[0]))),
            )


@rule("X2", name="small-copies-in-loop", layers="R", requires=("trace",))
def traced_small_copies(ctx: RuleContext) -> Iterator[Finding]:
    """Ten or more host-device copies under 64 KiB in a traced run."""
    assert ctx.trace is not None
    facts = ctx.trace.facts
    link = facts.link_gbps
    link_txt = tr.link_text(facts)
    small = [c for c in tr.host_device(ctx.trace.records) if c.bytes < tr.SMALL_COPY]
    if len(small) >= 10:
        t = sum(c.duration_ns for c in small) * 1e-9
        b = sum(c.bytes for c in small)
        ideal = b / (link * 1e9) if link else 0.0
        achieved = b / t / 1e9 if t else 0.0
        yield tr.measured(ctx, f"{len(small)} small host-device copies (< {tr.SMALL_COPY // 1024} KiB; median "
                          f"{sorted(c.bytes for c in small)[len(small) // 2]} B) take {tr.fmt_us(t)} and move "
                          f"{tr.fmt_bytes(b)} at {achieved:.2f} GB/s{link_txt}: each pays the fixed cost of a transfer",
                          "batch them: gather the data into one buffer and copy it once", max(t - ideal, 0.0),
                          (("copies", len(small)), ("bytes", b), ("achieved_gbps", achieved), ("link_gbps", link)))
