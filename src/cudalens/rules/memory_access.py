"""Rules on the warp access model: global coalescing (G1, G2, G3, G5, G8), shared memory (SH1, SH2,
SH3), constant memory (K1) and divergence (D1).

They read the verdicts :mod:`cudalens.access.model` attached to each access and branch of
``ctx.source``; an access whose figures are null (data-dependent, unknown width) yields nothing.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from cudalens.findings import Evidence, Finding, Layer, Priority
from cudalens.rules.registry import rule


def _kernels(ctx: Any) -> Iterator[Any]:
    src = getattr(ctx, "source", None)
    return iter(getattr(src, "kernels", ()) or ())


def _accesses(ctx: Any, space: str) -> Iterator[tuple[Any, Any]]:
    """(kernel, access) pairs, one per (line, array, op) so a repeated subscript reports once."""
    for k in _kernels(ctx):
        seen = set()
        for a in k.accesses:
            key = (a.line, a.array, a.op, a.index)
            if a.space == space and key not in seen:
                seen.add(key)
                yield k, a


def _finding(rule_id: str, pri: Priority, section: str, k: Any, line: int | None, message: str, fix: str,
             impact: float | None, impact_text: str | None, evidence: Iterable[Evidence]) -> Finding:
    return Finding(rule_id, pri, section, k.name, k.file, line, message, fix,
                   None if impact is None else round(max(0.0, min(1.0, impact)), 4), impact_text, tuple(evidence))


def _sector_evidence(a: Any, k: Any) -> list[Evidence]:
    ev = [Evidence(Layer.MODEL, "sectors_per_request", a.sectors_per_request),
          Evidence(Layer.MODEL, "ideal_sectors_per_request", a.ideal_sectors_per_request),
          Evidence(Layer.MODEL, "block", k.block_dims), Evidence(Layer.SOURCE, "index", a.index)]
    ev.extend(Evidence(Layer.MODEL, "assumption", s) for s in a.assumptions)
    return ev


def _waste(a: Any) -> float | None:
    if not a.sectors_per_request or a.ideal_sectors_per_request is None:
        return None
    return 1.0 - a.ideal_sectors_per_request / a.sectors_per_request


def _excess(a: Any) -> bool:
    return (a.sectors_per_request is not None and a.ideal_sectors_per_request is not None
            and a.sectors_per_request > a.ideal_sectors_per_request + 1e-9)


@rule(id="G1", name="uncoalesced-global-access", priority=Priority.HIGH, section="BPG 9.2.1", layers="S M P L")
def uncoalesced(ctx: Any) -> Iterator[Finding]:
    """What it does
    Flags a global load or store whose warp touches more 32-byte sectors than the access needs, when
    the lanes follow no simple stride (scattered or row-crossing addresses). Misaligned and strided
    accesses have their own rules (G2, G3).

    Why it matters
    Global memory is moved in 32-byte sectors. A warp whose 32 lanes read 4-byte words that lie in
    4 consecutive sectors costs 4 transactions; the same 128 bytes spread over 32 sectors cost 32,
    so most of the bandwidth carries bytes no thread asked for.

    Example
    ``out[threadIdx.x * 33 % 32 + blockIdx.x * 1000] = ...`` with an index that jumps around.

    Fix
    Make consecutive threads (``threadIdx.x``) touch consecutive addresses; if the algorithm needs
    another order, stage the data through shared memory and re-order it there.
    """
    for k, a in _accesses(ctx, "global"):
        if _excess(a) and a.pattern in ("uncoalesced", "coalesced"):
            w = _waste(a)
            yield _finding("G1", Priority.HIGH, "BPG 9.2.1", k, a.line,
                           f"global {a.op} of {a.array}[{a.index}] touches {a.sectors_per_request:g} sectors per warp "
                           f"request where {a.ideal_sectors_per_request:g} would do",
                           "make threadIdx.x the fastest-varying part of the index so a warp reads one contiguous "
                           "span, or re-order through shared memory", w, "share of fetched bytes wasted",
                           _sector_evidence(a, k))


@rule(id="G2", name="misaligned-global-access", priority=Priority.HIGH, section="BPG 9.2.1.2", layers="S M P L")
def misaligned(ctx: Any) -> Iterator[Finding]:
    """What it does
    Flags a sequential (unit-stride) global access whose warp span starts off a 32-byte boundary, so it
    touches one sector more than needed (5 instead of 4 for 4-byte words).

    Why it matters
    Each warp pays an extra sector; for a copy with an offset that is 25 % more traffic for 4-byte words.
    Arrays from cudaMalloc are 256-byte aligned, so the offset comes from the index.

    Example
    ``out[i] = in[i + 1];`` (a shifted read).

    Fix
    Keep warp spans aligned: pad the row or the offset to a multiple of 32 bytes, or load the aligned
    span and shift in registers or shared memory.
    """
    for k, a in _accesses(ctx, "global"):
        if _excess(a) and a.pattern == "misaligned":
            yield _finding("G2", Priority.HIGH, "BPG 9.2.1.2", k, a.line,
                           f"global {a.op} of {a.array}[{a.index}] is sequential but misaligned: "
                           f"{a.sectors_per_request:g} sectors per request instead of {a.ideal_sectors_per_request:g}",
                           "align each warp's span to 32 bytes (pad offsets or row widths to a multiple of 32 bytes)",
                           _waste(a), "share of fetched bytes wasted", _sector_evidence(a, k))


@rule(id="G3", name="strided-global-access", priority=Priority.HIGH, section="BPG 9.2.1.4", layers="S M P L")
def strided(ctx: Any) -> Iterator[Finding]:
    """What it does
    Flags a global access whose consecutive lanes are ``k > 1`` elements apart.

    Why it matters
    With stride k only 1/k of every fetched sector is used, until each lane needs its own sector
    (32 sectors per request). A column walk over a row-major matrix is the usual cause.

    Example
    ``out[i] = in[i * stride];`` or ``a[threadIdx.x * N + k]``.

    Fix
    Swap the roles of the indices so threadIdx.x walks the contiguous dimension, store the data
    transposed, or load a tile coalesced into shared memory and read it strided from there.

    Where the block as a whole reads a dense tile that shared memory could serve coalesced, SH3
    reports the access instead, at this rule's priority: the guide points to shared memory as the
    way out of strided access (BPG 9.2.1.4) and works it through in 9.2.3.3.
    """
    staged_by_kernel: dict[int, set[str]] = {}
    for k, a in _accesses(ctx, "global"):
        staged = staged_by_kernel.setdefault(id(k), _staged_arrays(k))
        if _g3_applies(a) and not _sh3_applies(a, staged):
            yield _finding("G3", Priority.HIGH, "BPG 9.2.1.4", k, a.line,
                           f"global {a.op} of {a.array}[{a.index}] has lane stride {a.lane_stride} elements: "
                           f"{a.sectors_per_request:g} sectors per request instead of {a.ideal_sectors_per_request:g}",
                           "let threadIdx.x index the contiguous dimension, or stage a tile in shared memory",
                           _waste(a), "share of fetched bytes wasted", _sector_evidence(a, k))


@rule(id="G5", name="row-width-not-warp-multiple", priority=Priority.INFO, section="PG 5.3.2", layers="S M")
def row_width(ctx: Any) -> Iterator[Finding]:
    """What it does
    For a 2-D block indexing ``base + width * ty + tx``, flags a row width whose rows do not start on a
    128-byte boundary (width in elements not a multiple of 32 for 4-byte words).

    Why it matters
    Every row after the first starts misaligned, so warps that cover a row segment touch an extra
    sector, and 2-D blocks lose coalescing row by row.

    Example
    ``float v = img[y * 1000 + x];`` for a 1000-float wide image.

    Fix
    Allocate with ``cudaMallocPitch`` (or pad the width to a multiple of 32 elements) and index rows
    with the pitch.
    """
    for k, a in _accesses(ctx, "global"):
        pitch = getattr(a, "row_pitch", None)
        bdx = k.block_dims[0] if k.block_dims else None
        if pitch and a.bytes_per_thread and bdx and abs(pitch) > bdx and (abs(pitch) * a.bytes_per_thread) % 128:
            yield _finding("G5", Priority.INFO, "PG 5.3.2", k, a.line,
                           f"rows of {a.array} are {pitch} elements wide ({pitch * a.bytes_per_thread} bytes), "
                           "not a multiple of 128 bytes: rows after the first start misaligned",
                           "pad the row width to a multiple of 32 elements or allocate with cudaMallocPitch",
                           None, None, _sector_evidence(a, k) + [Evidence(Layer.MODEL, "row_pitch", pitch)])


@rule(id="G8", name="global-reread-in-loop", priority=Priority.HIGH, section="BPG 11.2", layers="S M")
def reread(ctx: Any) -> Iterator[Finding]:
    """What it does
    Flags a global load inside a loop whose addresses do not change from one iteration to the next.

    Why it matters
    The same bytes are fetched again every iteration; at best they hit in cache, at worst they cost
    a full memory round trip each time. A register or shared-memory copy costs nothing.

    Example
    ``for (int k = 0; k < n; ++k) sum += scale[blockIdx.x] * x[k];``

    Fix
    Load the value once before the loop into a register (or into shared memory for the block).
    """
    for k, a in _accesses(ctx, "global"):
        r = a.reuse or {}
        if a.op == "load" and r.get("invariant_in_loop") is True:
            yield _finding("G8", Priority.HIGH, "BPG 11.2", k, a.line,
                           f"{a.array}[{a.index}] is read again on every iteration of the loop at line "
                           f"{r.get('loop_line')} with the same address",
                           "hoist the load out of the loop into a register (or shared memory)", None, None,
                           [Evidence(Layer.MODEL, "invariant_in_loop", True),
                            Evidence(Layer.SOURCE, "loop_line", r.get("loop_line"))])


@rule(id="SH2", name="redundant-global-loads", priority=Priority.MEDIUM, section="BPG 9.2.3.2", layers="S L")
def redundant(ctx: Any) -> Iterator[Finding]:
    """What it does
    Flags a global load in a loop where several threads of one block read the same element (for
    example the naive ``C = A * B`` inner loop, where a row of A is read by every thread of the row).

    Why it matters
    Each element crosses the memory bus once per reading thread instead of once per block. Loading a
    tile into shared memory once and reading it from there removes the redundant traffic.

    Example
    ``for (i...) sum += a[row * N + i] * b[i * N + col];`` with a 2-D block.

    Fix
    Cooperatively load the tile the block needs into ``__shared__`` memory, ``__syncthreads()``, then
    read the tile in the loop.
    """
    for k, a in _accesses(ctx, "global"):
        r = a.reuse or {}
        tpe = r.get("threads_per_element") or 0
        if a.op == "load" and r.get("invariant_in_loop") is False and tpe >= 2:
            yield _finding("SH2", Priority.MEDIUM, "BPG 9.2.3.2", k, a.line,
                           f"each element of {a.array} read at {a.array}[{a.index}] is loaded by {tpe:g} threads of "
                           "the block in every iteration",
                           "load the tile once per block into __shared__ memory, synchronize, and read it from there",
                           1.0 - 1.0 / tpe, "share of global loads that are redundant within the block",
                           [Evidence(Layer.MODEL, "threads_per_element", tpe)])


# SH3: a lane stride of at least this many elements (a column walk: every lane its own sector for
# any element size) ...
SH3_MIN_STRIDE = 32
# ... where the block's requests together read a region whose staged sectors are at least this
# full (1.0: a dense tile) ...
SH3_MIN_USED = 0.75
# ... and staging would fetch at most this share of the sectors fetched today.
SH3_MAX_STAGED_SHARE = 0.5


def _modelled_kernels(ctx: Any) -> Iterator[Any]:
    """The kernels with their access verdicts.

    ``analyze_file`` runs the access model before the rules. A context built straight from
    ``parse_file`` (the pattern-rule examples) has none: then the model is run here, with the
    launch configuration the file gives (or the default block), exactly as ``analyze_file`` would
    without ``--block``/``--define``. A model that has run sets every kernel's ``block_dims``.
    """
    src = getattr(ctx, "source", None)
    kernels = tuple(getattr(src, "kernels", ()) or ())
    if kernels and all(getattr(k, "block_dims", None) is None for k in kernels) and hasattr(src, "launch_sites"):
        from cudalens.access.model import analyze_model

        kernels = analyze_model(src).kernels
    return iter(kernels)


def _g3_applies(a: Any) -> bool:
    """A strided global access that fetches more sectors than it needs (G3's condition)."""
    return _excess(a) and bool(a.pattern) and a.pattern.startswith("strided-")


def _sh3_applies(a: Any, staged: set[str]) -> bool:
    """A column-walking global load whose block reads a dense tile worth staging (SH3's condition)."""
    st = a.staging or {}
    return not (a.space != "global" or a.op != "load" or a.array in staged or not _excess(a)
                or a.lane_stride is None or abs(a.lane_stride) < SH3_MIN_STRIDE or not st.get("sectors")
                or st.get("used", 0) < SH3_MIN_USED
                or st["sectors_staged"] > SH3_MAX_STAGED_SHARE * st["sectors"])


def _staged_arrays(k: Any) -> set[str]:
    """Global arrays the kernel already copies into a ``__shared__`` tile with a unit lane stride."""
    return {a.array for a in k.accesses if a.space == "global" and a.op == "load" and a.stored_to
            and a.lane_stride == 1}


@rule(id="SH3", name="stage-strided-loads-through-shared", priority=Priority.INFO, section="BPG 9.2.3.3",
      layers="S L")
def strided_to_shared(ctx: Any) -> Iterator[Finding]:
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
        staged = _staged_arrays(k)
        seen = set()
        for a in k.accesses:
            key = (a.line, a.array, a.index)
            if key in seen or not _sh3_applies(a, staged):
                continue
            seen.add(key)
            st = a.staging
            where = (f"over the loop at line {st['loop_line']}" if st.get("over") == "loop" else "in one pass")
            # the strided access G3 would flag: this is the guide's remedy for it, at G3's priority
            pri, supersedes = (Priority.HIGH, [Evidence(Layer.MODEL, "supersedes", "G3")]) if _g3_applies(a) else (Priority.INFO, [])
            yield _finding("SH3", pri, "BPG 9.2.3.3", k, a.line,
                           f"global load of {a.array}[{a.index}] has lane stride {a.lane_stride} elements "
                           f"({a.sectors_per_request:g} sectors per request); the block's {st['requests']} requests "
                           f"{where} read a dense region of {st['sectors_staged']} sectors but fetch "
                           f"{st['sectors']}",
                           f"load that region of {a.array} coalesced (threadIdx.x on consecutive addresses) into a "
                           "__shared__ tile, __syncthreads(), and read the tile in the strided order",
                           1.0 - st["sectors_staged"] / st["sectors"],
                           "share of this load's sectors a coalesced shared-memory tile would not fetch",
                           _sector_evidence(a, k) + [Evidence(Layer.MODEL, "lane_stride", a.lane_stride)]
                           + [Evidence(Layer.MODEL, f"staging.{name}", v) for name, v in st.items()] + supersedes)


@rule(id="SH1", name="shared-bank-conflicts", priority=Priority.INFO, section="BPG 9.2.3.1", layers="S M P L")
def bank_conflicts(ctx: Any) -> Iterator[Finding]:
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
    banks, or swap the indices so threadIdx.x walks the inner dimension.
    """
    for k, a in _accesses(ctx, "shared"):
        if a.bank_conflict_ways and a.bank_conflict_ways > 1 + 1e-9:
            waste = None
            if a.wavefronts_per_request and a.ideal_wavefronts_per_request:
                waste = 1.0 - a.ideal_wavefronts_per_request / a.wavefronts_per_request
            yield _finding("SH1", Priority.INFO, "BPG 9.2.3.1", k, a.line,
                           f"shared {a.op} of {a.array}[{a.index}] has a {a.bank_conflict_ways:g}-way bank conflict "
                           f"({a.wavefronts_per_request:g} wavefronts per request, ideal "
                           f"{a.ideal_wavefronts_per_request:g})",
                           "pad the array's inner dimension by one element (e.g. [32][33]) or make threadIdx.x "
                           "index the inner dimension", waste, "share of shared-memory wavefronts lost to conflicts",
                           [Evidence(Layer.MODEL, "bank_conflict_ways", a.bank_conflict_ways),
                            Evidence(Layer.MODEL, "block", k.block_dims)])


@rule(id="K1", name="divergent-constant-addresses", priority=Priority.INFO, section="BPG 9.2.6", layers="S M")
def constant_divergence(ctx: Any) -> Iterator[Finding]:
    """What it does
    Flags a ``__constant__`` read where the lanes of a warp read different addresses.

    Why it matters
    The constant cache serves one address per warp per cycle: reads of n distinct addresses are
    serialized into n requests. Constant memory pays off only when a warp reads one value.

    Example
    ``coef[threadIdx.x]`` on ``__constant__ float coef[256]``.

    Fix
    Index constant memory with warp-uniform values (loop counters, blockIdx); for per-thread lookups
    use global memory with ``const __restrict__`` (read-only cache) or shared memory.
    """
    for k, a in _accesses(ctx, "constant"):
        d = a.distinct_addresses
        if d is not None and d > 1 + 1e-9:
            yield _finding("K1", Priority.INFO, "BPG 9.2.6", k, a.line,
                           f"constant read {a.array}[{a.index}] reads {d:g} distinct addresses per warp (serialized)",
                           "index __constant__ memory with warp-uniform values; use global/shared memory for "
                           "per-thread tables", 1.0 - 1.0 / d, "share of constant-cache cycles serialized",
                           [Evidence(Layer.MODEL, "distinct_addresses", d)])


@rule(id="D1", name="divergent-branch", priority=Priority.HIGH, section="BPG 12.1", layers="S M P L")
def divergence(ctx: Any) -> Iterator[Finding]:
    """What it does
    Evaluates a branch condition for the 32 lanes of each warp of the representative block and flags
    it when some warp has lanes on both sides.

    Why it matters
    A warp executes both sides of a split branch one after the other with part of its lanes idle, so
    the divergent region runs at a fraction of the warp's throughput.

    Example
    ``if (threadIdx.x % 2 == 0) a(); else b();`` splits every warp in two.

    Fix
    Make the condition uniform per warp, e.g. ``if ((threadIdx.x / warpSize) % 2 == 0)``, or re-map
    work so threads that take the same side are in the same warps.
    """
    for k in _kernels(ctx):
        for b in k.branches:
            if b.divergent:
                share = (b.divergent_warps / b.warps) if b.warps else None
                yield _finding("D1", Priority.HIGH, "BPG 12.1", k, b.line,
                               f"branch `{b.condition}` splits {b.divergent_warps} of {b.warps} warps "
                               "(representative blocks)",
                               "make the condition uniform across each warp, e.g. depend on threadIdx.x / 32",
                               share, "share of warps that diverge",
                               [Evidence(Layer.MODEL, "divergent_warps", b.divergent_warps),
                                Evidence(Layer.MODEL, "block", k.block_dims)])
