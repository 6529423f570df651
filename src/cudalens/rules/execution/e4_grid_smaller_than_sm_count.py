"""E4: More blocks than SMs."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._common import deliberate_small_launch, threads
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule

# SM count of a representative data-center part per compute capability, used only to say "smaller
# than the SMs of <device>" when no live device was queried. Numbers from NVIDIA's product pages.
REFERENCE_SMS: dict[str, tuple[str, int]] = {
    "7.0": ("V100", 80),
    "7.5": ("T4", 40),
    "8.0": ("A100", 108),
    "8.6": ("A10", 72),
    "8.9": ("L4", 58),
    "9.0": ("H100 SXM", 132),
    "10.0": ("B200", 148),
    "12.0": ("RTX PRO 6000 Blackwell", 188),
}


def _sm_count(ctx: RuleContext) -> tuple[str, int] | None:
    return REFERENCE_SMS.get(ctx.cc)


@rule("E4", name="grid-smaller-than-sm-count", layers="S M")
def grid_smaller_than_sm_count(ctx: RuleContext) -> Iterator[Finding]:
    """Grids with fewer blocks than the GPU has SMs.

    What it does:
        Flags launch sites whose grid size is established (a literal or constant `dim3`) and is
        smaller than the SM count of the target: the measured device when one was queried,
        otherwise a representative part of the target compute capability (e.g. 132 SMs of an
        H100 SXM for 9.0). Grids computed from the problem size are not judged, nor are deliberate
        single-thread launches (`<<<1, 1>>>`: serial work such as a scalar update) or launches of
        an empty kernel (a timeline marker); E2 and E3 skip those too.

    Why it matters:
        A block runs on one SM; with fewer blocks than SMs some SMs have nothing to do for the whole
        kernel. The guide asks for more blocks than SMs, and for thousands of blocks when the code
        should scale to future GPUs with more SMs.

    Example:
        ```cuda
        reduce<<<32, 256>>>(x, n);      // grid-stride loop, fixed grid
        ```

    Fix:
        ```cuda
        int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        reduce<<<4 * sms, 256>>>(x, n);  // or size the grid from n
        ```
    """
    src = ctx.source
    target = _sm_count(ctx)
    if target is None:
        return
    device, sms = target
    for site in src.launch_sites:
        blocks = threads(site.grid_dims)
        if not blocks or blocks >= sms or deliberate_small_launch(site, src):
            continue
        yield ctx.finding(
            site.line,
            f"`{site.kernel}` is launched with {blocks} blocks, fewer than the {sms} SMs of {device}:"
            f" at least {sms - blocks} SMs stay idle, and more on future GPUs",
            "size the grid from the problem (or from the SM count queried at run time, several blocks per SM)",
            kernel=site.kernel,
            impact=1 - blocks / sms,
            impact_text=f"share of the {sms} SMs without a block",
            facts=(("grid_blocks", blocks), ("sm_count", sms), ("device", device)),
        )


@rule("E4", name="grid-smaller-than-sm-count", layers="R", requires=("trace_kernel",))
def traced_grid_smaller_than_sm_count(ctx: RuleContext) -> Iterator[Finding]:
    """A traced launch of a kernel that takes at least 5 % of the kernel time with fewer blocks
    than the device has SMs."""
    assert ctx.trace_kernel is not None
    k, sm_count = ctx.trace_kernel.summary, ctx.trace_kernel.sm_count
    blocks = k.grid[0] * k.grid[1] * k.grid[2]
    if sm_count and blocks < sm_count and k.share >= 0.05:
        yield ctx.finding(
            None, f"the grid has {blocks} blocks for {sm_count} multiprocessors: part of the GPU has no work",
            "use more, smaller blocks (at least one per multiprocessor, better several)",
            kernel=k.name, file=ctx.trace_kernel.program, impact=k.span_share * (1 - blocks / sm_count),
            impact_text="idle multiprocessors x the kernel's span share",
            evidence=(Evidence(Layer.RUNTIME, "grid blocks", blocks), Evidence(Layer.RUNTIME, "sm_count", sm_count)))
