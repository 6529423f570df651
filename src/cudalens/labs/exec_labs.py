"""Execution labs: divergence, occupancy sensitivity, block size and grid size, concurrent kernels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cudalens.labs.core import (
    KernelPair, Lab, Measured, PlotSpec, Row, Verdict, bandwidth_gbps, fmt_x, pick, ratio, undecided,
)

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
    w, l, s = (pick(rows, variant=v) for v in ("branch_warps", "branch_lanes", "branch_select"))
    if w is None or l is None:
        return undecided("missing variants")
    r = ratio(l["time_ms"], w["time_ms"])
    ratios = {"lanes_over_warps_time": r, "model": 2.0}
    if s is not None:
        ratios["select_over_warps_time"] = ratio(s["time_ms"], w["time_ms"])
    holds = r > 1.5
    return Verdict(holds, f"splitting every warp takes {fmt_x(r)} the time of the warp-aligned "
                          "condition (model 2x: each warp runs both paths)", ratios)


# ---- 15. occupancy-sensitivity --------------------------------------------------------------

SMEM_STEPS_KB = (0, 8, 16, 24, 32, 48, 64, 96, 112, 160, 224)


def measure_occupancy(runner: Any, quick: bool) -> Measured:
    info = runner.info
    n = (16 if quick else 64) * 2**20
    src, dst = runner.alloc(n * 4), runner.alloc(n * 4)
    k = runner.kernel("occupancy.cu", "occ_copy")
    limit = info.max_smem_per_block_optin
    runner.set_max_dynamic_smem(k, limit)
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
                     "occupancy": blocks * BLOCK / info.max_threads_per_sm, "registers": None,
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
    return Measured(tuple(rows), {"elements": n, "block": BLOCK, "grid": "blocks_per_sm x SMs (one wave)"},
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
    return Measured(tuple(rows), {"elements": n, "sm_count": sm})


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


LABS = (
    Lab(11, "divergence", "Divergent vs warp-aligned branches", ("D1",), "BPG 12.1",
        "When the threads of one warp take different paths, the warp runs both paths one after the "
        "other; a condition that is constant across each warp costs nothing extra.",
        "divergence.cu", measure_divergence, verdict_divergence,
        PlotSpec("variant", "time_ms", kind="bar", title="Branch divergence"), (),
        (KernelPair("branch_lanes", "branch_warps", "D1"),)),
    Lab(15, "occupancy-sensitivity", "Occupancy: shared memory and register limits", ("E1", "SH6", "L2"),
        "BPG 10.1, 10.4",
        "Latency is hidden by having enough warps resident; raising shared memory or registers per "
        "block lowers occupancy, which hurts once it falls below what the kernel needs - and beyond "
        "that point more occupancy does not help.",
        "occupancy.cu", measure_occupancy, verdict_occupancy,
        PlotSpec("occupancy", "bandwidth_GBps", series="series", title="Bandwidth vs occupancy")),
    Lab(16, "block-size", "Block size and grid size", ("E2", "E3", "E4"), "BPG 10.3",
        "Blocks should be a multiple of 32 threads and at least 64 (128-256 is a good start), and "
        "there should be more blocks than SMs.",
        "blocksize.cu", measure_block_size, verdict_block_size,
        PlotSpec("block", "bandwidth_GBps", series="series", logx=True, title="Block and grid size")),
    Lab(17, "concurrent-kernels", "Small kernels on one stream vs several", ("E8",), "BPG 10.5",
        "Independent kernels launched into different non-default streams can run at the same time; "
        "on one stream they are serialized.",
        "concurrent.cu", measure_concurrent, verdict_concurrent,
        PlotSpec("streams", "time_ms", title="Concurrent kernels")),
)
