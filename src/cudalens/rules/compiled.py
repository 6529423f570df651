"""C-layer rules: what the compiled code (ptxas resources, SASS) shows about each kernel.

Every rule reads ``ctx.compiled`` (kernel name -> cudalens.compiled.CompiledKernel) and, for the
occupancy rules, the launch configuration (cudalens.compiled.launch.launch_config). A kernel
without compiled facts, or a launch whose block size is unknown, yields nothing.
"""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.compiled.launch import launch_config, occupancy, occupancy_block, register_steps
from cudalens.findings import Evidence, Finding, Layer, Priority
from cudalens.rules.registry import RULES, rule

#: I6: this many MUFU instructions (besides those of integer division) count as transcendental-heavy.
MUFU_HEAVY = 8
#: L3: a register cliff is this many registers per thread away or closer.
CLIFF_DISTANCE = 2
#: E1: theoretical occupancy below this is flagged.
LOW_OCCUPANCY = 0.5
#: G6: fewer arithmetic instructions than this per global load/store marks a memory-bound kernel.
MEMORY_BOUND_MATH_PER_ACCESS = 4


def _kernels(ctx: Any) -> Iterator[tuple[str, Any]]:
    for name, k in sorted((ctx.compiled or {}).items()):
        if hasattr(k, "resources") and hasattr(k, "sass_counts"):
            yield name, k


def _kernel_line(ctx: Any, name: str) -> int | None:
    for k in getattr(ctx.source, "kernels", ()) or ():
        if k.name == name:
            return k.line
    return None


def _finding(rule_id: str, ctx: Any, name: str, line: int | None, message: str, fix: str,
             facts: tuple[tuple[str, Any], ...] = (), impact: float | None = None,
             impact_text: str | None = None) -> Finding:
    spec = RULES[rule_id]
    return Finding(
        rule=rule_id, priority=spec.priority, section=spec.section, kernel=name,
        file=getattr(ctx.source, "path", "") if ctx.source is not None else "",
        line=line if line is not None else _kernel_line(ctx, name),
        message=message, fix=fix, impact=impact, impact_text=impact_text,
        evidence=tuple(Evidence(Layer.COMPILED, f, v) for f, v in facts),
    )


def _busiest_line(k: Any, *classes: str) -> int | None:
    lines = k.lines_with(*classes)
    return max(lines, key=lambda ln: (lines[ln], -ln)) if lines else None


def _occ(ctx: Any, name: str, k: Any):
    cfg = launch_config(name, ctx.source, ctx.launch)
    if cfg is None or cfg.threads_per_block <= 0:
        return None, None
    return cfg, occupancy(k, ctx.cc, cfg.threads_per_block, cfg.dynamic_smem)


@rule(id="L1", name="local-memory", priority=Priority.INFO, section="BPG 9.2.4, PG 5.3.2", layers="S C")
def local_memory(ctx: Any) -> Iterator[Finding]:
    """What it does
    Reports kernels whose compiled code uses local memory: a stack frame, register spills, or
    LDL/STL instructions, with the source line that issues most of them.

    Why it matters
    Local memory is private per thread but lives in device memory: each LDL/STL goes through the
    caches to DRAM with global-memory latency. It appears when a per-thread array is indexed with
    values the compiler cannot resolve at compile time, or when the kernel needs more registers
    than it may use and ptxas spills.

    Example
        float hist[16];
        for (int k = 0; k < 32; ++k) hist[idx[k] & 15] += v;   // run-time index -> stack

    Fix
    Index per-thread arrays only with compile-time constants (fully unrolled loops), keep such
    tables in shared memory instead, or relieve register pressure so nothing spills.
    """
    for name, k in _kernels(ctx):
        r = k.resources
        ldl_stl = k.count("ldl", "stl")
        if r.local_bytes == 0 and r.spill_stores == 0 and r.spill_loads == 0 and ldl_stl == 0:
            continue
        what = []
        if r.local_bytes:
            what.append(f"{r.local_bytes} B stack frame per thread")
        if r.spill_stores or r.spill_loads:
            what.append(f"{r.spill_stores} B spill stores / {r.spill_loads} B spill loads")
        if ldl_stl:
            what.append(f"{ldl_stl} LDL/STL instructions")
        cause = "register spills" if (r.spill_stores or r.spill_loads) else "a dynamically indexed per-thread array"
        yield _finding(
            "L1", ctx, name, _busiest_line(k, "ldl", "stl"),
            f"kernel {name} uses local memory ({', '.join(what)}), most likely from {cause}",
            "index per-thread arrays with compile-time constants (unrolled loops) or move them to "
            "shared memory; reduce register pressure if ptxas spills",
            facts=(("local_bytes", r.local_bytes), ("spill_stores", r.spill_stores),
                   ("spill_loads", r.spill_loads), ("ldl_stl", ldl_stl)),
        )


@rule(id="L2", name="register-pressure", priority=Priority.INFO, section="BPG 9.2.7.1, 10.1", layers="C M L")
def register_pressure(ctx: Any) -> Iterator[Finding]:
    """What it does
    At the kernel's launch configuration, reports when registers per thread are what limits the
    resident blocks per SM to below 50 % occupancy, and how many registers would allow one more block.

    Why it matters
    The register file is shared by all resident threads. A kernel that needs many registers per
    thread leaves room for fewer blocks, so fewer warps are available to hide latency.

    Example
        many_accumulators<<<1024, 256>>>(...);   // 78 registers -> 3 blocks of 256 threads per SM

    Fix
    Cap the registers with ``__launch_bounds__(threads, minBlocksPerSM)`` (per kernel) or
    ``-maxrregcount=N`` (per file), then check that ptxas does not start to spill (rule L1) and
    measure: more occupancy is not always faster.
    """
    for name, k in _kernels(ctx):
        cfg, occ = _occ(ctx, name, k)
        if occ is None or "registers" not in occ.limiters or occ.occupancy >= LOW_OCCUPANCY:
            continue
        step = register_steps(k, ctx.cc, cfg.threads_per_block, cfg.dynamic_smem)
        if step is None or step.fewer_registers is None:
            continue
        yield _finding(
            "L2", ctx, name, None,
            f"kernel {name}: {k.resources.registers} registers per thread limit it to "
            f"{occ.active_blocks_per_sm} blocks of {cfg.threads_per_block} threads per SM "
            f"({occ.occupancy:.0%} occupancy); at {step.fewer_registers} registers "
            f"{step.blocks_with_fewer} blocks fit",
            f"add __launch_bounds__({cfg.threads_per_block}, {step.blocks_with_fewer}) to the kernel "
            f"or compile with -maxrregcount={step.fewer_registers}, then check for spills and measure",
            facts=(("registers", k.resources.registers), ("occupancy", occupancy_block(occ)),
                   ("registers_for_next_step", step.fewer_registers),
                   ("blocks_at_next_step", step.blocks_with_fewer)),
            impact=1.0 - occ.occupancy, impact_text="share of warp slots left empty",
        )


@rule(id="L3", name="register-cliff", priority=Priority.INFO, section="PG 5.2.3, BPG 10.1.1", layers="M")
def register_cliff(ctx: Any) -> Iterator[Finding]:
    """What it does
    Reports kernels that sit just below a register cliff: a couple more registers per thread
    (a small code change, another compiler version) would lower the resident blocks per SM.

    Why it matters
    Registers are allocated per warp in fixed units, and blocks are resident whole, so occupancy
    falls in steps. A kernel at the edge of a step can lose a large share of its warps from one
    extra register, with no visible change in its source.

    Example
        // 64 registers, 256 threads: 4 blocks per SM; at 65 registers only 3 fit.

    Fix
    Pin the budget with ``__launch_bounds__`` so the compiler keeps under the cliff, or choose a
    block size whose steps are farther away; re-check after compiler upgrades.
    """
    for name, k in _kernels(ctx):
        cfg, occ = _occ(ctx, name, k)
        if occ is None or occ.active_blocks_per_sm == 0:
            continue
        step = register_steps(k, ctx.cc, cfg.threads_per_block, cfg.dynamic_smem)
        if step is None or step.more_registers is None:
            continue
        distance = step.more_registers - step.registers
        if distance > CLIFF_DISTANCE:
            continue
        lost = 1.0 - step.blocks_with_more / step.blocks
        yield _finding(
            "L3", ctx, name, None,
            f"kernel {name} is {distance} register(s) below a cliff: at {step.more_registers} "
            f"registers per thread the SM holds {step.blocks_with_more} instead of {step.blocks} "
            f"blocks of {cfg.threads_per_block} threads",
            f"pin the budget with __launch_bounds__({cfg.threads_per_block}, {step.blocks}) so a "
            "later change cannot push it over",
            facts=(("registers", step.registers), ("cliff_at_registers", step.more_registers),
                   ("blocks_now", step.blocks), ("blocks_past_cliff", step.blocks_with_more)),
            impact=lost, impact_text="share of resident blocks lost past the cliff",
        )


@rule(id="G4", name="split-narrow-loads", priority=Priority.INFO, section="PG 5.3.2", layers="S C")
def split_narrow_loads(ctx: Any) -> Iterator[Finding]:
    """What it does
    Finds source lines whose global accesses compile to several 8- or 16-bit loads/stores, the
    signature of a struct whose size or alignment is not 1, 2, 4, 8 or 16 bytes.

    Why it matters
    The hardware loads naturally aligned words of 1, 2, 4, 8 or 16 bytes in one instruction. A
    3-byte struct is read member by member: three instructions and three memory requests where
    one would do.

    Example
        struct Rgb { unsigned char r, g, b; };            // 3 bytes -> 3 x LDG.E.U8

    Fix
    Pad and align the type: ``struct __align__(4) Rgba { unsigned char r, g, b, a; };`` (one
    32-bit load), or use the built-in vector types (uchar4, float4).
    """
    for name, k in _kernels(ctx):
        for line, counts in sorted(k.sass_by_line.items()):
            narrow = sum(counts.get(c, 0) for c in ("ldg.8", "ldg.16", "stg.8", "stg.16"))
            wide = sum(v for c, v in counts.items() if c.startswith(("ldg.", "stg.")) and c.split(".")[1] in ("64", "128", "256"))
            if narrow >= 2 and wide == 0:
                yield _finding(
                    "G4", ctx, name, line,
                    f"line {line} of {name} reads or writes global memory in {narrow} separate "
                    "8/16-bit accesses (a struct not sized/aligned to a power of two?)",
                    "align the element type with __align__(4/8/16) and pad it to that size, or use a "
                    "vector type (uchar4, short4, float4)",
                    facts=(("narrow_global_accesses", narrow), ("line_counts", counts)),
                )


@rule(id="G6", name="scalar-memory-access", priority=Priority.INFO, section="PG 5.3.2", layers="C")
def scalar_memory_access(ctx: Any) -> Iterator[Finding]:
    """What it does
    Reports memory-bound-looking kernels (few arithmetic instructions per global access) whose
    global loads and stores are all 32 bits wide or narrower.

    Why it matters
    Each load instruction moves at most one word per thread. Wider accesses (64 or 128 bits)
    move the same bytes with a half or a quarter of the instructions, which helps kernels whose
    time is spent issuing memory operations. (A heuristic: without measurements cudalens reads
    "memory-bound" from the instruction mix; a profile or the roofline rules settle it.)

    Example
        b[i] = a[i];                       // LDG.E / STG.E: 4 bytes per instruction

    Fix
    Use vector types when the data is suitably aligned: ``reinterpret_cast<const float4*>(a)[i]``
    (LDG.E.128), with a scalar loop for the remainder.
    """
    for name, k in _kernels(ctx):
        accesses = {c: v for c, v in k.sass_counts.items() if c.startswith(("ldg.", "stg."))}
        total = sum(accesses.values())
        if total == 0 or any(int(c.split(".")[1]) > 32 for c in accesses):
            continue
        math = k.count("fp32", "fp16", "fp64", "mufu")
        if math >= MEMORY_BOUND_MATH_PER_ACCESS * total:
            continue
        yield _finding(
            "G6", ctx, name, None,
            f"kernel {name} looks memory-bound ({math} arithmetic instructions for {total} global "
            "accesses) and every global access is 32 bits or narrower",
            "load and store 8 or 16 bytes per thread (float2/float4, int4) where alignment allows",
            facts=(("global_access_widths", accesses), ("arithmetic_instructions", math)),
        )


@rule(id="I6", name="accurate-math-slow-paths", priority=Priority.MEDIUM, section="BPG 11.1.6, PG 5.4", layers="S C L")
def accurate_math(ctx: Any) -> Iterator[Finding]:
    """What it does
    Reports kernels whose SASS shows the cost of full-precision math: calls to the accurate
    slow paths (division, square root), FP64 work inside single-precision math functions
    (the large-argument reduction of sinf/cosf), or many MUFU instructions.

    Why it matters
    ``sinf``, ``expf``, ``/`` and ``sqrtf`` are correctly rounded (or nearly so) at the price of
    extra instructions and branches; the intrinsics ``__sinf``, ``__expf``, ``__fdividef`` and
    ``rsqrtf`` map onto single MUFU operations. Where precision allows, the difference can dominate
    a math-heavy kernel.

    Example
        b[i] = sinf(a[i]) * expf(a[i]) / sqrtf(a[i] + 1.0f);

    Fix
    Use the intrinsics where their accuracy is enough (``__sinf``, ``__expf``, ``__fdividef``,
    ``rsqrtf``), or compile with ``-use_fast_math``; measure the accuracy you give up. A kernel
    where a more specific rewrite rule (I3, I5, I8, I9, I10) fired is left to that rule.
    """
    from cudalens.rules.fast_math import lines_with_specific_rewrites  # noqa: PLC0415

    rewritten = lines_with_specific_rewrites(ctx)
    spans = {k.name: (k.line, k.end_line) for k in getattr(ctx.source, "kernels", ())}
    for name, k in _kernels(ctx):
        if "-use_fast_math" in k.flags or "--use_fast_math" in k.flags:
            continue
        lo, hi = spans.get(name, (0, -1))
        if any(lo <= line <= hi for line in rewritten):
            continue  # a specific rewrite (I3, I5, I8, I9, I10) of the kernel's math comes first
        slow = k.count("slowpath_call")
        mufu = max(0, k.count("mufu") - k.count("int_div"))
        fp64 = k.count("fp64", "f2f")
        if slow == 0 and mufu < MUFU_HEAVY and not (fp64 and mufu):
            continue
        yield _finding(
            "I6", ctx, name, _busiest_line(k, "mufu", "slowpath_call"),
            f"kernel {name} runs full-precision math: {slow} slow-path call(s), {mufu} MUFU "
            f"instruction(s), {fp64} FP64/F2F instruction(s) from math functions",
            "use __sinf/__expf/__fdividef/rsqrtf (or -use_fast_math) where the accuracy suffices",
            facts=(("slowpath_calls", slow), ("mufu", mufu), ("fp64_f2f", fp64)),
        )


@rule(id="I12", name="integer-division", priority=Priority.INFO, section="PG 5.4.1", layers="C")
def integer_division(ctx: Any) -> Iterator[Finding]:
    """What it does
    Finds integer division and modulo by values unknown at compile time in the SASS (the
    reciprocal sequence starting with I2F.RP, or a call to the 64-bit division subroutine).

    Why it matters
    GPUs have no integer divide instruction: a 32-bit ``a / b`` becomes about twenty instructions,
    a 64-bit one a subroutine call. Division by a compile-time constant is cheap (a multiply-high)
    and by a power of two is a shift.

    Example
        b[i] = a[i] / buckets + a[i] % buckets;    // buckets is a kernel argument

    Fix
    Make the divisor a compile-time constant (template parameter), use a power of two with
    ``>>`` and ``&``, or precompute a reciprocal/magic number on the host.
    """
    for name, k in _kernels(ctx):
        n = k.count("int_div")
        if n == 0:
            continue
        lines = k.lines_with("int_div")
        for line in sorted(lines) or [None]:
            count = lines.get(line, n) if line is not None else n
            yield _finding(
                "I12", ctx, name, line,
                f"{count} integer division/modulo sequence(s) by a run-time divisor in {name}",
                "divide by a compile-time constant or a power of two (shift and mask), or hoist a "
                "precomputed reciprocal",
                facts=(("int_div_sequences", count),),
            )


@rule(id="I16", name="precision-flags", priority=Priority.INFO, section="PG 5.4.1, BPG 19", layers="C")
def precision_flags(ctx: Any) -> Iterator[Finding]:
    """What it does
    Notes kernels that run IEEE-accurate single-precision division or square root (slow-path
    calls in SASS) while compiled without ``-ftz=true``, ``-prec-div=false`` or
    ``-prec-sqrt=false`` (or ``-use_fast_math``, which implies all three).

    Why it matters
    By default nvcc compiles ``/`` and ``sqrtf`` to correctly rounded sequences and keeps
    denormals. The three flags trade that accuracy for shorter code; whether that is acceptable
    is the author's call, so this is information, not a defect.

    Example
        nvcc -arch=sm_90 k.cu                      // x / y -> call to the division slow path

    Fix
    If the accuracy is not needed, add ``-ftz=true -prec-div=false -prec-sqrt=false`` (or
    ``-use_fast_math``) and measure the effect.
    """
    for name, k in _kernels(ctx):
        flags = set(k.flags)
        if flags & {"-use_fast_math", "--use_fast_math"}:
            continue
        missing = [f for f in ("-ftz=true", "-prec-div=false", "-prec-sqrt=false") if f not in flags]
        slow = k.count("slowpath_call")
        if not missing or slow == 0:
            continue
        yield _finding(
            "I16", ctx, name, _busiest_line(k, "slowpath_call"),
            f"kernel {name} calls {slow} accurate division/square-root slow path(s); compiled "
            f"without {', '.join(missing)}",
            f"if the accuracy is not needed, compile with {' '.join(missing)} (or -use_fast_math)",
            facts=(("slowpath_calls", slow), ("missing_flags", missing)),
        )


@rule(id="E1", name="low-occupancy", priority=Priority.INFO, section="BPG 10.1, PG 5.2.3", layers="M C P")
def low_occupancy(ctx: Any) -> Iterator[Finding]:
    """What it does
    Computes the theoretical occupancy of each kernel at its launch configuration from its
    compiled resources, and reports it when it is below 50 %, naming the limiting resource.

    Why it matters
    Latency is hidden by switching among resident warps. Too few resident warps per SM leave the
    schedulers idle while loads are in flight (unless the kernel has much instruction-level
    parallelism of its own).

    Example
        big_tile<<<grid, 128>>>(...);   // 48 KB shared memory per block: 4 blocks, 16 of 64 warps

    Fix
    Relieve the limiter the finding names: fewer registers (L2), less shared memory per block
    (SH6), larger blocks when the block-count limit binds; then measure.
    """
    for name, k in _kernels(ctx):
        cfg, occ = _occ(ctx, name, k)
        if occ is None or occ.occupancy >= LOW_OCCUPANCY:
            continue
        limiters = sorted(occ.limiters)
        yield _finding(
            "E1", ctx, name, None,
            f"kernel {name}: theoretical occupancy {occ.occupancy:.0%} "
            f"({occ.active_blocks_per_sm} blocks, {occ.active_warps_per_sm} warps per SM at "
            f"{cfg.threads_per_block} threads per block), limited by {', '.join(limiters) or 'nothing'}",
            f"relieve the limiter ({', '.join(limiters)}) or confirm by measurement that occupancy "
            "does not matter for this kernel",
            facts=(("occupancy", occupancy_block(occ)), ("launch", cfg.origin)),
            impact=1.0 - occ.occupancy / LOW_OCCUPANCY, impact_text="shortfall below 50% occupancy",
        )


@rule(id="SH6", name="shared-memory-limits-occupancy", priority=Priority.INFO, section="BPG 10.4", layers="M L")
def shared_memory_limit(ctx: Any) -> Iterator[Finding]:
    """What it does
    Reports kernels whose resident blocks per SM are limited by shared memory (static from the
    cubin plus the launch's dynamic shared memory, plus the per-block reserve).

    Why it matters
    Shared memory per SM is fixed; a block that takes a large share of it keeps other blocks off
    the SM even when registers and warp slots are free.

    Example
        __shared__ float tile[12288];   // 48 KB: 4 blocks per SM on CC 9.0, 16 warps of 64

    Fix
    Use smaller tiles, reuse buffers across phases, move read-only tables to constant memory, or
    raise the shared-memory carveout; larger blocks sharing one tile also help.
    """
    for name, k in _kernels(ctx):
        cfg, occ = _occ(ctx, name, k)
        if occ is None or "shared_memory" not in occ.limiters or occ.occupancy >= 1.0:
            continue
        total = k.resources.static_shared_bytes + cfg.dynamic_smem
        yield _finding(
            "SH6", ctx, name, None,
            f"kernel {name}: {total} B shared memory per block limits the SM to "
            f"{occ.active_blocks_per_sm} blocks ({occ.occupancy:.0%} occupancy)",
            "shrink or reuse the shared-memory tiles, or raise the carveout "
            "(cudaFuncAttributePreferredSharedMemoryCarveout)",
            facts=(("static_shared_bytes", k.resources.static_shared_bytes),
                   ("dynamic_shared_bytes", cfg.dynamic_smem), ("occupancy", occupancy_block(occ))),
            impact=1.0 - occ.occupancy, impact_text="share of warp slots left empty",
        )


@rule(id="Y3", name="fatbinary-targets", priority=Priority.INFO, section="BPG 14.3, 16.3", layers="C")
def fatbinary_targets(ctx: Any) -> Iterator[Finding]:
    """What it does
    Reads what a built executable or object carries (``cuobjdump --list-elf/--list-ptx``) and
    checks it against the target compute capability: is there SASS the device runs natively,
    and PTX for devices newer than any SASS?

    Why it matters
    Without matching SASS the driver JIT-compiles PTX at first launch (slow start-up, and code
    generated by the driver's compiler, not the one you tested); without PTX a newer GPU cannot
    run the program at all.

    Example
        nvcc -gencode arch=compute_80,code=sm_80 app.cu      // no sm_90 SASS, no PTX

    Fix
    Build SASS for each target and keep PTX of the newest:
    ``-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90``.
    """
    binary = getattr(ctx, "binary", None)
    if binary is None:
        return
    path = getattr(binary, "path", "")

    def make(message: str, fix: str) -> Finding:
        spec = RULES["Y3"]
        return Finding(rule="Y3", priority=spec.priority, section=spec.section, kernel=None, file=path,
                       line=None, message=message, fix=fix,
                       evidence=(Evidence(Layer.COMPILED, "fatbinary", binary.to_dict()),))

    major, minor = ctx.cc.split(".")
    arch = f"{major}{minor}"
    gencode = f"-gencode arch=compute_{arch},code=sm_{arch}"
    if not binary.runs_natively_on(ctx.cc):
        jit = binary.jit_possible_on(ctx.cc)
        yield make(
            f"{path} has no SASS for CC {ctx.cc} (SASS: {binary.to_dict()['cubin'] or 'none'}); "
            + ("the driver will JIT-compile its PTX at start-up" if jit else "and no usable PTX: it cannot run there"),
            f"add {gencode}",
        )
    if not binary.ptx_archs:
        yield make(
            f"{path} carries no PTX: GPUs newer than its SASS targets cannot run it",
            f"keep PTX of the newest target: -gencode arch=compute_{arch},code=compute_{arch}",
        )
