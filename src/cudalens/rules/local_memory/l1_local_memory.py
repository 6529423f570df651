"""L1: Avoid local memory (spills, dynamically indexed arrays)."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding, Layer
from cudalens.rules._compiled import busiest_line, compiled_kernels, line_or_kernel
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import Confirmation, rule

_TRIG = frozenset({"sin", "cos", "tan", "sincos", "sinf", "cosf", "tanf", "sincosf"})


@rule(
    "L1",
    name="local-memory",
    layers="S C",
    confirmed_by=Confirmation(("ldl", "stl"), "local memory loads/stores (LDL/STL)", stack_frame=True),
)
def local_memory(ctx: RuleContext) -> Iterator[Finding]:
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
    for name, k in compiled_kernels(ctx):
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
        fix = ("index per-thread arrays with compile-time constants (unrolled loops) or move them to "
               "shared memory; reduce register pressure if ptxas spills")
        src_kernel = next((sk for sk in ctx.source.kernels if sk.name == name), None)
        local_arrays = [a for a in getattr(src_kernel, "arrays", ()) if a.space == "local"]
        trig = sorted({c.name for c in getattr(src_kernel, "calls", ()) if c.name in _TRIG})
        if cause != "register spills" and trig and not local_arrays:
            # no per-thread array in the source: the frame is the math library's argument reduction
            cause = f"the slow path of {', '.join(trig)} for large arguments (I11)"
            fix = ("keep arguments small (reduce them into [-pi, pi] first), use sinpif/cospif (I10), or the "
                   "__sinf/__cosf intrinsics where their accuracy suffices (I6)")
        yield ctx.finding(
            line_or_kernel(ctx, name, busiest_line(k, "ldl", "stl")),
            f"kernel {name} uses local memory ({', '.join(what)}), most likely from {cause}",
            fix,
            kernel=name,
            layer=Layer.COMPILED,
            facts=(
                ("local_bytes", r.local_bytes),
                ("spill_stores", r.spill_stores),
                ("spill_loads", r.spill_loads),
                ("ldl_stl", ldl_stl),
            ),
        )
