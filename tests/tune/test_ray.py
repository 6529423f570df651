"""The Ray backend on a local cluster with two fake GPUs: compilation as CPU tasks, one actor per
GPU, a worker killed mid-sweep (its process exits) and its configuration re-queued: nothing lost."""

from __future__ import annotations

import sqlite3

import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'cudalens[ray]')")


@pytest.fixture(scope="module")
def cluster():
    from cudalens.tune import ray_backend

    ray_backend.init("local", num_cpus=2, num_gpus=2, object_store_memory=100 * 2**20)
    yield ray
    ray.shutdown()


def test_worker_killed_mid_sweep_loses_nothing(cluster, gemm_source, gemm_space, tmp_path):
    from cudalens.tune import tune
    from cudalens.tune.ray_backend import ray_builder
    from cudalens.tune.runners import RunnerSpec, fake_build

    victim = "BM=64,BN=128,BK=16,TM=4,TN=8"
    marker, log, db = tmp_path / "died", tmp_path / "measured.log", str(tmp_path / "h.db")
    runner = RunnerSpec("fake", fake={"delay_s": 0.01, "log": str(log), "die_on": victim, "die_marker": str(marker)})
    events: list[str] = []
    r = tune(gemm_source, "gemm<BM,BN,BK,TM,TN>", gemm_space, grid=["N/BN", "M/BM"], block=["(BM/TM)*(BN/TN)"],
             strategy="exhaustive", db=db, runner=runner, builder=ray_builder(fake_build), build_fn=fake_build, ray="auto",
             on_event=events.append)
    assert marker.exists(), "the victim configuration never ran"
    assert any(e.startswith(f"worker died measuring {victim}") for e in events)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT config_key, status, worker FROM tune_results").fetchall()
    runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    conn.close()
    keys = [k for k, _, _ in rows]
    assert len(keys) == len(set(keys)) == 295
    measured = {k: w for k, s, w in rows if s == "measured"}
    assert victim in measured and runs == len(measured) == r["measured"]
    assert len({w for w in measured.values()}) >= 3  # two GPU actors, and the replacement of the dead one
    started = [line.split()[1] for line in log.read_text().splitlines()]
    assert started.count(victim) == 2 and all(started.count(k) == 1 for k in set(started) - {victim})
    assert r["best"]["config"] == "BM=128,BN=128,BK=16,TM=8,TN=8"


def test_configuration_that_kills_every_worker_fails_after_two_attempts(cluster, gemm_source, gemm_space, tmp_path):
    """Each actor holds two configurations (exhaustive: depth 2); a configuration that kills every
    worker is stored as failed after two deaths, and the ones queued behind it on the dead workers
    are measured elsewhere, each started once."""
    from cudalens.tune import tune
    from cudalens.tune.ray_backend import ray_builder
    from cudalens.tune.runners import RunnerSpec, fake_build

    killer = "BM=128,BN=64,BK=8,TM=4,TN=4"
    marker, log, db = tmp_path / "died", tmp_path / "measured.log", str(tmp_path / "h.db")
    runner = RunnerSpec("fake", fake={"delay_s": 0.005, "log": str(log), "die_on": killer, "die_marker": str(marker),
                                      "die_times": 10})
    events: list[str] = []
    r = tune(gemm_source, "gemm<BM,BN,BK,TM,TN>", gemm_space, grid=["N/BN", "M/BM"], block=["(BM/TM)*(BN/TN)"],
             strategy="exhaustive", db=db, runner=runner, builder=ray_builder(fake_build), build_fn=fake_build, ray="auto",
             on_event=events.append)
    assert len(marker.read_text().splitlines()) == 2  # two workers died on it, then it was given up
    conn = sqlite3.connect(db)
    rows = dict(conn.execute("SELECT config_key, status FROM tune_results").fetchall())
    reason = conn.execute("SELECT reason FROM tune_results WHERE config_key = ?", (killer,)).fetchone()[0]
    conn.close()
    assert len(rows) == 295 and rows[killer] == "failed" and "2 workers died" in reason
    assert r["failed"] == 1 and r["measured"] == sum(1 for s in rows.values() if s == "measured") == 295 - 1 - r["pruned"]
    started = [line.split()[1] for line in log.read_text().splitlines()]
    assert started.count(killer) == 2 and all(started.count(k) == 1 for k in set(started) - {killer})
    assert sum(e.startswith(f"worker died measuring {killer}") for e in events) == 2


def test_more_gpu_workers_than_gpus_is_refused(cluster):
    from cudalens.errors import InputError
    from cudalens.tune.ray_backend import start_workers
    from cudalens.tune.runners import RunnerSpec

    with pytest.raises(InputError, match="3 GPU workers asked for, but the Ray cluster has 2 GPUs"):
        start_workers(RunnerSpec("fake"), 3)


def test_running_call_of_a_dead_actor_is_the_first_without_a_result():
    """When an actor dies with two calls in flight, the one it was running is the first (in
    submission order) that did not finish with a result, even when the call before it finished
    but its result has not been read yet."""
    from cudalens.tune.ray_backend import _running_call

    class Died(Exception):
        pass

    class FakeRay:
        def __init__(self, outcomes):
            self.outcomes = outcomes

        def wait(self, calls, timeout=None):
            return calls, []

        def get(self, call):
            if self.outcomes[call] == "died":
                raise Died(call)
            return self.outcomes[call]

    fake = FakeRay({"a": "result", "b": "died", "c": "died"})
    assert _running_call(fake, ["a", "b", "c"], Died) == "b"
    assert _running_call(fake, ["b", "c"], Died) == "b"
    assert _running_call(fake, ["a"], Died) is None
