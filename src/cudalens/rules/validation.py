"""V1: cudalens checking itself. A static prediction that the hardware counters contradict.

V1 is not one of the guide's recommendations: it reports on cudalens' own model. Its findings are
made by :func:`cudalens.guided.crosscheck.disagreement_findings` when counters are merged into a
report; the static rule pass has nothing to look at, so the detector below yields nothing.

The rule is described here (``RULE``, ``VALIDATION_RULES``) so reports can document it (SARIF's
rule table, ``--format sarif``). It is deliberately *not* put in the registry's ``RULES``: the
registry holds GUIDE_CATALOG items only (tests/rules/test_catalog.py requires every registered id
to be a catalog id, and V1 is not one). Once the catalog carries a validation row, decorating
``check_v1`` with :func:`cudalens.rules.registry.rule` registers it.
"""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules.registry import RuleSpec

ID = "V1"
NAME = "prediction-disagrees-with-counters"
SECTION = "cudalens validation"
PRIORITY = Priority.INFO
LAYERS = "M P"


def check_v1(ctx: Any) -> Iterator[Finding]:
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
    return iter(())


#: The rule's entry, in the registry's shape (for report rule tables).
RULE = RuleSpec(id=ID, name=NAME, priority=PRIORITY, section=SECTION, layers=LAYERS, checks=(check_v1,),
                doc=(check_v1.__doc__ or "").strip())

#: Rules of the validation section, by id.
VALIDATION_RULES: dict[str, RuleSpec] = {ID: RULE}
