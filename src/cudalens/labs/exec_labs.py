"""Execution labs: divergence, occupancy sensitivity, block size and grid size, concurrent kernels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cudalens.labs.core import (
    KernelPair,
    Lab,
    Measured,
    PlotSpec,
    Row,
    Verdict,
    bandwidth_gbps,
    fmt_x,
    pick,
    ratio,
    undecided,
)
from cudalens.labs.predict import pair_rows, pvm

BLOCK = 256


# ---- 11. divergence -------------------------------------------------------------------------

def measure_divergence(runner: Any, quick: bool) -> Measured:
    threads = runner.info.sm_count * 2048
    n = 512 if quick else 2048
    out = runner.alloc(threads * 4)
    rows = []
    for name, what in (("branch_warps", "warp-aligned condition"), ("branch_lanes", "odd/even lanes"),
                       ("branch_select", "both paths + select (predicated)")):
        k = runner.kernel("divergence.cu", name)
        t = runner.time_kernel(k, threads // BLOCK, BLOCK, (out, np.int32(n)))
        rows.append({"variant": name, "condition": what, "time_ms": t.ms})
    return Measured(tuple(rows), {"threads": threads, "chain_length": n})


def verdict_divergence(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    w, lanes, s = (pick(rows, variant=v) for v in ("branch_warps", "branch_lanes", "branch_select"))
    if w is None or lanes is None:
        return undecided("missing variants")
    r = ratio(lanes["time_ms"], w["time_ms"])
    ratios = {"lanes_over_warps_time": r, "model": 2.0}
    if s is not None:
        ratios["select_over_warps_time"] = ratio(s["time_ms"], w["time_ms"])
    holds = r > 1.5
    return Verdict(holds, f"splitting every warp takes {fmt_x(r)} the time of the warp-aligned "
                          "condition (model 2x: each warp runs both paths)", ratios)


DIVERGENCE_PAIRS = (KernelPair("branch_lanes", "branch_warps", "D1"),)


def predict_divergence(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """A warp split in two runs both paths one after the other: 2x the warp-aligned time."""
    w, lanes = pick(rows, variant="branch_warps"), pick(rows, variant="branch_lanes")
    meas = ratio(lanes["time_ms"], w["time_ms"]) if w and lanes else None
    return (pvm("time branch_lanes / branch_warps", "divergent warp runs both paths", 2.0, meas,
                "" if meas is not None else "table has no branch_lanes/branch_warps rows"),
            *pair_rows("divergence.cu", DIVERGENCE_PAIRS, rows))


# ---- 15. occupancy-sensitivity --------------------------------------------------------------

SMEM_STEPS_KB = (0, 8, 16, 24, 32, 48, 64, 96, 112, 160, 224)


def measure_occupancy(runner: Any, quick: bool) -> Measured:
    info = runner.info
    n = (16 if quick else 64) * 2**20
    src, dst = runner.alloc(n * 4), runner.alloc(n * 4)
    k = runner.kernel("occupancy.cu", "occ_copy")
    limit = info.max_smem_per_block_optin
    runner.set_max_dynamic_smem(k, limit)
    k_regs = runner.kernel_info(k).registers
    rows = []
    steps = SMEM_STEPS_KB[::2] if quick else SMEM_STEPS_KB
    for kb in steps:
        smem = min(kb * 1024, limit)
        blocks = runner.blocks_per_sm(k, BLOCK, smem)
        if blocks == 0:
            continue
        grid = blocks * info.sm_count
        t = runner.time_kernel(k, grid, BLOCK, (dst, src, np.int64(n)), shared_mem=smem)
        rows.append({"series": "dynamic shared memory", "dynamic_smem_bytes": smem, "blocks_per_sm": blocks,
                     "occupancy": blocks * BLOCK / info.max_threads_per_sm, "registers": k_regs,
                     "local_bytes_per_thread": None, "time_ms": t.ms,
                     "bandwidth_GBps": bandwidth_gbps(2 * n * 4, t.ms)})
    for label, name, maxreg in (("registers: default", "reg_heavy", None),
                                ("registers: -maxrregcount=32", "reg_heavy", 32),
                                ("registers: __launch_bounds__(256, 8)", "reg_bounded", None)):
        kr = runner.kernel("occupancy.cu", name, max_registers=maxreg)
        ki = runner.kernel_info(kr)
        blocks = runner.blocks_per_sm(kr, BLOCK, 0)
        if blocks == 0:
            continue
        grid = blocks * info.sm_count
        t = runner.time_kernel(kr, grid, BLOCK, (dst, src, np.int64(n)))
        rows.append({"series": label, "dynamic_smem_bytes": 0, "blocks_per_sm": blocks,
                     "occupancy": blocks * BLOCK / info.max_threads_per_sm, "registers": ki.registers,
                     "local_bytes_per_thread": ki.local_bytes, "time_ms": t.ms,
                     "bandwidth_GBps": bandwidth_gbps(2 * n * 4, t.ms)})
    return Measured(tuple(rows), {"elements": n, "block": BLOCK, "grid": "blocks_per_sm x SMs (one wave)",
                                  "cc": info.cc},
                    ("occupancy is theoretical (driver's occupancy calculator) for the launch shown",))


def verdict_occupancy(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    smem = [r for r in rows if r["series"] == "dynamic shared memory"]
    if len(smem) < 2:
        return undecided("needs at least two shared-memory steps")
    best = max(smem, key=lambda r: r["bandwidth_GBps"])
    low = min(smem, key=lambda r: r["occupancy"])
    r_low = ratio(low["bandwidth_GBps"], best["bandwidth_GBps"])
    # smallest occupancy that reaches 90 % of the best bandwidth
    enough = min((r["occupancy"] for r in smem if r["bandwidth_GBps"] >= 0.9 * best["bandwidth_GBps"]),
                 default=float("nan"))
    ratios = {"lowest_occupancy_over_best_bandwidth": r_low, "occupancy_for_90pct": enough,
              "lowest_occupancy": low["occupancy"]}
    text = (f"at occupancy {low['occupancy']:.3f} ({low['dynamic_smem_bytes']} B of shared memory per block) "
            f"the copy reaches {r_low:.2f} of its best bandwidth; 90 % is reached from occupancy "
            f"{enough:.3f} on, so more occupancy beyond that buys nothing")
    d, c = pick(rows, series="registers: default"), pick(rows, series="registers: -maxrregcount=32")
    if d is not None and c is not None:
        rr = ratio(d["time_ms"], c["time_ms"])
        ratios["default_over_maxrreg32_time"] = rr
        text += (f"; capping registers ({d['registers']} -> {c['registers']}, occupancy "
                 f"{d['occupancy']:.2f} -> {c['occupancy']:.2f}, local {c['local_bytes_per_thread']} B) "
                 f"changes time by {fmt_x(1 / rr if rr else float('nan'))}")
    return Verdict(r_low < 0.8, text, ratios)


def _calc(cc: str, threads: int, registers: int, smem: int) -> Any:
    from cudalens.occupancy import calculate
    return calculate(cc=cc, threads_per_block=threads, registers_per_thread=registers, shared_mem_per_block=smem)


def predict_occupancy(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """cudalens.occupancy.calculate (a re-implementation of cuda_occupancy.h) for each row's
    registers and dynamic shared memory vs the driver's blocks per SM and occupancy: they should
    be equal."""
    cc, block = params.get("cc"), int(params.get("block", BLOCK))
    out = []
    for r in rows:
        where = {"series": r["series"], "dynamic_smem_bytes": r["dynamic_smem_bytes"]}
        if cc is None or r.get("registers") is None:
            out.append(pvm("blocks per SM", "cudalens.occupancy.calculate", None, r["blocks_per_sm"],
                           "no compute capability or registers recorded for this row", **where))
            continue
        try:
            res = _calc(str(cc), block, int(r["registers"]), int(r["dynamic_smem_bytes"]))
        except Exception as exc:  # noqa: BLE001 - a prediction must never take a lab down
            out.append(pvm("blocks per SM", "cudalens.occupancy.calculate", None, r["blocks_per_sm"],
                           f"calculator failed: {type(exc).__name__}: {exc}", **where))
            continue
        for what, pred, meas in (("blocks per SM", res.active_blocks_per_sm, r["blocks_per_sm"]),
                                 ("occupancy", res.occupancy, r["occupancy"])):
            eq = abs(float(pred) - float(meas)) < 1e-9
            out.append({**pvm(what, "cudalens.occupancy.calculate (cuda_occupancy.h)", pred, meas,
                              "equal" if eq else "differs from the driver", **where), "equal": eq})
    return tuple(out)


# ---- 16. block-size -------------------------------------------------------------------------

BLOCK_SIZES = (32, 48, 64, 96, 100, 128, 192, 200, 256, 384, 500, 512, 768, 1000, 1024)


def measure_block_size(runner: Any, quick: bool) -> Measured:
    info = runner.info
    n = (16 if quick else 64) * 2**20
    src, dst = runner.alloc(n * 4), runner.alloc(n * 4)
    k = runner.kernel("blocksize.cu", "block_copy")
    rows = []
    sizes = (32, 48, 64, 128, 200, 256, 1024) if quick else BLOCK_SIZES
    for b in sizes:
        t = runner.time_kernel(k, (n + b - 1) // b, b, (dst, src, np.int32(n)))
        rows.append({"series": "block size", "block": b, "grid": (n + b - 1) // b,
                     "lane_efficiency": b / (32 * -(-b // 32)), "time_ms": t.ms,
                     "bandwidth_GBps": bandwidth_gbps(2 * n * 4, t.ms)})
    g = runner.kernel("blocksize.cu", "grid_copy")
    sm = info.sm_count
    grids = sorted({1, max(1, sm // 4), max(1, sm // 2), sm, 2 * sm, 4 * sm, 8 * sm, 32 * sm})
    for grid in grids:
        t = runner.time_kernel(g, grid, BLOCK, (dst, src, np.int64(n)))
        rows.append({"series": "grid size (block 256)", "block": BLOCK, "grid": grid,
                     "lane_efficiency": 1.0, "time_ms": t.ms,
                     "bandwidth_GBps": bandwidth_gbps(2 * n * 4, t.ms)})
    return Measured(tuple(rows), {"elements": n, "sm_count": sm, "cc": info.cc,
                                  "registers_block_copy": runner.kernel_info(k).registers,
                                  "registers_grid_copy": runner.kernel_info(g).registers})


def verdict_block_size(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    sizes = [r for r in rows if r["series"] == "block size"]
    grids = [r for r in rows if r["series"].startswith("grid size")]
    sm = params.get("sm_count")
    if not sizes or not grids or not sm:
        return undecided("needs both sweeps")
    best = max(r["bandwidth_GBps"] for r in sizes)
    b32 = pick(sizes, block=32)
    r32 = ratio(b32["bandwidth_GBps"], best) if b32 else float("nan")
    odd = [r for r in sizes if r["block"] % 32]
    r_odd = min((ratio(r["bandwidth_GBps"], best) for r in odd), default=float("nan"))
    half = pick(grids, grid=max(1, sm // 2))
    full = pick(grids, grid=sm)
    gbest = max(r["bandwidth_GBps"] for r in grids)
    r_half = ratio(half["bandwidth_GBps"], full["bandwidth_GBps"]) if half and full else float("nan")
    r_full = ratio(full["bandwidth_GBps"], gbest) if full else float("nan")
    ratios = {"block32_over_best": r32, "worst_non_multiple_over_best": r_odd,
              "grid_half_sms_over_grid_sms": r_half, "grid_sms_over_best_grid": r_full}
    e3 = r32 < 0.9
    e4 = r_half < 0.75 and r_full < 0.9
    text = (f"E3: 32-thread blocks reach {r32:.2f} of the best block size; E2: the worst block size that is "
            f"not a multiple of 32 reaches {r_odd:.2f}; E4: a grid of SMs/2 blocks reaches {r_half:.2f} of a "
            f"grid of one block per SM, which itself reaches {r_full:.2f} of the best grid")
    return Verdict(e3 and e4, text, ratios)


def predict_block_size(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """Block sweep: lane efficiency threads / (32 x warps) vs the measured bandwidth relative to
    the best block size. Grid sweep: waves = grid / (SMs x blocks per SM, from
    cudalens.occupancy) and the share of SMs given work, min(1, grid / SMs), vs the measured
    bandwidth relative to the best grid."""
    sm, cc = params.get("sm_count"), params.get("cc")
    out = []
    for series, regs_key in (("block size", "registers_block_copy"), ("grid size", "registers_grid_copy")):
        part = [r for r in rows if str(r["series"]).startswith(series)]
        if not part:
            continue
        best = max(r["bandwidth_GBps"] for r in part)
        for r in part:
            b, grid = int(r["block"]), int(r["grid"])
            where = {"series": r["series"], "block": b, "grid": grid}
            rel = ratio(r["bandwidth_GBps"], best)
            if series == "block size":
                out.append(pvm("relative bandwidth (lane efficiency)", "threads / (32 x ceil(threads/32))",
                               b / (32 * -(-b // 32)), rel, **where))
                continue
            waves, note = None, ""
            if sm and cc:
                try:
                    bps = _calc(str(cc), b, int(params.get(regs_key) or 32), 0).active_blocks_per_sm
                    waves = grid / (sm * bps) if bps else None
                except Exception as exc:  # noqa: BLE001
                    note = f"calculator failed: {type(exc).__name__}: {exc}"
            else:
                note = "no SM count or compute capability recorded"
            fill = min(1.0, grid / sm) if sm else None
            out.append({**pvm("relative bandwidth (share of SMs with a block)", "min(1, grid / SMs)", fill, rel,
                              note, **where), "predicted_waves": waves})
    return tuple(out)


# ---- 17. concurrent-kernels -----------------------------------------------------------------

def measure_concurrent(runner: Any, quick: bool) -> Measured:
    n_kernels = 8
    grid = max(1, runner.info.sm_count // 16)
    iters = 20000 if quick else 100000
    k = runner.kernel("concurrent.cu", "small_busy")
    rows = []
    for streams in (1, 2, 4, 8):
        t = runner.time_streams(k, n_kernels, streams, grid, 128, iters)
        rows.append({"streams": streams, "kernels": n_kernels, "time_ms": t.ms})
    return Measured(tuple(rows), {"kernels": n_kernels, "blocks_per_kernel": grid, "block": 128,
                                  "iterations": iters})


def verdict_concurrent(rows: Sequence[Row], params: Mapping[str, Any]) -> Verdict:
    one = pick(rows, streams=1)
    many = max(rows, key=lambda r: r["streams"]) if rows else None
    if one is None or many is None or many is one:
        return undecided("needs 1 and several streams")
    s = ratio(one["time_ms"], many["time_ms"])
    ideal = min(many["streams"], many["kernels"])
    return Verdict(s > 1.5, f"{many['kernels']} small kernels on {many['streams']} streams finish "
                            f"{fmt_x(s)} faster than on one stream (ideal {ideal}x)",
                   {"one_over_many_streams_time": s, "ideal": float(ideal)})


def predict_concurrent(rows: Sequence[Row], params: Mapping[str, Any]) -> tuple[Row, ...]:
    """Independent small kernels on s streams overlap fully: ideal speedup min(s, kernels) over
    one stream (the kernels together fill only part of the GPU, so nothing else limits it)."""
    one = pick(rows, streams=1)
    return tuple(pvm("speedup over one stream", "ideal overlap: min(streams, kernels)",
                     float(min(r["streams"], r["kernels"])),
                     ratio(one["time_ms"], r["time_ms"]) if one else None,
                     "" if one else "no one-stream row", streams=r["streams"]) for r in rows)


LABS = (
    Lab(11, "divergence", "Divergent vs warp-aligned branches", ("D1",), "BPG 12.1",
        "When the threads of one warp take different paths, the warp runs both paths one after the "
        "other; a condition that is constant across each warp costs nothing extra.",
        "divergence.cu", measure_divergence, verdict_divergence,
        PlotSpec("variant", "time_ms", kind="bar", title="Branch divergence"), (),
        DIVERGENCE_PAIRS, predict=predict_divergence),
    Lab(15, "occupancy-sensitivity", "Occupancy: shared memory and register limits", ("E1", "SH6", "L2"),
        "BPG 10.1, 10.4",
        "Latency is hidden by having enough warps resident; raising shared memory or registers per "
        "block lowers occupancy, which hurts once it falls below what the kernel needs - and beyond "
        "that point more occupancy does not help.",
        "occupancy.cu", measure_occupancy, verdict_occupancy,
        PlotSpec("occupancy", "bandwidth_GBps", series="series", title="Bandwidth vs occupancy"),
        predict=predict_occupancy),
    Lab(16, "block-size", "Block size and grid size", ("E2", "E3", "E4"), "BPG 10.3",
        "Blocks should be a multiple of 32 threads and at least 64 (128-256 is a good start), and "
        "there should be more blocks than SMs.",
        "blocksize.cu", measure_block_size, verdict_block_size,
        PlotSpec("block", "bandwidth_GBps", series="series", logx=True, title="Block and grid size"),
        predict=predict_block_size),
    Lab(17, "concurrent-kernels", "Small kernels on one stream vs several", ("E8",), "BPG 10.5",
        "Independent kernels launched into different non-default streams can run at the same time; "
        "on one stream they are serialized.",
        "concurrent.cu", measure_concurrent, verdict_concurrent,
        PlotSpec("streams", "time_ms", title="Concurrent kernels"), predict=predict_concurrent),
)
