"""Pruning decisions on compiled facts (no compiler, no GPU: the facts are what ptxas would report)."""

from __future__ import annotations

from cudalens.tune.build import BuildFacts
from cudalens.tune.prune import AccessFacts, Launch, decide, rank_survivors

RES = {"registers": 32, "static_shared_bytes": 8192, "local_bytes": 0, "spill_stores": 0, "spill_loads": 0,
       "constant_bytes": 0, "barriers": 1}
COUNTS = {"fp32": 128, "lds.128": 16, "ldg.32": 8, "sts": 8, "bar": 2, "branch": 3}


def facts(key="k", **res):
    return BuildFacts(key, True, None, "_Z1kv", "k<1>", {**RES, **res}, dict(COUNTS), "")


def launch(threads=256, blocks=1024, shared=0):
    return Launch((blocks, 1, 1), (threads, 1, 1), shared)


def test_compile_failure_is_pruned_with_the_compilers_reason():
    v = decide(BuildFacts("k", False, "does not compile: too much shared data"), launch(), cc="9.0", sm_count=132)
    assert v.pruned and v.reason == "does not compile: too much shared data"


def test_zero_active_blocks_registers():
    # 255 registers x 1024 threads = 261120 > the 65536 of an SM: no block can be resident
    v = decide(facts(registers=255), launch(threads=1024), cc="9.0", sm_count=132)
    assert v.pruned and v.reason.startswith("launch: 0 active blocks per SM")
    ok = decide(facts(registers=64), launch(threads=1024), cc="9.0", sm_count=132)
    assert not ok.pruned and ok.facts["active_blocks_per_sm"] == 1


def test_zero_active_blocks_shared_memory():
    v = decide(facts(static_shared_bytes=40 * 1024), launch(shared=200 * 1024), cc="9.0", sm_count=132)
    assert v.pruned and v.reason.startswith("launch: 0 active blocks")


def test_block_too_large_and_bad_grid():
    assert decide(facts(), launch(threads=2048), cc="9.0", sm_count=132).reason.startswith("launch: a block of 2048")
    v = decide(facts(), Launch((1, 70000, 1), (128, 1, 1)), cc="9.0", sm_count=132)
    assert v.pruned and "grid dimension y" in v.reason
    v = decide(facts(), None, cc="9.0", sm_count=132, launch_error="--grid 'N/BN' is 2.5")
    assert v.pruned and v.reason == "launch: --grid 'N/BN' is 2.5"


def test_spills_pruned_unless_kept():
    v = decide(facts(spill_stores=64, spill_loads=64), launch(), cc="9.0", sm_count=132)
    assert v.pruned and v.reason.startswith("spills: 64 B of spill stores")
    kept = decide(facts(spill_stores=64, spill_loads=64), launch(), cc="9.0", sm_count=132, keep_spills=True)
    assert not kept.pruned


def test_occupancy_floor():
    # 32 threads, 1 block per SM limited by 48 KiB static shared each -> 4 blocks x 1 warp = 4 warps: kept
    v = decide(facts(static_shared_bytes=48 * 1024), launch(threads=32), cc="9.0", sm_count=132)
    assert not v.pruned and v.facts["occupancy"] == 4 / 64
    v = decide(facts(static_shared_bytes=48 * 1024), launch(threads=32), cc="9.0", sm_count=132, min_occupancy=0.25)
    assert v.pruned and v.reason.startswith("occupancy: 4 resident warps per SM")


def test_cost_orders_register_blocking_and_waves():
    dense = BuildFacts("dense", True, None, "m", "i", dict(RES), {**COUNTS, "fp32": 1024}, "")
    sparse = BuildFacts("sparse", True, None, "m", "i", dict(RES), {**COUNTS, "fp32": 32}, "")
    a = decide(dense, launch(), cc="9.0", sm_count=132)
    b = decide(sparse, launch(), cc="9.0", sm_count=132)
    assert a.predicted_cost < b.predicted_cost
    assert [v.config_key for v in rank_survivors([b, a])] == ["dense", "sparse"]
    # one block more than a full wave: the second wave runs almost empty
    full = decide(facts(), launch(blocks=132 * 8), cc="9.0", sm_count=132)
    tail = decide(facts(), launch(blocks=132 * 8 + 1), cc="9.0", sm_count=132)
    assert full.facts["waves"] == 1 and tail.facts["waves"] == 2
    assert tail.predicted_cost > 1.9 * full.predicted_cost


def test_access_predictions_raise_the_cost_where_established():
    base = decide(facts(), launch(), cc="9.0", sm_count=132)
    conflicted = decide(facts(), launch(), cc="9.0", sm_count=132, access=AccessFacts(None, 8.0, 1, 0))
    unknown = decide(facts(), launch(), cc="9.0", sm_count=132, access=AccessFacts(None, None, 0, 3))
    assert conflicted.predicted_cost > base.predicted_cost
    assert unknown.predicted_cost == base.predicted_cost
