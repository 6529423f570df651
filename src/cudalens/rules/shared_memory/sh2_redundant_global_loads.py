"""SH2: Shared memory to avoid redundant global loads."""

from __future__ import annotations

import dataclasses
import re
from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import accesses, kernels, share
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source.model import Kernel
from cudalens.source.trips import trips_of_kernel


@rule("SH2", name="redundant-global-loads", layers="S L", measured="memory")
def redundant_global_loads(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a global load in a loop where several threads of one block read the same element (for
    example the naive ``C = A * B`` inner loop, where a row of A is read by every thread of the row).

    Why it matters
    Each element crosses the memory bus once per reading thread instead of once per block. Loading a
    tile into shared memory once and reading it from there removes the redundant traffic.

    Example
    ``for (i...) sum += a[row * N + i] * b[i * N + col];`` with a 2-D block.

    A warp-uniform load (every lane of a warp reads one address, such as ``x[k]`` in a GEMV) is
    not reported: it costs one request per warp and is served from cache to the block's other warps.

    Nor is a load under a guard the model cannot evaluate (``if (grid.thread_rank() == 0)``): how many
    threads read each element is then not established.

    A loop whose trip count grows with the input (its bound is a kernel parameter) and whose only
    global loads are warp-uniform reads of one array at the loop's index (``for (j = 0; j < n; ++j)
    c += x[j] < v;``) is reported with its trip count: every thread of the grid re-reads the whole
    array, and that is the kernel's work. (A GEMV's ``x[k]`` sits beside the matrix's own loads and
    is not reported.)

    Fix
    Cooperatively load the tile the block needs into ``__shared__`` memory, ``__syncthreads()``, then
    read the tile in the loop.
    """
    for k, a in accesses(ctx, "global"):
        r = a.reuse or {}
        tpe = r.get("threads_per_element") or 0
        if a.pattern == "broadcast":
            continue  # one address per warp: one request, served to all lanes (and cached for the others)
        if any(x.startswith("guarding condition not evaluable") for x in a.assumptions):
            continue  # who runs it is unknown (e.g. `if (grid.thread_rank() == 0)`): readers per element too
        if a.op == "load" and r.get("invariant_in_loop") is False and tpe >= 2:
            yield ctx.finding(
                a.line,
                f"each element of {a.array} read at {a.array}[{a.index}] is loaded by {tpe:g} threads of "
                "the block in every iteration",
                "load the tile once per block into __shared__ memory, synchronize, and read it from there",
                kernel=k.name,
                file=k.file,
                impact=share(1.0 - 1.0 / tpe),
                impact_text="share of global loads that are redundant within the block",
                evidence=[Evidence(Layer.MODEL, "threads_per_element", tpe)],
            )
    for k in kernels(ctx):
        yield from _whole_array_rereads(ctx, k)


def _whole_array_rereads(ctx: RuleContext, k: Kernel) -> Iterator[Finding]:
    scalars = {p.name for p in k.params if not p.is_pointer}
    trips_of = trips_of_kernel(k, ctx.source)
    for lp in k.loops:
        v = lp.induction_variable
        if not v or not scalars & set(re.findall(r"[A-Za-z_]\w*", lp.condition or "")):
            continue
        inside = [a for a in k.accesses if a.space == "global" and a.op == "load" and lp.line <= a.line <= lp.end_line]
        whole = [a for a in inside if a.pattern == "broadcast" and re.search(rf"\b{re.escape(v)}\b", a.index)]
        if not whole or len(whole) != len(inside):
            continue
        a = whole[0]
        trips = trips_of(lp)
        warps = -(-(k.block_dims[0] * k.block_dims[1] * k.block_dims[2]) // 32) if k.block_dims else None
        yield dataclasses.replace(ctx.finding(
            a.line,
            f"every thread re-reads the whole of {a.array} ({a.array}[{a.index}] over the loop at line {lp.line}, "
            f"`{lp.condition}`: {trips.describe()}): the loop's only global loads are the same addresses "
            "for every thread of the grid",
            f"read each tile of {a.array} once per block into __shared__ memory and loop over the tile, or "
            "restructure the algorithm so no thread scans the whole input (sort, prefix sums, a reduction)",
            kernel=k.name, file=k.file,
            impact=share(1.0 - 1.0 / warps) if warps and warps > 1 else None,
            impact_text="share of the block's loads of the array that a shared tile removes",
            evidence=[Evidence(Layer.MODEL, "whole_array_reread", {"loop_line": lp.line, **trips.to_dict()})],
        ), runs=trips.value)
