"""Predict functions on synthetic tables: expectations computed here, independently."""

from __future__ import annotations

import pytest

from cudalens.labs.core import KernelPair
from cudalens.labs.exec_labs import predict_concurrent, predict_occupancy
from cudalens.labs.host_labs import predict_batch
from cudalens.labs.memory_labs import predict_constant
from cudalens.labs.predict import AnalyzerSummary, pair_rows


def test_constant_serialization_model():
    rows = [{"distinct_addresses_per_warp": n, "time_ms": t} for n, t in ((1, 2.0), (4, 5.0), (32, 40.0))]
    model = [p for p in predict_constant(rows, {}) if "distinct_addresses_per_warp" in p]
    assert [p["predicted"] for p in model] == [1.0, 4.0, 32.0]
    assert [p["measured"] for p in model] == pytest.approx([1.0, 2.5, 20.0])
    assert [p["measured_over_predicted"] for p in model] == pytest.approx([1.0, 2.5 / 4, 20.0 / 32])


def test_batch_latency_bandwidth_fit():
    # a link with 10 us per copy and 1.6 ms for the bytes; the middle row is off the model by 0.1 ms
    lat, xfer = 0.010, 1.6
    rows = [{"copies": n, "time_ms": n * lat + xfer + (0.1 if n == 16 else 0.0)} for n in (1, 16, 1024)]
    preds = predict_batch(rows, {"total_bytes": 16 * 2**20})
    by_n = {p["copies"]: p for p in preds}
    assert by_n[1]["predicted"] == pytest.approx(lat + xfer)
    assert by_n[1024]["predicted"] == pytest.approx(1024 * lat + xfer)
    assert by_n[16]["predicted"] == pytest.approx(16 * lat + xfer)
    assert by_n[16]["measured_over_predicted"] == pytest.approx((16 * lat + xfer + 0.1) / (16 * lat + xfer))


def test_occupancy_matches_hand_computed_limits():
    # CC 9.0, 256 threads: 2048 threads/SM -> 8 blocks; 64 regs x 256 = 16384 regs, 65536 / 16384 -> 4
    # blocks; 100 KB dynamic smem (+1 KB reserved) in 228 KB -> 2 blocks
    rows = [
        {"series": "a", "dynamic_smem_bytes": 0, "registers": 32, "blocks_per_sm": 8, "occupancy": 1.0},
        {"series": "b", "dynamic_smem_bytes": 0, "registers": 64, "blocks_per_sm": 4, "occupancy": 0.5},
        {"series": "c", "dynamic_smem_bytes": 100 * 1024, "registers": 32, "blocks_per_sm": 3, "occupancy": 0.375},
    ]
    preds = predict_occupancy(rows, {"cc": "9.0", "block": 256})
    blocks = {p["series"]: p for p in preds if p["predicts"] == "blocks per SM"}
    assert blocks["a"]["predicted"] == 8 and blocks["a"]["equal"]
    assert blocks["b"]["predicted"] == 4 and blocks["b"]["equal"]
    assert blocks["c"]["predicted"] == 2 and not blocks["c"]["equal"]  # the table's 3 is wrong on purpose
    occ = {p["series"]: p["predicted"] for p in preds if p["predicts"] == "occupancy"}
    assert occ == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.25})


def test_occupancy_without_cc_says_so():
    rows = [{"series": "a", "dynamic_smem_bytes": 0, "registers": 32, "blocks_per_sm": 8, "occupancy": 1.0}]
    (p,) = predict_occupancy(rows, {})
    assert p["predicted"] is None and "compute capability" in p["note"]


def test_concurrent_ideal_speedup():
    rows = [{"streams": s, "kernels": 4, "time_ms": t} for s, t in ((1, 8.0), (2, 4.0), (8, 2.5))]
    preds = predict_concurrent(rows, {})
    assert [p["predicted"] for p in preds] == [1.0, 2.0, 4.0]  # capped at the 4 kernels
    assert [p["measured"] for p in preds] == pytest.approx([1.0, 2.0, 3.2])


PAIR = (KernelPair("slow_k", "fast_k", "R9"),)
ROWS = [{"kernel": "slow_k", "time_ms": 3.0}, {"kernel": "fast_k", "time_ms": 1.5}]


def test_pair_rows_flagged_and_ratio():
    s = AnalyzerSummary(flagged=frozenset({("R9", "slow_k")}))
    (p,) = pair_rows("x.cu", PAIR, ROWS, summary=s)
    assert p["bad_flagged"] is True and p["good_flagged"] is False
    assert p["predicted"] == "bad slower" and p["measured"] == pytest.approx(2.0) and p["agrees"] is True
    assert "flagged with rule R9: yes" in p["note"]


def test_pair_rows_good_also_flagged_predicts_no_difference():
    s = AnalyzerSummary(flagged=frozenset({("R9", "slow_k"), ("R9", "fast_k")}))
    (p,) = pair_rows("x.cu", PAIR, ROWS, summary=s)
    assert p["good_flagged"] is True and p["predicted"] == "no difference" and p["agrees"] is False


def test_pair_rows_analyzer_unavailable_and_unmatched_table():
    s = AnalyzerSummary(error="analyzer unavailable: ImportError: nope")
    (p,) = pair_rows("x.cu", PAIR, [{"kernel": "other", "time_ms": 1.0}], summary=s)
    assert p["predicted"] is None and p["measured"] is None
    assert "analyzer unavailable" in p["note"] and "no time for slow_k" in p["note"]
