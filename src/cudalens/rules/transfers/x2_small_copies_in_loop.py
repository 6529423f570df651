"""X2: One large transfer instead of many small ones."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

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
            size = syn.const_eval(c.size)
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
