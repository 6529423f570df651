"""E2: Threads per block in multiples of 32."""

from __future__ import annotations

import math
from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._common import deliberate_small_launch, threads
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("E2", name="block-not-multiple-of-warp", layers="S M")
def block_not_multiple_of_warp(ctx: RuleContext) -> Iterator[Finding]:
    """Thread block size that is not a multiple of 32.

    What it does:
        Flags launch sites whose block size (x·y·z, when the front end can establish it) is not a
        multiple of the warp size, 32. The impact is the share of lanes in the block's warps that
        carry no thread.

    Why it matters:
        The GPU schedules whole warps of 32 threads. A block of 48 threads occupies two warps, and
        the second runs with half its lanes idle: that throughput, and the warp slots and
        registers of the empty lanes, are wasted on every block.

    Example:
        ```cuda
        scale<<<(n + 99) / 100, 100>>>(x, n);   // 4 warps, 28 idle lanes
        ```

    Fix:
        ```cuda
        scale<<<(n + 127) / 128, 128>>>(x, n);
        ```
    """
    src = ctx.source
    for site in src.launch_sites:
        dims = site.block_dims
        t = threads(dims)
        if dims is None or not t or t % 32 == 0 or deliberate_small_launch(site, src):
            continue
        warps = math.ceil(t / 32)
        idle = warps * 32 - t
        yield ctx.finding(
            site.line,
            f"`{site.kernel}` is launched with {t} threads per block ({dims[0]}x"
            f"{dims[1]}x{dims[2]}): {warps} warps with {idle} idle lanes",
            f"use a multiple of 32 threads per block (e.g. {warps * 32}) and guard the tail in the kernel",
            kernel=site.kernel,
            impact=idle / (warps * 32),
            impact_text="share of warp lanes without a thread",
            facts=(("block_threads", t), ("idle_lanes", idle)),
        )
