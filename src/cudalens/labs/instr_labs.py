"""Instruction labs: fast intrinsics and the trig slow path, math-function rewrites, integer ops."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cudalens.labs.core import KernelPair, Lab, Measured, PlotSpec, Row, Verdict, fmt_x, pick, ratio, undecided
from cudalens.labs.predict import pair_rows

INTRINSIC_PAIRS = (KernelPair("sin_accurate", "sin_intrinsic", "I6"),)
INTOPS_PAIRS = (KernelPair("divmod_var", "shift_mask", "I1"), KernelPair("loop_unsigned", "loop_signed", "I2"))


def predict_intrinsics(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """The analyzer's I6 verdict on sin_accurate/sin_intrinsic vs sinf/__sinf time (small arguments)."""
    aliases = {"sin_accurate": {"function": "sinf", "arguments": "small"},
               "sin_intrinsic": {"function": "__sinf", "arguments": "small"}}
    return tuple(pair_rows("intrinsics.cu", INTRINSIC_PAIRS, rows, aliases=aliases))


def predict_math(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """The analyzer's verdict on each slow/fast pair vs the measured time ratio."""
    return tuple(pair_rows("mathfuncs.cu", MATH_KERNEL_PAIRS, rows))


def predict_intops(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """The analyzer's I1/I2 verdicts vs the measured time ratios."""
    return tuple(pair_rows("intops.cu", INTOPS_PAIRS, rows))

BLOCK = 256


def _threads(runner: Any) -> int:
    return runner.info.sm_count * 2048


# ---- 12. math-intrinsics --------------------------------------------------------------------

SMALL = (0.0, 1.0e-5)      # arguments in [0, ~pi]: the fast path of sinf
LARGE = (2.0e5, 1.0e-2)    # arguments above 105615: sinf's slow path (PG 5.4.1)


def measure_intrinsics(runner: Any, quick: bool) -> Measured:
    threads = _threads(runner)
    iters = 64 if quick else 256
    out = runner.alloc(threads * 4)
    plan = (
        ("sinf", "sin_accurate", False, SMALL, "small"),
        ("__sinf", "sin_intrinsic", False, SMALL, "small"),
        ("sinf -use_fast_math", "sin_accurate", True, SMALL, "small"),
        ("sinf", "sin_accurate", False, LARGE, "large"),
        ("__sinf", "sin_intrinsic", False, LARGE, "large"),
        ("expf", "exp_accurate", False, (-10.0, 1.0e-6), "small"),
        ("__expf", "exp_intrinsic", False, (-10.0, 1.0e-6), "small"),
    )
    rows = []
    for label, name, fast, (base, step), rng in plan:
        k = runner.kernel("intrinsics.cu", name, fast_math=fast)
        t = runner.time_kernel(k, threads // BLOCK, BLOCK,
                               (out, np.float32(base), np.float32(step), np.int32(iters)))
        rows.append({"function": label, "arguments": rng, "time_ms": t.ms,
                     "G_evaluations_per_s": threads * iters / (t.ms * 1e-3) / 1e9})
    return Measured(tuple(rows), {"threads": threads, "iterations": iters,
                                  "small_arguments": "0 .. ~3", "large_arguments": "2e5 and up"})


def _t(rows: Sequence[Row], f: str, a: str) -> float | None:
    r = pick(rows, function=f, arguments=a)
    return r["time_ms"] if r else None


def verdict_intrinsics(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    s_small, i_small = _t(rows, "sinf", "small"), _t(rows, "__sinf", "small")
    s_large = _t(rows, "sinf", "large")
    e, ie = _t(rows, "expf", "small"), _t(rows, "__expf", "small")
    if None in (s_small, i_small, s_large):
        return undecided("missing rows")
    r_sin = ratio(s_small, i_small)
    r_slow = ratio(s_large, s_small)
    ratios = {"sinf_over___sinf": r_sin, "sinf_large_over_small_args": r_slow}
    text = f"__sinf is {fmt_x(r_sin)} faster than sinf; sinf on large arguments is {fmt_x(r_slow)} slower (slow path)"
    if e and ie:
        ratios["expf_over___expf"] = ratio(e, ie)
        text += f"; __expf is {fmt_x(ratios['expf_over___expf'])} faster than expf"
    fm = _t(rows, "sinf -use_fast_math", "small")
    if fm:
        ratios["fast_math_sinf_over___sinf"] = ratio(fm, i_small)
        text += f"; sinf under -use_fast_math runs at {fmt_x(ratios['fast_math_sinf_over___sinf'])} the __sinf time"
    return Verdict(r_sin > 1.2 and r_slow > 2.0, text, ratios)


# ---- 13. math-functions ---------------------------------------------------------------------

MATH_PAIRS = (
    ("I8", "pow_square", "square_mul", "powf(x, 2) vs x*x"),
    ("I5", "pow_third", "cbrt_call", "powf(x, 1/3) vs cbrtf"),
    ("I9", "pow_base2", "exp2_call", "powf(2, x) vs exp2f"),
    ("I10", "sin_of_pi_x", "sinpi_call", "sinf(pi*x) vs sinpif"),
    ("I7", "sin_plus_cos", "sincos_call", "sinf + cosf vs sincosf"),
    ("I3", "recip_sqrt", "rsqrt_call", "1/sqrtf vs rsqrtf"),
)
MATH_KERNEL_PAIRS = tuple(KernelPair(slow, fast, rule) for rule, slow, fast, _ in MATH_PAIRS)


def measure_math(runner: Any, quick: bool) -> Measured:
    threads = _threads(runner)
    iters = 64 if quick else 256
    out = runner.alloc(threads * 4)
    rows = []
    for rule, slow, fast, what in MATH_PAIRS:
        for variant, name in (("as often written", slow), ("recommended", fast)):
            k = runner.kernel("mathfuncs.cu", name)
            t = runner.time_kernel(k, threads // BLOCK, BLOCK,
                                   (out, np.float32(1.0), np.float32(1.0e-6), np.int32(iters)))
            rows.append({"rule": rule, "pair": what, "variant": variant, "kernel": name, "time_ms": t.ms})
    return Measured(tuple(rows), {"threads": threads, "iterations": iters})


def verdict_math(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    ratios: dict[str, float] = {}
    parts = []
    for rule, slow, fast, what in MATH_PAIRS:
        a, b = pick(rows, kernel=slow), pick(rows, kernel=fast)
        if a is None or b is None:
            continue
        s = ratio(a["time_ms"], b["time_ms"])
        ratios[f"{rule}_speedup"] = s
        parts.append(f"{rule} {what}: {fmt_x(s)}" + (" (compiler already equivalent)" if s < 1.05 else ""))
    if not ratios:
        return undecided("no pairs measured")
    wins = sum(1 for v in ratios.values() if v > 1.05)
    return Verdict(wins >= len(ratios) / 2, f"{wins} of {len(ratios)} rewrites are faster here; " + "; ".join(parts),
                   ratios)


# ---- 14. integer-ops ------------------------------------------------------------------------

def measure_intops(runner: Any, quick: bool) -> Measured:
    threads = _threads(runner)
    iters = 128 if quick else 512
    out = runner.alloc(threads * 4)
    rows = []
    for name, label in (("divmod_var", "i / n and i % n"), ("shift_mask", "i >> log2(n) and i & (n-1)")):
        k = runner.kernel("intops.cu", name)
        t = runner.time_kernel(k, threads // BLOCK, BLOCK, (out, np.int32(6), np.int32(iters)))
        rows.append({"rule": "I1", "kernel": name, "variant": label, "time_ms": t.ms})
    # I2: one block per SM (8 warps), so the loop is bound by memory latency and by how many loads
    # each thread keeps in flight. That is where the counter's type shows: nvcc 13 unrolls the
    # signed loop 16 times with a running pointer, the unsigned one 4 times with a 32-bit index
    # recomputed and widened per load. With a full GPU of warps both loops are DRAM-bound and equal.
    loop_threads = runner.info.sm_count * BLOCK
    loop_n = 64 if quick else 512
    data = runner.alloc(loop_threads * loop_n * 4 + 4096)
    for name, label, ctype in (("loop_unsigned", "unsigned counter", np.uint32), ("loop_signed", "signed counter", np.int32)):
        k = runner.kernel("intops.cu", name)
        t = runner.time_kernel(k, loop_threads // BLOCK, BLOCK, (out, data, ctype(loop_n), ctype(loop_threads)))
        rows.append({"rule": "I2", "kernel": name, "variant": label, "time_ms": t.ms})
    return Measured(tuple(rows), {"threads": threads, "iterations": iters, "divisor": 64, "loop_trips": loop_n,
                                  "loop_threads": loop_threads})


def verdict_intops(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    d, s = pick(rows, kernel="divmod_var"), pick(rows, kernel="shift_mask")
    u, i = pick(rows, kernel="loop_unsigned"), pick(rows, kernel="loop_signed")
    if d is None or s is None:
        return undecided("missing rows")
    r1 = ratio(d["time_ms"], s["time_ms"])
    ratios = {"I1_divmod_over_shiftmask_time": r1}
    text = f"I1: division/modulo by a run-time power of two takes {fmt_x(r1)} the time of shift/mask"
    if u and i:
        r2 = ratio(u["time_ms"], i["time_ms"])
        ratios["I2_unsigned_over_signed_time"] = r2
        text += f"; I2: the unsigned loop counter takes {fmt_x(r2)} the time of the signed one"
        if abs(r2 - 1) < 0.05:
            text += " (no measurable difference for this loop on this GPU)"
    return Verdict(r1 > 1.2, text, ratios)


LABS = (
    Lab(12, "math-intrinsics", "Accurate functions vs fast intrinsics; the trig slow path", ("I6", "I11"),
        "BPG 11.1.6, PG 5.4.1",
        "__sinf/__expf (or -use_fast_math) are much faster than sinf/expf at lower accuracy; sinf "
        "with large arguments (above about 105615) takes a much slower reduction path.",
        "intrinsics.cu", measure_intrinsics, verdict_intrinsics,
        PlotSpec("function", "time_ms", series="arguments", kind="bar", title="Intrinsics"), (),
        INTRINSIC_PAIRS, predict=predict_intrinsics),
    Lab(13, "math-functions", "Cheaper forms of common math", ("I3", "I5", "I7", "I8", "I9", "I10"),
        "BPG 11.1.3-11.1.6",
        "x*x beats pow(x, 2), cbrt beats pow(x, 1/3), exp2 beats pow(2, x), sinpi beats sin(pi*x), "
        "sincos computes both at once, rsqrt beats 1/sqrt.",
        "mathfuncs.cu", measure_math, verdict_math,
        PlotSpec("kernel", "time_ms", series="variant", kind="bar", title="Math functions"), (),
        MATH_KERNEL_PAIRS, predict=predict_math),
    Lab(14, "integer-ops", "Division vs shift; signed vs unsigned loop counters", ("I1", "I2"),
        "BPG 11.1.1-11.1.2",
        "Integer division and modulo cost many instructions; with a power-of-two divisor a shift and "
        "a mask do the same. Signed loop counters let the compiler optimize more than unsigned ones.",
        "intops.cu", measure_intops, verdict_intops,
        PlotSpec("kernel", "time_ms", series="rule", kind="bar", title="Integer operations"), (),
        INTOPS_PAIRS, predict=predict_intops),
)
