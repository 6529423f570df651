"""Execution configuration and synchronization patterns (BPG 10.1, 10.3, 9.2.3.2; PG 5.4.3).

Launch-site rules read ``SourceModel.launch_sites``: a block or grid size is judged only where the
front end established it (a literal, a ``dim3`` of literals, a ``#define``); otherwise nothing is
said.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules import _syntax as syn
from cudalens.rules._common import finding, kernel_nodes
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

_BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}


def _threads(dims: tuple[int, int, int] | None) -> int | None:
    return None if dims is None else dims[0] * dims[1] * dims[2]


@rule(id="E2", name="block-not-multiple-of-warp", priority=Priority.MEDIUM, section="BPG 10.3", layers="S M")
def check_e2(ctx: Any) -> Iterator[Finding]:
    """Thread block size that is not a multiple of 32.

    What it does:
        Flags launch sites whose block size (x·y·z, when the front end can establish it) is not a
        multiple of the warp size, 32. The impact is the share of lanes in the block's warps that
        carry no thread.

    Why it matters:
        The GPU schedules whole warps of 32 threads. A block of 48 threads occupies two warps, and
        the second runs with half its lanes idle: that throughput, and the warp slots and
        registers of the empty lanes, are wasted on every block.

    Example:
        ```cuda
        scale<<<(n + 99) / 100, 100>>>(x, n);   // 4 warps, 28 idle lanes
        ```

    Fix:
        ```cuda
        scale<<<(n + 127) / 128, 128>>>(x, n);
        ```
    """
    src = ctx.source
    for site in src.launch_sites:
        t = _threads(site.block_dims)
        if not t or t % 32 == 0:
            continue
        warps = math.ceil(t / 32)
        idle = warps * 32 - t
        yield finding(
            "E2", src, site.line,
            f"`{site.kernel}` is launched with {t} threads per block ({site.block_dims[0]}x"
            f"{site.block_dims[1]}x{site.block_dims[2]}): {warps} warps with {idle} idle lanes",
            f"use a multiple of 32 threads per block (e.g. {warps * 32}) and guard the tail in the kernel",
            kernel=site.kernel, impact=idle / (warps * 32), impact_text="share of warp lanes without a thread",
            facts=(("block_threads", t), ("idle_lanes", idle)),
        )


@rule(id="E3", name="block-below-64-threads", priority=Priority.INFO, section="BPG 10.3", layers="S M")
def check_e3(ctx: Any) -> Iterator[Finding]:
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
        t = _threads(site.block_dims)
        if not t or t >= 64:
            continue
        yield finding(
            "E3", src, site.line,
            f"`{site.kernel}` is launched with {t} threads per block: the per-SM block limit caps"
            " the resident warps far below the SM's capacity",
            "use at least 64 threads per block; 128 to 256 is a good start",
            kernel=site.kernel, facts=(("block_threads", t),),
        )


def _sm_count(ctx: Any) -> tuple[str, int] | None:
    meas = getattr(ctx, "measurement", None) or {}
    device = meas.get("device") if isinstance(meas, dict) else None
    sms = getattr(device, "multiprocessor_count", None) or (meas.get("sm_count") if isinstance(meas, dict) else None)
    if sms:
        return (str(getattr(device, "name", "the measured device")), int(sms))
    return REFERENCE_SMS.get(str(getattr(ctx, "cc", "")))


@rule(id="E4", name="grid-smaller-than-sm-count", priority=Priority.INFO, section="BPG 10.3", layers="S M")
def check_e4(ctx: Any) -> Iterator[Finding]:
    """Grids with fewer blocks than the GPU has SMs.

    What it does:
        Flags launch sites whose grid size is established (a literal or constant `dim3`) and is
        smaller than the SM count of the target: the measured device when one was queried,
        otherwise a representative part of the target compute capability (e.g. 132 SMs of an
        H100 SXM for 9.0). Grids computed from the problem size are not judged.

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
        blocks = _threads(site.grid_dims)
        if not blocks or blocks >= sms:
            continue
        yield finding(
            "E4", src, site.line,
            f"`{site.kernel}` is launched with {blocks} blocks, fewer than the {sms} SMs of {device}:"
            f" at least {sms - blocks} SMs stay idle, and more on future GPUs",
            "size the grid from the problem (or from the SM count queried at run time, several blocks per SM)",
            kernel=site.kernel, impact=1 - blocks / sms, impact_text=f"share of the {sms} SMs without a block",
            facts=(("grid_blocks", blocks), ("sm_count", sms), ("device", device)),
        )


@rule(id="E6", name="kernel-without-launch-bounds", priority=Priority.INFO, section="BPG 10.1", layers="S")
def check_e6(ctx: Any) -> Iterator[Finding]:
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
        blocks = {_threads(s.block_dims) for s in src.launch_sites if s.kernel == k.name}
        blocks.discard(None)
        hint = f"__launch_bounds__({max(blocks)})" if blocks else "__launch_bounds__(<largest block>)"
        yield finding(
            "E6", src, k.line,
            f"kernel `{k.name}` has no __launch_bounds__: register allocation cannot take its block size into account",
            f"add `{hint}` to the kernel declaration",
            kernel=k.name, facts=(("launch_bounds", None),),
        )


# ----------------------------------------------------------------------------- barriers


def _barriers(node: Any) -> list[Any]:
    return [c for c in syn.calls(node) if syn.call_name(c) in _BARRIERS]


@rule(id="I18", name="barrier-in-loop", priority=Priority.INFO, section="PG 5.4.3", layers="S")
def check_i18(ctx: Any) -> Iterator[Finding]:
    """`__syncthreads()` executed on every iteration of a loop.

    What it does:
        Reports each innermost loop of a kernel that contains a block-wide barrier
        (`__syncthreads` and its `_count/_and/_or` forms), with the number of barriers per
        iteration. Informational: many of these barriers are necessary; the point is to count them.

    Why it matters:
        A barrier makes every warp of the block wait for the slowest one, and while warps wait
        the SM has fewer warps to switch between. A loop multiplies that cost. Common ways to drop
        barriers: finish the last five steps of a reduction with warp shuffles (no barrier),
        double-buffer shared tiles so one barrier per iteration suffices, or use `__syncwarp()`
        where only one warp shares the data.

    Example:
        ```cuda
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) buf[tid] += buf[tid + s];
            __syncthreads();
        }
        ```

    Fix:
        ```cuda
        for (int s = blockDim.x / 2; s >= 32; s >>= 1) { ...; __syncthreads(); }
        if (tid < 32) { float v = buf[tid]; for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(~0u, v, o); }
        ```
    """
    src = ctx.source
    for k, node in kernel_nodes(src):
        per_loop: dict[int, list[Any]] = {}
        loops: dict[int, Any] = {}
        for b in _barriers(node):
            enclosing = syn.enclosing_loops(b)
            if not enclosing:
                continue
            loop = enclosing[0]
            per_loop.setdefault(loop.start_byte, []).append(b)
            loops[loop.start_byte] = loop
        for start in sorted(per_loop):
            loop, bs = loops[start], per_loop[start]
            yield finding(
                "I18", src, syn.line(loop),
                f"the loop at line {syn.line(loop)} of `{k.name}` runs {len(bs)} block-wide barrier(s) per"
                f" iteration (line(s) {', '.join(str(syn.line(b)) for b in bs)})",
                "keep only the barriers the data flow needs: warp shuffles for the last 32 elements,"
                " double buffering, or __syncwarp() where one warp shares the data",
                kernel=k.name, facts=(("barriers_per_iteration", len(bs)),),
            )


def _tid_names(body: Any) -> set[str]:
    """Variables set to `threadIdx.x` (possibly with `+ 0`), plus `threadIdx.x` itself."""
    out = {"threadIdx.x"}
    for n in syn.nodes_of(body, "declaration"):
        if n.type == "declaration":
            for name, value in syn.declared_names(n):
                if value is not None and syn.norm(value) == "threadIdx.x":
                    out.add(name)
    return out


def _single_warp_guard(barrier: Any, tids: set[str]) -> Any | None:
    """The enclosing `if (tid < N)` with N <= 32, if any."""
    for a in syn.ancestors(barrier):
        if a.type == "function_definition":
            return None
        if a.type != "if_statement":
            continue
        cond = a.child_by_field_name("condition")
        cond = syn.strip_parens(cond.named_children[0] if cond is not None and cond.type == "condition_clause"
                                and cond.named_children else cond)
        if cond is None or cond.type != "binary_expression":
            continue
        op = syn.text(cond.child_by_field_name("operator"))
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        bound = syn.const_eval(right)
        if syn.norm(left) in tids and bound is not None and (
                (op == "<" and bound.value <= 32) or (op == "<=" and bound.value <= 31)):
            # the barrier must sit in the then-branch
            cons = a.child_by_field_name("consequence")
            if cons is not None and syn.contains(cons, barrier):
                return a
    return None


@rule(id="SH5", name="block-barrier-for-one-warp", priority=Priority.INFO, section="BPG 9.2.3.2", layers="S")
def check_sh5(ctx: Any) -> Iterator[Finding]:
    """`__syncthreads()` where only one warp shares the data.

    What it does:
        Flags block-wide barriers that order memory between the threads of a single warp:
        (a) every barrier of a kernel whose blocks are at most 32 threads (all launch sites with an
        established block size, or `__launch_bounds__`, say so); (b) a barrier inside
        `if (threadIdx.x < N)` with N <= 32 (or a variable set to `threadIdx.x`). In case (b) the
        barrier is also reached by only part of the block, which the programming model leaves
        undefined.

    Why it matters:
        When the writer and the reader of a shared-memory value are in the same warp, `__syncwarp()`
        orders their accesses; a block-wide barrier makes the whole block wait for nothing. Inside
        a branch taken by one warp, `__syncthreads()` may hang or silently not synchronize.

    Example:
        ```cuda
        if (tid < 32) { buf[tid] += buf[tid + 16]; __syncthreads(); buf[tid] += buf[tid + 8]; }
        ```

    Fix:
        ```cuda
        if (tid < 32) { buf[tid] += buf[tid + 16]; __syncwarp(); buf[tid] += buf[tid + 8]; }
        ```
    """
    src = ctx.source
    for k, node in kernel_nodes(src):
        barriers = _barriers(node)
        if not barriers:
            continue
        sizes = [_threads(s.block_dims) for s in src.launch_sites if s.kernel == k.name]
        known = [t for t in sizes if t]
        one_warp_block = (bool(known) and len(known) == len(sizes) and max(known) <= 32) or (
            bool(k.launch_bounds) and k.launch_bounds[0] <= 32)
        tids = _tid_names(node)
        for b in barriers:
            if one_warp_block:
                yield finding(
                    "SH5", src, syn.line(b),
                    f"`{k.name}` runs with blocks of at most 32 threads (one warp), so `{syn.text(b)}`"
                    " synchronizes a single warp",
                    "use __syncwarp()",
                    kernel=k.name, facts=(("block_threads_max", max(known) if known else k.launch_bounds[0]),),
                )
                continue
            guard = _single_warp_guard(b, tids)
            if guard is not None:
                cond = syn.text(guard.child_by_field_name("condition"))
                yield finding(
                    "SH5", src, syn.line(b),
                    f"`{syn.text(b)}` sits under `if {cond}` (line {syn.line(guard)}): only one warp reaches it,"
                    " so it orders memory within that warp and leaves the block's other warps out",
                    "use __syncwarp() for the warp-level steps (or warp shuffles); keep block-wide barriers"
                    " outside divergent code",
                    kernel=k.name, facts=(("guard", cond),),
                )
