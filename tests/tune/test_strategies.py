"""Strategies on synthetic facts and timings: exhaustive covers the survivors, guided and optuna
find the synthetic optimum within half of the space, a lost configuration is handed out again."""

from __future__ import annotations

import pytest

from cudalens.tune import make_space, tune
from cudalens.tune.runners import RunnerSpec, fake_builder, fake_seconds
from cudalens.tune.strategies import Exhaustive


def _run(gemm_source, gemm_space, tmp_path, strategy, **kw):
    return tune(gemm_source, "gemm<BM,BN,BK,TM,TN>", gemm_space, grid=["N/BN", "M/BM"], block=["(BM/TM)*(BN/TN)"],
                strategy=strategy, db=str(tmp_path / "h.db"), runner=RunnerSpec("fake", fake={"noise": 0.002}),
                builder=fake_builder, **kw)


def test_exhaustive_measures_every_survivor(gemm_source, gemm_space, tmp_path):
    r = _run(gemm_source, gemm_space, tmp_path, "exhaustive")
    assert r["configurations"] == 295
    assert r["measured"] + r["pruned"] == 295
    assert r["stop_reason"] == "every survivor measured"
    truth = min((fake_seconds(c.key), c.key) for c in gemm_space.configs() if r["statuses"][c.key] == "measured")[1]
    assert r["best"]["config"] == truth


def test_guided_finds_the_optimum_in_half(gemm_source, gemm_space, tmp_path):
    r = _run(gemm_source, gemm_space, tmp_path, "guided")
    assert r["measured"] <= 295 // 2
    assert r["best"]["config"] == "BM=128,BN=128,BK=16,TM=8,TN=8"
    assert r["stability"]["p_winner_fastest"] > 0.5


def test_optuna_stays_in_budget_and_near_the_optimum(gemm_source, gemm_space, tmp_path):
    pytest.importorskip("optuna")
    r = _run(gemm_source, gemm_space, tmp_path, "optuna", max_fraction=0.3)
    assert 0 < r["measured"] <= int(0.3 * 295)
    assert r["best"]["median_s"] <= 1.2 * fake_seconds("BM=128,BN=128,BK=16,TM=8,TN=8")


def test_requeue_hands_a_lost_configuration_out_first():
    from cudalens.tune.prune import Verdict

    s = Exhaustive([Verdict(k, False, None, float(i)) for i, k in enumerate(["a=1", "a=2", "a=3"])])
    assert s.ask(2) == ["a=1", "a=2"]
    s.requeue("a=2")
    assert s.ask(1) == ["a=2"]
    s.tell("a=1", 1.0)
    s.tell("a=2", 2.0)
    assert s.ask(5) == ["a=3"]
    s.tell("a=3", 0.5)
    assert s.ask(1) == [] and s.finished and s.best() == ("a=3", 0.5)


def test_wrong_outputs_are_not_winners(gemm_source, tmp_path):
    sp = make_space(["BM=64,128", "BN=128", "BK=16", "TM=8", "TN=8"], [], ["M=2048", "N=2048"])
    r = tune(gemm_source, "gemm<BM,BN,BK,TM,TN>", sp, grid=["N/BN", "M/BM"], block=["(BM/TM)*(BN/TN)"],
             strategy="exhaustive", db=str(tmp_path / "h.db"), builder=fake_builder,
             runner=RunnerSpec("fake", fake={"wrong": ["BM=128,BN=128,BK=16,TM=8,TN=8"]}))
    assert r["wrong_output"] == 1 and r["best"]["config"] == "BM=64,BN=128,BK=16,TM=8,TN=8"
