"""I14: No 24-bit multiply intrinsics."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


@rule("I14", name="legacy-mul24", layers="S")
def legacy_mul24(ctx: RuleContext) -> Iterator[Finding]:
    """`__mul24`/`__umul24` in device code.

    What it does:
        Flags calls of the 24-bit multiply intrinsics `__mul24` and `__umul24`.

    Why it matters:
        They were a speed trick on the first CUDA GPUs. Since compute capability 2.0 the GPU has a
        native 32-bit integer multiply and the 24-bit forms are emulated with several instructions:
        they are slower, and they silently drop the high bits of the operands.

    Example:
        ```cuda
        int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;
        ```

    Fix:
        ```cuda
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        for c in syn.calls(fn.body):
            name = syn.call_name(c)
            if name in {"__mul24", "__umul24"}:
                args = syn.call_args(c)
                expr = " * ".join(syn.text(a) for a in args) if len(args) == 2 else "a * b"
                yield ctx.finding(
                    syn.line(c),
                    f"`{syn.text(c)}` is emulated on current GPUs and truncates its operands to 24 bits",
                    f"use a plain multiply: `{expr}`",
                    kernel=fn.name,
                    facts=(("intrinsic", name),),
                )
