"""Verdict functions on synthetic tables: claim holds / does not hold, and the ratios they report."""

from __future__ import annotations

import pytest

from cudalens.labs import exec_labs as E
from cudalens.labs import host_labs as H
from cudalens.labs import instr_labs as I
from cudalens.labs import memory_labs as M


def test_offset():
    rows = [{"offset_words": k, "bandwidth_GBps": 800.0 if k % 8 == 0 else 640.0} for k in range(33)]
    v = M.verdict_offset(rows, {})
    assert v.holds and v.ratios["misaligned_over_aligned"] == pytest.approx(0.8)
    flat = [{"offset_words": k, "bandwidth_GBps": 3000.0 - (k % 8 != 0)} for k in range(33)]
    assert M.verdict_offset(flat, {}).holds is False


def test_stride():
    def mk(f):
        return [{"stride_words": s, "bandwidth_GBps": f(s)} for s in (1, 2, 4, 32)]
    v = M.verdict_stride(mk(lambda s: 800 / min(s, 8)), {})
    assert v.holds and v.ratios["stride2_over_stride1"] == pytest.approx(0.5)
    assert M.verdict_stride(mk(lambda s: 800 * (1 - 0.01 * s)), {}).holds is False


def _variants(guide, values):
    names = list(guide)
    return [{"variant": n, "bandwidth_GBps": v, "guide_v100_GBps": guide[n]} for n, v in zip(names, values)]


def test_matmul_and_transpose():
    v = M.verdict_matmul(_variants(M.AB_GUIDE, [100, 120, 170]), {})
    assert v.holds and v.ratios["tile_ab_over_simple"] == pytest.approx(1.7)
    assert v.ratios["guide_tile_ab_over_simple"] == pytest.approx(195.5 / 119.9)
    assert M.verdict_matmul(_variants(M.AB_GUIDE, [100, 101, 102]), {}).holds is False
    assert M.verdict_aat(_variants(M.AAT_GUIDE, [10, 100, 150]), {}).holds is True
    no_pad_gain = M.verdict_aat(_variants(M.AAT_GUIDE, [10, 100, 101]), {})
    assert no_pad_gain.holds is False and "SH1" in no_pad_gain.summary


def test_constant_and_local():
    rows = [{"distinct_addresses_per_warp": s, "time_ms": float(s)} for s in (1, 2, 32)]
    assert M.verdict_constant(rows, {}).ratios["divergent32_over_uniform_time"] == 32
    assert M.verdict_constant([{"distinct_addresses_per_warp": s, "time_ms": 1.0} for s in (1, 32)], {}).holds is False
    loc = [{"variant": "local_dynamic", "time_ms": 3.0, "local_bytes_per_thread": 128},
           {"variant": "local_registers", "time_ms": 1.0, "local_bytes_per_thread": 0}]
    assert M.verdict_local(loc, {}).holds
    loc[0]["local_bytes_per_thread"] = 0  # no local memory: the claim's mechanism is absent
    assert M.verdict_local(loc, {}).holds is False


def test_divergence():
    rows = [{"variant": "branch_warps", "time_ms": 1.0}, {"variant": "branch_lanes", "time_ms": 2.0},
            {"variant": "branch_select", "time_ms": 2.0}]
    assert E.verdict_divergence(rows, {}).holds
    rows[1]["time_ms"] = 1.1
    assert E.verdict_divergence(rows, {}).holds is False


def test_occupancy():
    def mk(bws):
        return [{"series": "dynamic shared memory", "occupancy": o, "bandwidth_GBps": b,
                           "dynamic_smem_bytes": 0} for o, b in bws]
    v = E.verdict_occupancy(mk([(1.0, 3000), (0.5, 2950), (0.125, 1200)]), {})
    assert v.holds and v.ratios["occupancy_for_90pct"] == 0.5
    assert E.verdict_occupancy(mk([(1.0, 3000), (0.125, 2900)]), {}).holds is False


def test_block_size():
    sizes = [{"series": "block size", "block": b, "bandwidth_GBps": 3000 if b >= 128 else 1500} for b in (32, 48, 128, 256)]
    grids = [{"series": "grid size (block 256)", "grid": g, "bandwidth_GBps": min(3000, 10 * g)} for g in (66, 132, 264, 1056)]
    v = E.verdict_block_size(sizes + grids, {"sm_count": 132})
    assert v.holds and v.ratios["grid_half_sms_over_grid_sms"] == pytest.approx(0.5)
    flat = [dict(r, bandwidth_GBps=3000) for r in sizes + grids]
    assert E.verdict_block_size(flat, {"sm_count": 132}).holds is False


def test_concurrent():
    rows = [{"streams": s, "kernels": 8, "time_ms": 8.0 / s} for s in (1, 2, 8)]
    assert E.verdict_concurrent(rows, {}).ratios["one_over_many_streams_time"] == 8
    assert E.verdict_concurrent([dict(r, time_ms=8.0) for r in rows], {}).holds is False


def test_intrinsics_math_intops():
    rows = [{"function": "sinf", "arguments": "small", "time_ms": 3.0},
            {"function": "__sinf", "arguments": "small", "time_ms": 1.0},
            {"function": "sinf", "arguments": "large", "time_ms": 30.0}]
    assert I.verdict_intrinsics(rows, {}).holds
    rows[2]["time_ms"] = 3.1
    assert I.verdict_intrinsics(rows, {}).holds is False
    math = [{"kernel": k, "time_ms": 2.0 if i == 0 else 1.0} for _, *ks, _ in I.MATH_PAIRS for i, k in enumerate(ks)]
    assert I.verdict_math(math, {}).holds
    assert I.verdict_math([dict(r, time_ms=1.0) for r in math], {}).holds is False
    ops = [{"kernel": "divmod_var", "time_ms": 3.0}, {"kernel": "shift_mask", "time_ms": 1.0},
           {"kernel": "loop_unsigned", "time_ms": 1.0}, {"kernel": "loop_signed", "time_ms": 1.0}]
    v = I.verdict_intops(ops, {})
    assert v.holds and "no measurable difference" in v.summary
    ops[0]["time_ms"] = 1.0
    assert I.verdict_intops(ops, {}).holds is False


def test_transfers_and_allocation():
    pin = [{"direction": d, "memory": m, "bytes": 1 << 26, "bandwidth_GBps": 50.0 if m == "pinned" else 20.0}
           for d in ("h2d", "d2h") for m in ("pinned", "pageable")]
    assert H.verdict_pinned(pin, {}).holds
    assert H.verdict_pinned([dict(r, bandwidth_GBps=50.0) for r in pin], {}).holds is False
    batch = [{"copies": 1, "bytes_per_copy": 1 << 24, "time_ms": 1.0, "us_per_copy": 1000.0},
             {"copies": 4096, "bytes_per_copy": 4096, "time_ms": 40.0, "us_per_copy": 9.8}]
    assert H.verdict_batch(batch, {"total_bytes": 1 << 24}).holds
    ov = [{"streams": 0, "mode": "sequential", "time_ms": 20.0, "model_ms": 20.0},
          {"streams": 4, "mode": "staged", "time_ms": 12.5, "model_ms": 12.5}]
    v = H.verdict_overlap(ov, {})
    assert v.holds and v.ratios["model_median_relative_error"] == 0
    al = [{"bytes": 1 << 26, "mode": m, "us_per_iteration": t} for m, t in (("once", 10.0), ("malloc", 500.0), ("pool", 12.0))]
    assert H.verdict_allocation(al, {}).holds
    assert H.verdict_allocation([dict(r, us_per_iteration=10.0) for r in al], {}).holds is False
    zc = [{"bytes": 1 << 26, "mode": "mapped (zero-copy)", "time_ms": 2.0},
          {"bytes": 1 << 26, "mode": "explicit copy + kernel", "time_ms": 2.1}]
    assert "discrete" in H.verdict_zero_copy(zc, {"integrated": False}).summary


def test_l2_and_async():
    rows = []
    for f in (0.5, 2.0):
        for mode, t in (("no window", 2.0), ("hitRatio 1.0", 1.3 if f <= 1 else 2.2), ("tuned hitRatio", 1.3 if f <= 1 else 1.8)):
            rows.append({"fraction_of_setaside": f, "mode": mode, "time_ms": t})
    v = H.verdict_l2(rows, {})
    assert v.holds and v.ratios["exceeds_hit1_speedup"] < 1 < v.ratios["exceeds_tuned_speedup"]
    asy = [{"element_bytes": e, "mode": m, "bytes_per_block": 4096, "time_ms": 1.0 if m == "cp.async" else 1.3}
           for e in (4, 8, 16) for m in ("synchronous", "cp.async")]
    assert H.verdict_async(asy, {}).holds
    assert H.verdict_async([dict(r, time_ms=1.0) for r in asy], {}).holds is False
