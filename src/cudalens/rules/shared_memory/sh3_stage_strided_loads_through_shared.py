"""SH3: Shared memory to coalesce strided global access."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import excess, sector_evidence, share, stride_text
from cudalens.rules._patterns import swap_fix
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source.model import Access, Kernel

# A lane stride of at least this many elements (a column walk: every lane its own sector for
# any element size) ...
SH3_MIN_STRIDE = 32
# ... where the block's requests together read a region whose staged sectors are at least this
# full (1.0: a dense tile) ...
SH3_MIN_USED = 0.75
# ... and staging would fetch at most this share of the sectors fetched today.
SH3_MAX_STAGED_SHARE = 0.5


def sh3_applies(a: Access, staged: set[str]) -> bool:
    """A column-walking global load whose block reads a dense tile worth staging."""
    st = a.staging or {}
    return not (
        a.space != "global"
        or a.op != "load"
        or a.array in staged
        or not excess(a)
        or a.lane_stride is None
        or abs(a.lane_stride) < SH3_MIN_STRIDE
        or not st.get("sectors")
        or st.get("used", 0) < SH3_MIN_USED
        or st["sectors_staged"] > SH3_MAX_STAGED_SHARE * st["sectors"]
    )


def staged_arrays(k: Kernel) -> set[str]:
    """Global arrays the kernel already copies into a ``__shared__`` tile with a unit lane stride."""
    return {
        a.array for a in k.accesses if a.space == "global" and a.op == "load" and a.stored_to and a.lane_stride == 1
    }


def _modelled_kernels(ctx: RuleContext) -> Iterator[Kernel]:
    """The kernels with their access verdicts.

    ``analyze_file`` runs the access model before the rules. A context built straight from
    ``parse_file`` (the pattern-rule examples) has none: then the model is run here, with the
    launch configuration the file gives (or the default block), exactly as ``analyze_file`` would
    without ``--block``/``--define``. A model that has run sets every kernel's ``block_dims``.
    """
    kernels = ctx.source.kernels
    if kernels and all(k.block_dims is None for k in kernels):
        from cudalens.access.model import analyze_model

        kernels = analyze_model(ctx.source).kernels
    return iter(kernels)


@rule(
    "SH3",
    name="stage-strided-loads-through-shared",
    layers="S L",
    measured="coalescing",
    supersedes=("G3",),
    carries_priority=True,
)
def stage_strided_loads_through_shared(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a global load whose consecutive lanes are 32 or more elements apart (a walk down a column
    of a row-major matrix) when the warps of a block, over the iterations of the enclosing loop,
    together read a dense region: a tile the block could load coalesced into shared memory. A
    kernel that already copies that array into a ``__shared__`` array with a unit lane stride is
    left alone. The facts come from the access model (``Access.staging``): warp requests of block 0
    over up to ``stride`` iterations of the innermost loop, the sectors they fetch today, and the
    distinct sectors of the region they read.

    Why it matters
    A column walk makes every lane of a warp fetch its own 32-byte sector to use 4 bytes of it, so
    the load moves up to 8 times the bytes it needs, and the neighbouring bytes are fetched again
    by later iterations if the cache has dropped them. When the block as a whole reads whole rows,
    it can load those rows with consecutive threads on consecutive addresses (full sectors), store
    them in shared memory, and read them back in the column order the algorithm needs; shared
    memory has no sectors to waste, only banks (pad the tile against conflicts, SH1).

    Priority
    The catalog gives 9.2.3.3 no priority of its own, but the access it flags is the strided
    access of BPG 9.2.1.4 (G3, high priority), and 9.2.1.4 names shared memory as the way to avoid
    it. So when the access fetches more sectors than it needs at a non-unit stride, the finding
    carries G3's high priority and replaces G3's finding for that access.

    Example
    ``for (int i = 0; i < 32; i++) sum += a[row * 32 + i] * a[col * 32 + i];`` with
    ``col = blockIdx.x * blockDim.x + threadIdx.x``: lanes read ``a`` 32 floats apart.

    Fix
    Load the tile coalesced and transpose it on the way into shared memory, then read it from there:
    ``t[threadIdx.x][threadIdx.y] = a[(blockIdx.x * blockDim.x + threadIdx.y) * 32 + threadIdx.x];``,
    ``__syncthreads();``, and in the loop ``t[i][threadIdx.x]``; declare ``t[32][33]`` so the column
    reads are free of bank conflicts.
    """
    for k in _modelled_kernels(ctx):
        staged = staged_arrays(k)
        seen = set()
        for a in k.accesses:
            key = (a.line, a.array, a.index)
            if key in seen or not sh3_applies(a, staged):
                continue
            seen.add(key)
            st = a.staging or {}  # sh3_applies: set
            where = f"over the loop at line {st['loop_line']}" if st.get("over") == "loop" else "in one pass"
            yield ctx.finding(
                a.line,
                f"global load of {a.array}[{a.index}] has lane stride {stride_text(a)} "
                f"({a.sectors_per_request:g} sectors per request); the block's {st['requests']} requests "
                f"{where} read a dense region of {st['sectors_staged']} sectors but fetch "
                f"{st['sectors']}",
                swap_fix(k, a, ctx.source) or (
                    f"load that region of {a.array} coalesced (threadIdx.x on consecutive addresses) into a "
                "__shared__ tile, __syncthreads(), and read the tile in the strided order"),
                kernel=k.name,
                file=k.file,
                impact=share(1.0 - st["sectors_staged"] / st["sectors"]),
                impact_text="share of this load's sectors a coalesced shared-memory tile would not fetch",
                evidence=sector_evidence(a, k)
                + [Evidence(Layer.MODEL, "lane_stride", a.lane_stride)]
                + [Evidence(Layer.MODEL, f"staging.{name}", v) for name, v in st.items()],
            )
