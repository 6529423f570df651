"""E3: At least 64 threads per block."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._common import deliberate_small_launch, threads
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("E3", name="block-below-64-threads", layers="S M")
def block_below_64_threads(ctx: RuleContext) -> Iterator[Finding]:
    """Thread blocks of fewer than 64 threads.

    What it does:
        Flags launch sites whose established block size is below 64 threads.

    Why it matters:
        An SM holds a limited number of resident blocks (16 to 32 depending on the architecture).
        With tiny blocks that limit is reached long before the SM's thread capacity: 16 blocks of
        32 threads fill only 512 of 2048 thread slots, leaving too few warps to hide memory
        latency. 128 to 256 threads per block is the usual starting point.

    Example:
        ```cuda
        kernel<<<n / 32, 32>>>(...);
        ```

    Fix:
        ```cuda
        kernel<<<n / 256, 256>>>(...);   // then tune with the occupancy calculator
        ```
    """
    src = ctx.source
    for site in src.launch_sites:
        t = threads(site.block_dims)
        if not t or t >= 64 or deliberate_small_launch(site, src):
            continue
        yield ctx.finding(
            site.line,
            f"`{site.kernel}` is launched with {t} threads per block: the per-SM block limit caps"
            " the resident warps far below the SM's capacity",
            "use at least 64 threads per block; 128 to 256 is a good start",
            kernel=site.kernel,
            facts=(("block_threads", t),),
        )
