"""V1: a static prediction that the hardware counters contradict.

V1 is not one of the guide's recommendations: it reports on cudalens' own model, so its catalog
row is a validation item (:data:`cudalens.rules.catalog.VALIDATION`). It reads the ``checks``
layer: the predictions compared with Nsight Compute's counters per kernel
(:mod:`cudalens.guided.crosscheck`) and per source line (:mod:`cudalens.pipeline.line_checks`).
"""

from __future__ import annotations

from typing import Iterator

from cudalens.compiled.names import base_name_from_mangled
from cudalens.findings import Evidence, Finding, Layer
from cudalens.quantities import BRANCH_EFFICIENCY, THEORETICAL_OCCUPANCY
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule

_FIX = {
    THEORETICAL_OCCUPANCY.name: "check that the block size (--block) and dynamic shared memory match the profiled "
                                "launch, then re-run the analysis",
    BRANCH_EFFICIENCY.name: "doubt the D-rule verdicts for this kernel: check the values assumed for its parameters "
                            "(--define) and the block size",
}
_FIX_DEFAULT = ("doubt the model's verdicts for this kernel: check the parameter values (--define), the block "
                "size and the pointer alignment it assumed against the profiled launch")


@rule("V1", name="prediction-disagrees-with-counters", layers="M P", requires=("checks",))
def prediction_disagrees_with_counters(ctx: RuleContext) -> Iterator[Finding]:
    """A static prediction disagrees with the hardware counters of a profiled launch.

    What it does:
        When Nsight Compute counters are merged into a report (`cudalens analyze --counters`),
        every prediction a counter can verify is compared with it: global sectors per request,
        shared-memory wavefronts per request, branch efficiency, theoretical occupancy. One V1
        finding is reported for each comparison outside its tolerance, naming the predicted
        and the measured value and the counter.

    Why it matters:
        Every other finding rests on the model's picture of the kernel: the block size, the
        values of its parameters, the pointer alignment. When the hardware says otherwise, the
        verdicts built on that picture (G1-G3, SH1, D1, E1) may be wrong for the launch that
        was profiled. A disagreement is shown rather than hidden so that the user knows which
        verdict to doubt.

    Example:
        ```cuda
        __global__ void k(float* out, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if ((threadIdx.x / 32) % 2 == 0) out[i] = sinf(i); else out[i] = cosf(i);
        }
        ```
        The model predicts the branch uniform across each warp (branch efficiency at least
        99 %); if the profiled launch measures less (the compiler may add branches of its own,
        or the launch used another block size), V1 reports the gap.

    Fix:
        Check what the analysis assumed against the profiled launch: the block size (`--block`),
        the parameter values (`--define`), dynamic shared memory and pointer alignment. If they
        match, the model is wrong for this kernel: trust the counters, and report the case.
    """
    assert ctx.checks is not None
    for c in ctx.checks.kernels:
        if c.agree is not False:
            continue
        predicted = f"{c.relation} {c.predicted:g} {c.unit}" if c.relation != "≈" else f"{c.predicted:g} {c.unit}"
        yield ctx.finding(
            c.line, (f"prediction disagrees with counters: {c.quantity} predicted {predicted}, "
                     f"ncu measured {c.measured:g} {c.unit} (tolerance {c.tolerance})"),
            _FIX.get(c.quantity, _FIX_DEFAULT), kernel=c.kernel, file=c.file,
            evidence=(Evidence(Layer.MODEL, c.quantity, c.predicted), Evidence(Layer.PROFILER, c.counter, c.measured)))


@rule("V1", name="prediction-disagrees-with-counters", layers="M P", requires=("checks",))
def line_disagrees_with_counters(ctx: RuleContext) -> Iterator[Finding]:
    """A line whose instructions' counters (ncu's source page) contradict the line's prediction."""
    assert ctx.checks is not None
    for c in ctx.checks.lines:
        if c.agree is not False:
            continue
        # a range (predicted None) that misses the measurement is said as its range
        said = f"{c.predicted:g}" if c.predicted is not None else f"{c.low:g}..{c.high:g}"
        value = c.predicted if c.predicted is not None else [c.low, c.high]
        yield ctx.finding(
            c.line, (f"prediction disagrees with this line's instructions: {c.quantity} predicted {said} "
                     f"({c.layer or 'model'}), ncu measured {c.measured:g} over {c.executed:g} warp executions "
                     f"of line {c.line}"),
            "check the launch the model assumed (--block, --define, the --run arguments) against the profiled "
            "one; if they match, the model is wrong for this line: trust the counter",
            kernel=base_name_from_mangled(c.kernel), file=c.file,
            evidence=(Evidence(Layer.COMPILED if c.layer == "compiled-ptx" else Layer.MODEL, c.quantity, value),
                      Evidence(Layer.PROFILER, f"source page: {c.quantity} (line {c.line})", c.measured)))
