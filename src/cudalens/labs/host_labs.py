"""Host-side labs: pinned memory, batching, overlap with streams, zero copy, allocation cost;
and the CC >= 8.0 labs: L2 persistence and asynchronous global-to-shared copies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cudalens.labs.core import (
    GuideFigure,
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
from cudalens.labs.predict import pvm

MB = 2**20
PCIE_GEN5_X16_GBPS = 63.0  # theoretical per direction, used when the params give no link data


# ---- 5. pinned-transfer ---------------------------------------------------------------------

def measure_pinned(runner: Any, quick: bool) -> Measured:
    sizes = (64 * 1024, MB, 16 * MB, 64 * MB) if quick else (64 * 1024, 256 * 1024, MB, 4 * MB, 16 * MB, 64 * MB, 256 * MB)
    rows = []
    for direction in ("h2d", "d2h"):
        for pinned in (False, True):
            for size in sizes:
                t = runner.time_copies(direction, size, pinned)
                rows.append({"direction": direction, "memory": "pinned" if pinned else "pageable",
                             "bytes": size, "time_ms": t.ms, "bandwidth_GBps": bandwidth_gbps(size, t.ms)})
    return Measured(tuple(rows), {"sizes_bytes": list(sizes)})


def verdict_pinned(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    ratios = {}
    for d in ("h2d", "d2h"):
        big = max((r["bytes"] for r in rows if r["direction"] == d), default=None)
        p, q = pick(rows, direction=d, memory="pinned", bytes=big), pick(rows, direction=d, memory="pageable", bytes=big)
        if p and q:
            ratios[f"{d}_pinned_over_pageable"] = ratio(p["bandwidth_GBps"], q["bandwidth_GBps"])
    if not ratios:
        return undecided("missing rows")
    holds = all(v > 1.1 for v in ratios.values())
    return Verdict(holds, "at the largest size pinned memory moves data " + ", ".join(
        f"{k.split('_')[0].upper()} {fmt_x(v)}" for k, v in ratios.items()) + " as fast as pageable memory", ratios)


# ---- 6. batch-transfers ---------------------------------------------------------------------

def measure_batch(runner: Any, quick: bool) -> Measured:
    total = 16 * MB
    rows = []
    for chunks in ((1, 16, 256, 1024) if quick else (1, 4, 16, 64, 256, 1024, 4096)):
        t = runner.time_copies("h2d", total, True, chunks)
        rows.append({"copies": chunks, "bytes_per_copy": total // chunks, "time_ms": t.ms,
                     "bandwidth_GBps": bandwidth_gbps(total, t.ms), "us_per_copy": t.ms * 1e3 / chunks})
    return Measured(tuple(rows), {"total_bytes": total, "memory": "pinned", "direction": "h2d"})


def verdict_batch(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    one = pick(rows, copies=1)
    many = max(rows, key=lambda r: r["copies"]) if rows else None
    if one is None or many is None or many is one:
        return undecided("needs one copy and many")
    r = ratio(many["time_ms"], one["time_ms"])
    return Verdict(r > 1.5, f"moving {params.get('total_bytes', 0) / 1e6:.1f} MB as {many['copies']} copies of "
                            f"{many['bytes_per_copy']} B takes {fmt_x(r)} the time of one copy "
                            f"(about {many['us_per_copy']:.1f} us per copy)", {"many_over_one_time": r})


# ---- 7. overlap-streams ---------------------------------------------------------------------

def measure_overlap(runner: Any, quick: bool) -> Measured:
    nbytes = (64 if quick else 256) * MB
    k = runner.kernel("transfer.cu", "chunk_work")
    t_copy = runner.time_copies("h2d", nbytes, True).ms
    # calibrate the kernel so that its time is close to the copy time
    probe_iters = 64
    n = nbytes // 4
    data = runner.alloc(nbytes)
    probe = runner.time_kernel(k, (n + 255) // 256, 256, (data, np.int64(0), np.int64(n), np.int32(probe_iters))).ms
    iters = int(max(1, min(100000, probe_iters * t_copy / max(probe, 1e-6))))
    t_exec = runner.time_kernel(k, (n + 255) // 256, 256, (data, np.int64(0), np.int64(n), np.int32(iters))).ms
    rows = [{"streams": 0, "mode": "sequential", "time_ms": runner.time_staged(k, nbytes, 0, iters, 256).ms,
             "model_ms": t_copy + t_exec}]
    for s in ((1, 2, 4, 8) if quick else (1, 2, 3, 4, 5, 6, 7, 8)):
        model = t_exec + t_copy / s if t_exec >= t_copy else t_copy + t_exec / s
        rows.append({"streams": s, "mode": "staged", "time_ms": runner.time_staged(k, nbytes, s, iters, 256).ms,
                     "model_ms": model})
    return Measured(tuple(rows), {"bytes": nbytes, "tT_ms": t_copy, "tE_ms": t_exec, "kernel_iterations": iters})


def verdict_overlap(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    seq = pick(rows, mode="sequential")
    staged = [r for r in rows if r["mode"] == "staged"]
    if seq is None or not staged:
        return undecided("missing rows")
    best = min(staged, key=lambda r: r["time_ms"])
    s = ratio(seq["time_ms"], best["time_ms"])
    err = median([abs(r["time_ms"] - r["model_ms"]) / r["model_ms"] for r in staged if r["model_ms"]])
    return Verdict(s > 1.3, f"staging over {best['streams']} streams is {fmt_x(s)} faster than copy-then-execute; "
                            f"the model tE + tT/nStreams is off by {err * 100:.0f} % (median)",
                   {"sequential_over_best_staged": s, "model_median_relative_error": err})


# ---- 8. zero-copy ---------------------------------------------------------------------------

def measure_zero_copy(runner: Any, quick: bool) -> Measured:
    k = runner.kernel("transfer.cu", "read_once")
    rows = []
    for size in ((16 * MB, 64 * MB) if quick else (MB, 16 * MB, 64 * MB, 256 * MB)):
        for mapped in (False, True):
            t = runner.time_zero_copy(k, size, mapped, 256)
            rows.append({"bytes": size, "mode": "mapped (zero-copy)" if mapped else "explicit copy + kernel",
                         "time_ms": t.ms, "bandwidth_GBps": bandwidth_gbps(size, t.ms)})
    return Measured(tuple(rows), {"integrated": runner.info.integrated})


def verdict_zero_copy(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    big = max((r["bytes"] for r in rows), default=None)
    z, e = pick(rows, bytes=big, mode="mapped (zero-copy)"), pick(rows, bytes=big, mode="explicit copy + kernel")
    if z is None or e is None:
        return undecided("missing rows")
    r = ratio(e["time_ms"], z["time_ms"])
    integ = bool(params.get("integrated"))
    text = (f"reading {big / 1e6:.0f} MB once through mapped memory is {fmt_x(r)} as fast as copy + kernel "
            f"on this {'integrated' if integ else 'discrete'} GPU")
    if not integ:
        text += ("; the guide recommends zero copy for integrated GPUs - on a discrete one both move the "
                 "data over PCIe once, so parity (not a large gain) is the expected outcome")
    return Verdict(r > 0.9, text, {"explicit_over_mapped_time": r})


# ---- 18. allocation -------------------------------------------------------------------------

def measure_allocation(runner: Any, quick: bool) -> Measured:
    iters = 20 if quick else 100
    rows = []
    for size in (MB, 64 * MB):
        for mode, label in (("once", "allocate once"), ("malloc", "cudaMalloc/cudaFree per iteration"),
                            ("pool", "cudaMallocAsync/cudaFreeAsync (pool)")):
            t = runner.time_alloc_loop(mode, size, iters)
            rows.append({"bytes": size, "mode": mode, "label": label, "us_per_iteration": t.ms * 1e3})
    return Measured(tuple(rows), {"iterations": iters, "work_per_iteration": "cudaMemsetAsync of the buffer"})


def verdict_allocation(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    big = max((r["bytes"] for r in rows), default=None)
    once, mal, pool = (pick(rows, bytes=big, mode=m) for m in ("once", "malloc", "pool"))
    if not (once and mal and pool):
        return undecided("missing rows")
    r_m = ratio(mal["us_per_iteration"], once["us_per_iteration"])
    r_p = ratio(pool["us_per_iteration"], once["us_per_iteration"])
    return Verdict(r_m > 1.2 and r_p < r_m, f"at {big / 1e6:.0f} MB, malloc/free per iteration costs {fmt_x(r_m)} "
                                            f"and the stream-ordered pool {fmt_x(r_p)} of allocating once",
                   {"malloc_over_once": r_m, "pool_over_once": r_p})


# ---- 9. l2-persistence ----------------------------------------------------------------------

def measure_l2(runner: Any, quick: bool) -> Measured:
    info = runner.info
    setaside = info.max_persisting_l2_bytes or 0
    if setaside <= 0:
        return Measured((), {"setaside_bytes": 0}, ("device reports no persisting L2 capacity",))
    stream_words = (128 if quick else 512) * MB // 4
    k = runner.kernel("l2persist.cu", "sliding_window")
    streaming = runner.alloc(stream_words * 4)
    fracs = (0.5, 1.0, 2.0) if quick else (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
    persistent = runner.alloc(int(max(fracs) * setaside) + 4096)
    rows = []
    for f in fracs:
        pbytes = int(f * setaside) // 4 * 4
        args = (persistent, streaming, np.int32(stream_words), np.int32(pbytes // 4))
        grid = stream_words // 256
        for mode, window in (("no window", None), ("hitRatio 1.0", (persistent, pbytes, 1.0)),
                             ("tuned hitRatio", (persistent, pbytes, min(1.0, setaside / pbytes)))):
            t = runner.time_window(k, grid, 256, args, window, setaside)
            rows.append({"persistent_MB": pbytes / 1e6, "fraction_of_setaside": f, "mode": mode, "time_ms": t.ms})
    return Measured(tuple(rows), {"setaside_bytes": setaside, "streaming_bytes": stream_words * 4})


def verdict_l2(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    if not rows:
        return undecided("no persisting L2 on this device")
    def speed(mode: str, fits: bool) -> float:
        vals = []
        for r in rows:
            if (r["fraction_of_setaside"] <= 1.0) == fits and r["mode"] == mode:
                base = pick(rows, fraction_of_setaside=r["fraction_of_setaside"], mode="no window")
                if base is not None:
                    vals.append(ratio(base["time_ms"], r["time_ms"]))
        return median(vals)
    fit1, over1, over_t = speed("hitRatio 1.0", True), speed("hitRatio 1.0", False), speed("tuned hitRatio", False)
    ratios = {"fits_hit1_speedup": fit1, "exceeds_hit1_speedup": over1, "exceeds_tuned_speedup": over_t}
    text = (f"with the window fitting the set-aside L2, hitRatio 1.0 gives {fmt_x(fit1)} (guide on A100: up to 1.5x); "
            f"beyond it, hitRatio 1.0 gives {fmt_x(over1)} (guide: ~10 % slower) and the tuned hitRatio {fmt_x(over_t)}")
    return Verdict(fit1 > 1.05, text, ratios)


# ---- 10. async-copy -------------------------------------------------------------------------

def measure_async(runner: Any, quick: bool) -> Measured:
    block = 128
    grid = runner.info.sm_count * 8
    out = runner.alloc(grid * 4)
    per_block = (4096, 16384, 45056) if quick else (2048, 4096, 8192, 16384, 32768, 45056)
    src = runner.alloc(grid * max(per_block))
    rows = []
    for elem in (4, 8, 16):
        for name, mode in (("stage_sync", "synchronous"), ("stage_async", "cp.async")):
            k = runner.kernel("asynccopy.cu", name, defines=(f"ELEM_BYTES={elem}",))
            for b in per_block:
                count = max(1, b // (block * elem))
                nbytes = count * block * elem
                t = runner.time_kernel(k, grid, block, (src, out, np.int32(count)), shared_mem=nbytes)
                rows.append({"element_bytes": elem, "mode": mode, "bytes_per_block": nbytes, "time_ms": t.ms,
                             "bandwidth_GBps": bandwidth_gbps(grid * nbytes, t.ms)})
    return Measured(tuple(rows), {"grid": grid, "block": block})


def verdict_async(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    ratios = {}
    for elem in (4, 8, 16):
        sp = [ratio(pick(rows, element_bytes=elem, mode="synchronous", bytes_per_block=r["bytes_per_block"])["time_ms"],
                    r["time_ms"])
              for r in rows if r["element_bytes"] == elem and r["mode"] == "cp.async"
              and pick(rows, element_bytes=elem, mode="synchronous", bytes_per_block=r["bytes_per_block"])]
        if sp:
            ratios[f"{elem}B_async_speedup_median"] = median(sp)
    if not ratios:
        return undecided("missing rows")
    wins = sum(v > 1.02 for v in ratios.values())
    return Verdict(wins >= 2, "cp.async vs synchronous staging (median speedup): " + ", ".join(
        f"{k.split('_')[0]} {fmt_x(v)}" for k, v in ratios.items()), ratios)


# ---- predictions ----------------------------------------------------------------------------

def predict_pinned(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """At the largest size: pinned faster than pageable (direction only), and each pinned copy
    against the theoretical PCIe bound (params "pcie_GBps", else PCIe gen5 x16: 63.0 GB/s)."""
    bound = float(params.get("pcie_GBps") or PCIE_GEN5_X16_GBPS)
    src = "params pcie_GBps" if params.get("pcie_GBps") else "PCIe gen5 x16 theoretical (no link data)"
    out = []
    for d in ("h2d", "d2h"):
        big = max((r["bytes"] for r in rows if r["direction"] == d), default=None)
        p, q = pick(rows, direction=d, memory="pinned", bytes=big), pick(rows, direction=d, memory="pageable", bytes=big)
        if p and q:
            meas = ratio(p["bandwidth_GBps"], q["bandwidth_GBps"])
            out.append({**pvm("pinned / pageable bandwidth", "guide: pinned faster (no staging copy)",
                              "pinned faster", meas, direction=d, bytes=big), "agrees": meas > 1.0})
        if p:
            out.append(pvm("pinned bandwidth (GB/s), at most the bound", src, bound, p["bandwidth_GBps"],
                           direction=d, bytes=big))
    return tuple(out)


def predict_batch(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """t(n) = n x latency + bytes / bandwidth. Two points fix it: the single large copy and the
    smallest-copy row (most copies): latency = (t_N - t_1) / (N - 1), transfer time = t_1 - latency.
    Both fitted rows match by construction; the rows between test the model."""
    one = pick(rows, copies=1)
    many = max(rows, key=lambda r: r["copies"]) if rows else None
    if one is None or many is None or many is one:
        return (pvm("time_ms", "latency + bandwidth", None, None, "needs one copy and many"),)
    lat = (many["time_ms"] - one["time_ms"]) / (many["copies"] - 1)
    xfer = max(one["time_ms"] - lat, 0.0)
    note = f"latency {lat * 1e3:.2f} us per copy, bandwidth {bandwidth_gbps(params.get('total_bytes', 0), xfer):.1f} GB/s"
    return tuple(pvm("time_ms", "n x latency + bytes / bandwidth (fitted on 1 and most copies)",
                     r["copies"] * lat + xfer, r["time_ms"], note, copies=r["copies"]) for r in rows)


def predict_overlap(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """The model column of the table (tT + tE sequential; tE + tT/n or tT + tE/n staged)."""
    return tuple(pvm("time_ms", "sequential tT + tE; staged max-term + other/nStreams", r["model_ms"], r["time_ms"],
                     streams=r["streams"], mode=r["mode"]) for r in rows)


def predict_zero_copy(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """Discrete GPU: both paths cross PCIe once, so copy+kernel / mapped time is about 1.
    Integrated GPU: mapped memory skips the copy, so mapped is faster (direction only)."""
    integ = bool(params.get("integrated"))
    out = []
    for size in sorted({r["bytes"] for r in rows}):
        z, e = pick(rows, bytes=size, mode="mapped (zero-copy)"), pick(rows, bytes=size, mode="explicit copy + kernel")
        meas = ratio(e["time_ms"], z["time_ms"]) if z and e else None
        if integ:
            out.append(pvm("explicit / mapped time", "integrated: no copy needed", "mapped faster", meas, bytes=size))
        else:
            out.append(pvm("explicit / mapped time", "discrete: one PCIe crossing either way", 1.0, meas, bytes=size))
    return tuple(out)


def predict_allocation(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """Guide: cudaMalloc/cudaFree per iteration costs more than allocating once (direction only;
    the guide gives no size); the stream-ordered pool recycles memory, so its model cost is the
    work alone: pool / once = 1."""
    out = []
    for size in sorted({r["bytes"] for r in rows}):
        once, mal, pool = (pick(rows, bytes=size, mode=m) for m in ("once", "malloc", "pool"))
        if not once:
            continue
        if mal:
            meas = ratio(mal["us_per_iteration"], once["us_per_iteration"])
            out.append({**pvm("malloc-per-iteration / once", "guide: allocation is expensive", "slower", meas,
                              bytes=size), "agrees": meas > 1.0})
        if pool:
            out.append(pvm("pool / once", "pool recycles memory: no allocation cost", 1.0,
                           ratio(pool["us_per_iteration"], once["us_per_iteration"]), bytes=size))
    return tuple(out)


L2_GUIDE = {"fits": 1.5, "hitRatio 1.0": 0.9, "tuned hitRatio": 1.0}


def predict_l2(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """Guide's A100 figures as the model: a window that fits the set-aside gives up to 1.5x;
    beyond it hitRatio 1.0 thrashes (about 0.9x) and a hitRatio tuned to the set-aside keeps
    at least parity (1.0x)."""
    out = []
    for r in rows:
        if r["mode"] == "no window":
            continue
        base = pick(rows, fraction_of_setaside=r["fraction_of_setaside"], mode="no window")
        fits = r["fraction_of_setaside"] <= 1.0
        pred = L2_GUIDE["fits"] if fits else L2_GUIDE[r["mode"]]
        out.append(pvm("speedup over no window", "guide BPG 9.2.2 (A100)", pred,
                       ratio(base["time_ms"], r["time_ms"]) if base else None,
                       "upper bound (\"up to\")" if fits else "", fraction_of_setaside=r["fraction_of_setaside"],
                       mode=r["mode"]))
    if not out:
        out.append(pvm("speedup over no window", "guide BPG 9.2.2 (A100)", None, None,
                       "no persisting L2 on this device: nothing measured"))
    return tuple(out)


def predict_async(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """Guide: cp.async beats synchronous staging in almost all cases (direction; no size)."""
    out = []
    for r in rows:
        if r["mode"] != "cp.async":
            continue
        s = pick(rows, element_bytes=r["element_bytes"], mode="synchronous", bytes_per_block=r["bytes_per_block"])
        meas = ratio(s["time_ms"], r["time_ms"]) if s else None
        out.append({**pvm("synchronous / cp.async time", "guide BPG 9.2.3.4", "cp.async faster", meas,
                          element_bytes=r["element_bytes"], bytes_per_block=r["bytes_per_block"]),
                    "agrees": None if meas is None else meas > 1.0})
    return tuple(out)


LABS = (
    Lab(5, "pinned-transfer", "Pageable vs pinned host memory", ("X3",), "BPG 9.1.1",
        "Copies from or to page-locked (pinned) host memory reach the highest host-device bandwidth; "
        "pageable memory goes through an extra staging copy.",
        None, measure_pinned, verdict_pinned,
        PlotSpec("bytes", "bandwidth_GBps", series="memory", logx=True, title="Pinned vs pageable"),
        (GuideFigure("pinned transfer rate on PCIe x16 Gen3", 12, "GB/s", "BPG 9.1.1", "PCIe x16 Gen3"),),
        predict=predict_pinned),
    Lab(6, "batch-transfers", "One large copy vs many small ones", ("X2",), "BPG 9.1",
        "Every transfer has a fixed overhead, so one large copy beats many small copies of the same bytes.",
        None, measure_batch, verdict_batch,
        PlotSpec("copies", "time_ms", logx=True, logy=True, title="Batching transfers"), predict=predict_batch),
    Lab(7, "overlap-streams", "Staged copy/execute over streams", ("X4",), "BPG 9.1.2",
        "Splitting the work into chunks copied and processed in different streams overlaps transfers "
        "with kernels; with tE >= tT the total approaches tE + tT/nStreams.",
        "transfer.cu", measure_overlap, verdict_overlap,
        PlotSpec("streams", "time_ms", title="Overlap: measured (model in JSON)"), predict=predict_overlap),
    Lab(8, "zero-copy", "Mapped pinned memory vs explicit copy", ("X5",), "BPG 9.1.3",
        "A kernel can read mapped pinned host memory directly; for data read once and coalesced this "
        "avoids an explicit copy, and it is clearly beneficial on integrated GPUs.",
        "transfer.cu", measure_zero_copy, verdict_zero_copy,
        PlotSpec("bytes", "time_ms", series="mode", logx=True, title="Zero copy"), predict=predict_zero_copy),
    Lab(18, "allocation", "cudaMalloc/cudaFree in a loop vs once vs a pool", ("M1",), "BPG 9.3",
        "Allocating and freeing device memory is expensive; allocate once up front, or use the "
        "stream-ordered allocator (cudaMallocAsync) whose pool recycles memory cheaply.",
        None, measure_allocation, verdict_allocation,
        PlotSpec("mode", "us_per_iteration", series="bytes", kind="bar", title="Allocation cost"), predict=predict_allocation),
    Lab(9, "l2-persistence", "L2 persisting access window (sliding window)", ("G7",), "BPG 9.2.2",
        "Marking a frequently used region as persisting keeps it in a set-aside part of L2: faster "
        "while the region fits, thrashing when it does not, unless hitRatio is tuned to the set-aside.",
        "l2persist.cu", measure_l2, verdict_l2,
        PlotSpec("persistent_MB", "time_ms", series="mode", title="L2 persistence"),
        (GuideFigure("speedup while the persistent region fits the 30 MB set-aside", 1.5, "x", "BPG 9.2.2", "A100"),
         GuideFigure("slowdown once it exceeds it (hitRatio 1.0)", 0.9, "x", "BPG 9.2.2", "A100")),
        min_cc=(8, 0), predict=predict_l2),
    Lab(10, "async-copy", "Synchronous vs cp.async staging into shared memory", ("SH4",), "BPG 9.2.3.4",
        "Copying global to shared memory with cp.async (memcpy_async) skips the register round trip "
        "and performs better than synchronous staging in almost all cases, for 4-, 8- and 16-byte elements.",
        "asynccopy.cu", measure_async, verdict_async,
        PlotSpec("bytes_per_block", "bandwidth_GBps", series="mode", logx=True, title="Async copy"),
        min_cc=(8, 0), predict=predict_async),
)
