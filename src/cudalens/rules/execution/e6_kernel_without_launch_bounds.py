"""E6: Launch bounds on kernels."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._common import threads
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("E6", name="kernel-without-launch-bounds", layers="S", advisory=True)
def kernel_without_launch_bounds(ctx: RuleContext) -> Iterator[Finding]:
    """Kernels without `__launch_bounds__`.

    What it does:
        Reports each kernel that has no `__launch_bounds__(maxThreadsPerBlock[, minBlocksPerSM])`
        qualifier. Informational.

    Why it matters:
        Without the bound the compiler must assume the kernel may be launched with up to 1024
        threads per block and budgets registers for that case, or not at all. Stating the largest
        block you launch lets it pick a register count that keeps the occupancy you intend, and a
        launch with a larger block then fails loudly instead of misbehaving.

    Example:
        ```cuda
        __global__ void stencil(const float *in, float *out);
        ```

    Fix:
        ```cuda
        __global__ void __launch_bounds__(256) stencil(const float *in, float *out);
        ```
    """
    src = ctx.source
    for k in src.kernels:
        if k.launch_bounds is not None:
            continue
        sizes = (threads(s.block_dims) for s in src.launch_sites if s.kernel == k.name)
        blocks = {t for t in sizes if t is not None}
        hint = f"__launch_bounds__({max(blocks)})" if blocks else "__launch_bounds__(<largest block>)"
        yield ctx.finding(
            k.line,
            f"kernel `{k.name}` has no __launch_bounds__: register allocation cannot take its block size into account",
            f"add `{hint}` to the kernel declaration",
            kernel=k.name,
            facts=(("launch_bounds", None),),
        )
