"""SH1: Shared memory without bank conflicts."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import accesses, figures_evidence, figures_layer, notes_text, share
from cudalens.rules._counters import counted
from cudalens.rules._patterns import SEQUENTIAL, interleaved_tree
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule(
    "SH1",
    name="shared-bank-conflicts",
    layers="S M P L",
    verified_by=("shared load wavefronts/request", "shared store wavefronts/request"),
)
def shared_bank_conflicts(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a shared-memory access where lanes of a warp hit different 4-byte words in the same bank
    (an n-way conflict); lanes reading the same word are a free broadcast.

    Why it matters
    Shared memory serves one word per bank per wavefront: an n-way conflict makes the request take
    n wavefronts, dividing shared-memory bandwidth by n.

    Example
    ``tile[threadIdx.x][threadIdx.y]`` on ``__shared__ float tile[32][32]``: a column read, 32-way.

    Fix
    Pad the inner dimension by one element (``tile[32][33]``) so column elements fall into different
    banks, or swap the indices so threadIdx.x walks the inner dimension. In an interleaved tree
    reduction (``index = 2 * s * tid`` with ``s`` doubling) the fix is sequential addressing:
    ``for (s = blockDim.x / 2; s > 0; s >>= 1) if (tid < s) sdata[tid] += sdata[tid + s];``.
    """
    for k, a in accesses(ctx, "shared"):
        if a.bank_conflict_ways and a.bank_conflict_ways > 1 + 1e-9:
            waste = None
            if a.wavefronts_per_request and a.ideal_wavefronts_per_request:
                waste = 1.0 - a.ideal_wavefronts_per_request / a.wavefronts_per_request
            yield ctx.finding(
                a.line,
                f"shared {a.op} of {a.array}[{a.index}] has a {a.bank_conflict_ways:g}-way bank conflict "
                f"({a.wavefronts_per_request:g} wavefronts per request, ideal "
                f"{a.ideal_wavefronts_per_request:g}"
                + (f"; {a.iteration_range[0]:g}-way to {a.iteration_range[1]:g}-way over the loop's iterations"
                   if a.iteration_range else "") + f"){notes_text(a)}",
                SEQUENTIAL if interleaved_tree(k, a, ctx.source) else
                "pad the array's inner dimension by one element (e.g. [32][33]) or make threadIdx.x "
                "index the inner dimension",
                kernel=k.name,
                file=a.file or k.file,
                impact=share(waste),
                impact_text="share of shared-memory wavefronts lost to conflicts",
                evidence=[
                    Evidence(figures_layer(a), "bank_conflict_ways", a.bank_conflict_ways),
                    Evidence(Layer.MODEL, "block", k.block_dims),
                    *figures_evidence(a),
                ],
            )


@rule("SH1", name="shared-bank-conflicts", layers="P", requires=("counters",))
def measured_bank_conflicts(ctx: RuleContext) -> Iterator[Finding]:
    """Half a bank conflict or more per shared-memory request in a profiled launch (Nsight Compute)."""
    assert ctx.counters is not None
    m = ctx.counters.metrics
    conflicts = max(m.shared_ld_bank_conflicts_per_request or 0, m.shared_st_bank_conflicts_per_request or 0)
    if conflicts >= 0.5:
        yield counted(ctx, f"{conflicts:.1f} shared-memory bank conflicts per request",
                      "pad the shared array or change the index so a warp's words fall in distinct banks", None,
                      "bank conflicts per request", conflicts)
