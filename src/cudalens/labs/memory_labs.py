"""Memory labs: coalescing (offset, stride), shared-memory matrix products, constant memory,
local memory. Each lab = measure (drives a runner) + verdict (pure) + predictions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from cudalens.labs.core import (
    GuideFigure,
    KernelPair,
    Lab,
    Measured,
    PlotSpec,
    Row,
    Verdict,
    bandwidth_gbps,
    fmt_x,
    median,
    pick,
    ratio,
    undecided,
)
from cudalens.labs.predict import (
    ANALYZER_MISSING,
    ANALYZER_MODEL,
    analyzer_facts,
    analyzer_summary,
    analyzer_value,
    offset_sectors,
    pair_rows,
    pvm,
    stride_sectors,
)

BLOCK = 256

OFFSET_PAIRS = (KernelPair("copy_misaligned", "copy_aligned", "G2"),)
STRIDE_PAIRS = (KernelPair("copy_stride2", "copy_aligned", "G3"),)
AB_PAIRS = (KernelPair("ab_simple", "ab_tile_ab", "SH2"),)
AAT_PAIRS = (KernelPair("aat_simple", "aat_padded", "SH3"), KernelPair("aat_shared", "aat_padded", "SH1"))
CONST_PAIRS = (KernelPair("const_divergent", "const_uniform", "K1"),)
LOCAL_PAIRS = (KernelPair("local_dynamic", "local_registers", "L1"),)


# ---- 1. coalescing-offset -------------------------------------------------------------------

def measure_offset(runner: Any, quick: bool) -> Measured:
    n = (8 if quick else 32) * 2**20
    k = runner.kernel("coalescing.cu", "offset_copy")
    src = runner.alloc((n + 64) * 4)
    dst = runner.alloc((n + 64) * 4)
    rows = []
    for off in range(33):
        t = runner.time_kernel(k, n // BLOCK, BLOCK, (dst, src, np.int32(off)))
        rows.append({"offset_words": off, "time_ms": t.ms,
                     "bandwidth_GBps": bandwidth_gbps(2 * n * 4, t.ms)})
    return Measured(tuple(rows), {"elements": n, "bytes_moved": 2 * n * 4, "block": BLOCK})


def verdict_offset(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    aligned = [r["bandwidth_GBps"] for r in rows if r["offset_words"] % 8 == 0]
    shifted = [r["bandwidth_GBps"] for r in rows if r["offset_words"] % 8 != 0]
    if not aligned or not shifted:
        return undecided("needs aligned and misaligned offsets")
    r = ratio(median(shifted), median(aligned))
    ratios = {"misaligned_over_aligned": r, "model_without_cache": 4 / 5}
    if r < 0.97:
        return Verdict(True, f"misaligned copies reach {r:.2f} of the aligned bandwidth "
                             f"(sector model 0.80, guide on V100 about 4/5)", ratios)
    return Verdict(False, f"misaligned copies reach {r:.2f} of the aligned bandwidth: the extra "
                          "sector per warp is the neighbour warp's sector and is served from L1/L2, "
                          "so DRAM traffic hardly grows on this GPU (the model's 0.80 assumes no reuse)",
                   ratios)


def _predict_sweep(rows: Sequence[Row], key: str, base_value: int, kernel: str,
                   model: Callable[[int], int], pairs: Any, aliases: dict[str, dict[str, int]]) -> tuple[Row, ...]:
    """Sector model and analyzer next to the measured bandwidth, for each point of a copy sweep
    (``key`` = offset_words or stride_words), then the file's bad/good pair rows."""
    base = pick(rows, **{key: base_value})
    param = key.split("_")[0]  # offset_words -> the kernel parameter "offset"
    out = []
    for r in rows:
        v = r[key]
        facts = analyzer_facts("coalescing.cu", (BLOCK, 1, 1), {param: v})
        m = model(v)
        out.append({key: v, "model_sectors_per_request": m,
                    "analyzer_sectors_per_request": analyzer_value(facts, kernel, "sectors_per_request"),
                    "model_relative_bandwidth": 4 / m,
                    "measured_relative_bandwidth": ratio(r["bandwidth_GBps"], base["bandwidth_GBps"]) if base else None})
    return tuple(out) + tuple(pair_rows("coalescing.cu", pairs, rows, aliases=aliases))


def predict_offset(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    # the sweep's offset 1 and 0 stand for the file's misaligned/aligned pair
    return _predict_sweep(rows, "offset_words", 0, "offset_copy", offset_sectors, OFFSET_PAIRS,
                          {"copy_misaligned": {"offset_words": 1}, "copy_aligned": {"offset_words": 0}})


# ---- 2. coalescing-stride -------------------------------------------------------------------

def measure_stride(runner: Any, quick: bool) -> Measured:
    threads = (1 if quick else 4) * 2**20
    strides = (1, 2, 4, 8, 16, 32) if quick else tuple(range(1, 33))
    k = runner.kernel("coalescing.cu", "stride_copy")
    src = runner.alloc(threads * 32 * 4)
    dst = runner.alloc(threads * 32 * 4)
    rows = []
    for s in strides:
        t = runner.time_kernel(k, threads // BLOCK, BLOCK, (dst, src, np.int32(s)))
        rows.append({"stride_words": s, "time_ms": t.ms,
                     "bandwidth_GBps": bandwidth_gbps(2 * threads * 4, t.ms)})
    return Measured(tuple(rows), {"threads": threads, "useful_bytes": 2 * threads * 4, "block": BLOCK},
                    ("bandwidth counts useful bytes only (one float read and one written per thread)",))


def verdict_stride(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    b1, b2 = pick(rows, stride_words=1), pick(rows, stride_words=2)
    worst = max(rows, key=lambda r: r["stride_words"]) if rows else None
    if b1 is None or b2 is None or worst is None or worst is b1:
        return undecided("needs strides 1, 2 and a large stride")
    r2 = ratio(b2["bandwidth_GBps"], b1["bandwidth_GBps"])
    rw = ratio(worst["bandwidth_GBps"], b1["bandwidth_GBps"])
    sw = worst["stride_words"]
    model_w = 4 / stride_sectors(sw)
    ratios = {"stride2_over_stride1": r2, "model_stride2": 0.5,
              f"stride{sw}_over_stride1": rw, f"model_stride{sw}": model_w}
    holds = r2 < 0.8 and rw < 0.5
    text = (f"stride 2 keeps {r2:.2f} of the unit-stride bandwidth (model 0.50); stride {sw} keeps "
            f"{rw:.3f} (model {model_w:.3f})")
    if not holds:
        text += ": the loss is smaller than the sector model predicts on this GPU"
    return Verdict(holds, text, ratios)


def predict_stride(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    return _predict_sweep(rows, "stride_words", 1, "stride_copy", stride_sectors, STRIDE_PAIRS,
                          {"copy_stride2": {"stride_words": 2}, "copy_aligned": {"stride_words": 1}})


# ---- 3. matmul-shared and 4. transpose-bank-conflicts ------------------------------------------

TILE = 32
AB_GUIDE = {"ab_simple": 119.9, "ab_tile_a": 144.4, "ab_tile_ab": 195.5}
AAT_GUIDE = {"aat_simple": 12.8, "aat_shared": 140.2, "aat_padded": 199.4}


def _variants_table(runner: Any, names: Sequence[str], grid: tuple[int, int], args: tuple,
                    nbytes: int, guide: Mapping[str, float]) -> list[dict]:
    rows = []
    base = None
    for name in names:
        k = runner.kernel("matmul.cu", name)
        t = runner.time_kernel(k, grid, (TILE, TILE), args)
        bw = bandwidth_gbps(nbytes, t.ms)
        base = base or bw
        g0 = guide[names[0]]
        rows.append({"variant": name, "time_ms": t.ms, "bandwidth_GBps": bw,
                     "speedup_vs_first": ratio(bw, base), "guide_v100_GBps": guide[name],
                     "guide_v100_speedup": guide[name] / g0})
    return rows


def measure_matmul(runner: Any, quick: bool) -> Measured:
    m = n = 2048 if quick else 4096
    a, b, c = runner.alloc(m * TILE * 4), runner.alloc(TILE * n * 4), runner.alloc(m * n * 4)
    nbytes = 4 * (m * TILE + TILE * n + m * n)
    rows = _variants_table(runner, list(AB_GUIDE), (n // TILE, m // TILE), (a, b, c, np.int32(n)),
                           nbytes, AB_GUIDE)
    return Measured(tuple(rows), {"M": m, "N": n, "w": TILE, "bytes_counted": nbytes},
                    ("effective bandwidth = (A + B read once + C written) / time, as in the guide",))


def measure_aat(runner: Any, quick: bool) -> Measured:
    m = 2048 if quick else 4096
    a, c = runner.alloc(m * TILE * 4), runner.alloc(m * m * 4)
    nbytes = 4 * (m * TILE + m * m)
    rows = _variants_table(runner, list(AAT_GUIDE), (m // TILE, m // TILE), (a, c, np.int32(m)),
                           nbytes, AAT_GUIDE)
    return Measured(tuple(rows), {"M": m, "w": TILE, "bytes_counted": nbytes},
                    ("effective bandwidth = (A read once + C written) / time, as in the guide",))


def _speedups(rows: Sequence[Row], first: str, second: str) -> tuple[float, float]:
    a, b = pick(rows, variant=first), pick(rows, variant=second)
    if a is None or b is None:
        return float("nan"), float("nan")
    return ratio(b["bandwidth_GBps"], a["bandwidth_GBps"]), ratio(b["guide_v100_GBps"], a["guide_v100_GBps"])


def verdict_matmul(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    s_ab, g_ab = _speedups(rows, "ab_simple", "ab_tile_ab")
    s_a, g_a = _speedups(rows, "ab_simple", "ab_tile_a")
    if s_ab != s_ab:
        return undecided("missing variants")
    holds = s_ab > 1.1
    text = (f"both tiles in shared memory: {fmt_x(s_ab)} the unoptimized bandwidth (guide V100 {fmt_x(g_ab)}); "
            f"A tile only: {fmt_x(s_a)} (guide {fmt_x(g_a)})")
    if not holds:
        text += "; here the redundant loads of B mostly hit in L1/L2, so staging them saves little"
    return Verdict(holds, text, {"tile_ab_over_simple": s_ab, "guide_tile_ab_over_simple": g_ab,
                                 "tile_a_over_simple": s_a, "guide_tile_a_over_simple": g_a})


def verdict_aat(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    s_sh, g_sh = _speedups(rows, "aat_simple", "aat_shared")
    s_pad, g_pad = _speedups(rows, "aat_shared", "aat_padded")
    if s_sh != s_sh or s_pad != s_pad:
        return undecided("missing variants")
    sh3, sh1 = s_sh > 1.1, s_pad > 1.05
    text = (f"SH3 coalescing through shared memory: {fmt_x(s_sh)} (guide V100 {fmt_x(g_sh)}) - "
            f"{'holds' if sh3 else 'does not hold here'}; SH1 padding the tile: {fmt_x(s_pad)} "
            f"(guide {fmt_x(g_pad)}) - {'holds' if sh1 else 'does not hold here'}")
    return Verdict(sh3 and sh1, text, {"shared_over_simple": s_sh, "guide_shared_over_simple": g_sh,
                                       "padded_over_shared": s_pad, "guide_padded_over_shared": g_pad})


def _predict_variants(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    defines = {k: params[k] for k in ("M", "N") if k in params}
    facts = analyzer_facts("matmul.cu", (TILE, TILE, 1), defines)
    out = []
    for r in rows:
        v = r["variant"]
        out.append({"variant": v,
                    "analyzer_worst_sectors_per_request": analyzer_value(facts, v, "sectors_per_request"),
                    "analyzer_worst_bank_conflict_ways": analyzer_value(facts, v, "bank_conflict_ways"),
                    "analyzer_patterns": analyzer_value(facts, v, "patterns"),
                    "measured_bandwidth_GBps": r["bandwidth_GBps"],
                    "note": "" if facts is not None else ANALYZER_MISSING()})
    names = {r["variant"] for r in rows}
    pairs = AB_PAIRS if "ab_simple" in names else AAT_PAIRS if "aat_simple" in names else ()
    return tuple(out) + tuple(pair_rows("matmul.cu", pairs, rows, block=(TILE, TILE, 1)))


# ---- 19. constant-memory --------------------------------------------------------------------

def measure_constant(runner: Any, quick: bool) -> Measured:
    info = runner.info
    threads = info.sm_count * 2048
    iters = 256 if quick else 1024
    k = runner.kernel("constant.cu", "const_read")
    out = runner.alloc(threads * 4)
    rows = []
    for spread in (1, 2, 4, 8, 16, 32):
        t = runner.time_kernel(k, threads // BLOCK, BLOCK, (out, np.int32(iters), np.int32(spread)))
        reads = threads * iters
        rows.append({"distinct_addresses_per_warp": spread, "time_ms": t.ms,
                     "reads_per_ns": reads / (t.ms * 1e6)})
    return Measured(tuple(rows), {"threads": threads, "iterations": iters})


def verdict_constant(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    one, many = pick(rows, distinct_addresses_per_warp=1), pick(rows, distinct_addresses_per_warp=32)
    if one is None or many is None:
        return undecided("needs 1 and 32 distinct addresses")
    slow = ratio(many["time_ms"], one["time_ms"])
    holds = slow > 2.0
    text = (f"32 distinct constant addresses per warp take {fmt_x(slow, 1)} the time of a uniform read "
            "(serialization model: up to 32x; the loop's other instructions dilute it)")
    return Verdict(holds, text, {"divergent32_over_uniform_time": slow})


def predict_constant(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """Serialization model: n distinct addresses in a warp cost n constant-cache reads, so time
    relative to the uniform read is n (up to 32x; the loop's other work makes the measured ratio
    smaller). Plus the analyzer's verdict on the const_divergent/const_uniform pair."""
    one = pick(rows, distinct_addresses_per_warp=1)
    out = [pvm("time relative to 1 distinct address per warp", "serialization: n addresses -> n reads",
               float(r["distinct_addresses_per_warp"]),
               ratio(r["time_ms"], one["time_ms"]) if one else None,
               "" if one else "no uniform (1-address) row to compare with",
               distinct_addresses_per_warp=r["distinct_addresses_per_warp"]) for r in rows]
    aliases = {"const_divergent": {"distinct_addresses_per_warp": 32},
               "const_uniform": {"distinct_addresses_per_warp": 1}}
    return tuple(out) + tuple(pair_rows("constant.cu", CONST_PAIRS, rows, aliases=aliases))


# ---- 20. local-memory -----------------------------------------------------------------------

def measure_local(runner: Any, quick: bool) -> Measured:
    threads = runner.info.sm_count * 1024
    iters = 64 if quick else 256
    out = runner.alloc(threads * 4)
    rows = []
    for name in ("local_dynamic", "local_registers"):
        k = runner.kernel("localmem.cu", name)
        ki = runner.kernel_info(k)
        t = runner.time_kernel(k, threads // BLOCK, BLOCK, (out, np.int32(32), np.int32(iters)))
        rows.append({"variant": name, "time_ms": t.ms, "registers": ki.registers,
                     "local_bytes_per_thread": ki.local_bytes})
    return Measured(tuple(rows), {"threads": threads, "iterations": iters, "array_words": 32})


def verdict_local(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    dyn, reg = pick(rows, variant="local_dynamic"), pick(rows, variant="local_registers")
    if dyn is None or reg is None:
        return undecided("missing variants")
    slow = ratio(dyn["time_ms"], reg["time_ms"])
    holds = slow > 1.2 and dyn["local_bytes_per_thread"] > 0
    text = (f"the dynamically indexed array uses {dyn['local_bytes_per_thread']} B of local memory per "
            f"thread (the unrolled one {reg['local_bytes_per_thread']} B) and takes {fmt_x(slow)} the time")
    return Verdict(holds, text, {"local_over_registers_time": slow})


def predict_local(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """The analyzer's compiled stack frame (ptxas local bytes) per kernel vs the driver's
    local_bytes_per_thread, and the L1 verdict on the pair vs the measured time ratio."""
    s = analyzer_summary("localmem.cu", (BLOCK, 1, 1))
    local = dict(s.local_bytes)
    out = [pvm("local memory bytes per thread", ANALYZER_MODEL + ": compiled stack frame",
               local.get(r["variant"]), r["local_bytes_per_thread"],
               s.error or ("" if r["variant"] in local else "kernel not in the compiled output"),
               variant=r["variant"]) for r in rows]
    return tuple(out) + tuple(pair_rows("localmem.cu", LOCAL_PAIRS, rows, summary=s))


LABS = (
    Lab(1, "coalescing-offset", "Misaligned sequential copies", ("G2", "G1"), "BPG 9.2.1.3",
        "A copy whose start is shifted by an offset that is not a multiple of 32 bytes touches one "
        "more 32-byte sector per warp (5 instead of 4), so its bandwidth should drop toward 4/5.",
        "coalescing.cu", measure_offset, verdict_offset,
        PlotSpec("offset_words", "bandwidth_GBps", title="Copy with offset"),
        (GuideFigure("aligned copy bandwidth (offset 0 or multiple of 8 words)", 790, "GB/s", "BPG 9.2.1.3"),),
        OFFSET_PAIRS, predict=predict_offset),
    Lab(2, "coalescing-stride", "Strided copies", ("G3", "G1"), "BPG 9.2.1.4",
        "With stride k between the elements of neighbouring threads a warp touches min(4k, 32) "
        "sectors for the same useful bytes: the useful bandwidth falls like 1/k.",
        "coalescing.cu", measure_stride, verdict_stride,
        PlotSpec("stride_words", "bandwidth_GBps", title="Strided copy"), (),
        STRIDE_PAIRS, predict=predict_stride),
    Lab(3, "matmul-shared", "C = AB with shared-memory tiles", ("SH2", "G8"), "BPG 9.2.3.2",
        "Staging the tiles of A and B in shared memory removes redundant global loads: each element "
        "of B is fetched once per block instead of once per warp.",
        "matmul.cu", measure_matmul, verdict_matmul,
        PlotSpec("variant", "bandwidth_GBps", kind="bar", title="C = AB"),
        tuple(GuideFigure(f"{k} effective bandwidth", v, "GB/s", "BPG 9.2.3.2") for k, v in AB_GUIDE.items()),
        AB_PAIRS, predict=_predict_variants),
    Lab(4, "transpose-bank-conflicts", "C = AA^T: strided reads, shared tiles, padding", ("SH3", "SH1"),
        "BPG 9.2.3.3",
        "Reading A^T straight from global memory is a stride-32 access; a coalesced load into a "
        "transposed shared tile fixes it but writes the tile with a 32-way bank conflict, which "
        "one padding column removes.",
        "matmul.cu", measure_aat, verdict_aat,
        PlotSpec("variant", "bandwidth_GBps", kind="bar", title="C = AA^T"),
        tuple(GuideFigure(f"{k} effective bandwidth", v, "GB/s", "BPG 9.2.3.3") for k, v in AAT_GUIDE.items()),
        AAT_PAIRS, predict=_predict_variants),
    Lab(19, "constant-memory", "Uniform vs divergent constant-memory reads", ("K1",), "BPG 9.2.6",
        "Constant memory serves one address per warp at a time: reads of one address are broadcast, "
        "n distinct addresses are serialized into n reads.",
        "constant.cu", measure_constant, verdict_constant,
        PlotSpec("distinct_addresses_per_warp", "time_ms", logx=True, title="Constant memory"), (),
        CONST_PAIRS, predict=predict_constant),
    Lab(20, "local-memory", "Dynamically indexed array vs registers", ("L1",), "BPG 9.2.4",
        "A per-thread array indexed by values the compiler cannot resolve goes to local memory, "
        "which lives off chip; with constant indices it stays in registers.",
        "localmem.cu", measure_local, verdict_local,
        PlotSpec("variant", "time_ms", kind="bar", title="Local memory"), (),
        LOCAL_PAIRS, predict=predict_local),
)
