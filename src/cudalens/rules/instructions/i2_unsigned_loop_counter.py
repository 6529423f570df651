"""I2: Signed loop counters."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

_UNSIGNED_TYPES = {"size_t", "uint32_t", "uint64_t", "unsigned", "uint", "uint16_t", "uint8_t"}


def _is_unsigned(type_text: str) -> bool:
    words = type_text.replace("const", " ").split()
    return "unsigned" in words or any(w in _UNSIGNED_TYPES for w in words)


def _fully_unrolled(ctx: RuleContext, kernel: str, loop: Any) -> bool:
    """The compiler unrolled ``loop`` completely: the compiled code (with line info) has no branch
    on its line; without compiled code, ``#pragma unroll`` (no count, or one covering the trips)
    precedes a loop whose trip count the source states."""
    line = syn.line(loop)
    ck = (ctx.compiled or {}).get(kernel)
    by_line = getattr(ck, "sass_by_line", None) or {}
    if by_line:
        return not (by_line.get(line) or {}).get("branch")
    prev = loop.prev_named_sibling
    text = syn.text(prev).strip() if prev is not None else ""
    if not text.startswith("#pragma unroll"):
        return False
    from cudalens.source.trips import trip_count

    k = next((k for k in ctx.source.kernels if k.name == kernel), None)
    lp = next((lp for lp in (k.loops if k else ()) if lp.line == line), None)
    if lp is None:
        return False
    trips, basis = trip_count(lp, ctx.source.defines)
    count = text[len("#pragma unroll"):].strip()
    return basis == "literal" and trips is not None and (not count or (count.isdigit() and int(count) >= trips))


def _constant_trips(ctx: RuleContext, loop: Any) -> bool:
    """The loop's trip count is a compile-time constant (literal or ``#define``d start, bound and
    step): the compiler knows the counter never wraps, whatever its signedness."""
    from types import SimpleNamespace

    from cudalens.source.trips import trip_count

    init, cond, upd = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or upd is None:
        return False
    start = syn.text(init).split("=", 1)[-1].strip().rstrip(";") if "=" in syn.text(init) else None
    spec = SimpleNamespace(start=start, condition=syn.text(cond).strip("() ;"), step=syn.text(upd))
    return trip_count(spec, ctx.source.defines)[1] == "literal"


@rule("I2", name="unsigned-loop-counter", layers="S")
def unsigned_loop_counter(ctx: RuleContext) -> Iterator[Finding]:
    """Loop counter of an unsigned type in device code.

    What it does:
        Flags `for` loops in device code whose induction variable is declared in the loop header
        with an unsigned type (`unsigned`, `unsigned int`, `size_t`, `uint32_t`, ...).

    Why it matters:
        Unsigned overflow is defined to wrap around in C++, so the compiler must keep the wrap-around
        possible and gives up optimizations such as strength reduction of the index arithmetic.
        Signed overflow is undefined, which lets the compiler assume the counter never wraps and
        optimize more aggressively.

    Example:
        ```cuda
        for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
        ```

    Loops whose trip count is a compile-time constant (``for (unsigned i = 0; i < 16; ++i)``) or
    that the compiler unrolled are not reported: the count is known, so wrap-around cannot matter.

    Fix:
        ```cuda
        for (int i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        for n in syn.nodes_of(fn.body, "for_statement"):
            if n.type != "for_statement":
                continue
            init = n.child_by_field_name("initializer")
            if init is None or init.type != "declaration":
                continue
            ty = syn.text(init.child_by_field_name("type"))
            if not _is_unsigned(ty):
                continue
            if _fully_unrolled(ctx, fn.name, n) or _constant_trips(ctx, n):
                continue  # unrolled, or the compiler knows the trip count: wrap-around cannot matter
            names = [name for name, _ in syn.declared_names(init)]
            yield ctx.finding(
                syn.line(n),
                f"loop counter `{', '.join(names)}` is `{ty}`: defined wrap-around blocks loop optimizations",
                "declare the counter as `int` (or `long long` when the range needs it)",
                kernel=fn.name,
                facts=(("induction_type", ty),),
            )
