"""The compiled model's shortcuts give what the long way gives (issue #27's speed point): the
whole-loop run that goes on from the first run's fork equals a fresh whole-loop run, and the warp
models run once per distinct row give every row's figures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cudalens.access import memory as M
from cudalens.access.ptx_exec import Launch
from cudalens.access.ptx_run import run_forked, run_variants

PATTERNS = Path(__file__).resolve().parent / "ptx" / "issue27_patterns.cu"


@pytest.fixture(scope="module")
def module(ptx_of):
    return ptx_of(PATTERNS)


def _plain(results) -> list:
    return [dataclasses.asdict(r) for r in results]


@pytest.mark.parametrize(("kernel", "block", "params", "cap"), [
    ("reduce1", (256, 1, 1), {2: 2048}, 4),  # sdata[2 * s * tid]: the loop's figure grows by iteration
    ("lud_diagonal", (16, 1, 1), {1: 64, 2: 0}, 8),  # triangular loops over a shared tile
])
def test_the_whole_loop_run_from_the_fork_is_a_fresh_whole_loop_run(module, kernel, block, params, cap):
    fn = next(f for f in module.entries if f.name == kernel)
    variants = ((1, params), (2, params), (0, params))  # the loaded-value seeds, as ptx_eval runs them
    first = Launch((8, 1, 1), block, ((0, 0, 0), (1, 0, 0)), params, 1, cap, 6000, variants=variants)
    capped, fork = run_forked(module, fn, first)
    assert fork is not None and any(r.truncated for r in capped)  # a loop was cut at the cap
    assert _plain(capped) == _plain(run_variants(module, fn, first))  # forking changes nothing of the first run
    budget = 3 * capped[0].steps
    resumed = fork.whole(6000, budget)
    fresh = run_variants(module, fn, dataclasses.replace(first, loop_cap=6000, max_steps=budget, whole_loops=True))
    assert resumed is not None and _plain(resumed) == _plain(fresh)
    assert resumed[0].steps > capped[0].steps and not resumed[0].truncated  # it did run the loops whole
    assert _plain(fork.whole(6000, budget)) == _plain(fresh)  # a fork resumes as often as asked, the same
    assert fork.whole(6000, 1) is None  # a budget it had spent before the fork: not the same run


@pytest.mark.parametrize(("space", "width"), [("shared", 4), ("shared", 8), ("shared", 16), ("global", 1),
                                              ("global", 4), ("global", 8), ("global", 16)])
def test_the_warp_models_once_per_distinct_row_give_every_rows_figures(space, width):
    rng = np.random.default_rng(width)
    base = rng.integers(0, 4096, size=(80, 32)) * width  # aligned accesses, some rows strided
    base[::3] = np.arange(32) * width * rng.integers(1, 33)
    active = rng.random((80, 32)) < 0.8
    active[::4] = True
    active[5] = False  # a warp with no lane on
    # the same rows moved by multiples of 128 bytes (the same banks and sectors) and by less (not the same)
    addr = np.concatenate([base, base + 128 * rng.integers(-3, 9, size=(80, 1)), base + width, base + 16 * rng.integers(1, 9, size=(80, 1))])
    act = np.concatenate([active] * 4)
    direct = (M.global_sectors(addr, act, width, distinct_ideal=True) if space == "global"
              else M.shared_wavefronts(addr, act, width)[1:])
    got = M.distinct_rows(M.row_model(space, width), addr, act, width)
    assert all(np.array_equal(g, d) for g, d in zip(got, direct, strict=True))
    # the dedup did take place: a model that counts its rows sees fewer than were given
    seen = []
    M.distinct_rows(lambda a, m: (seen.append(len(a)), (np.zeros(len(a)),))[1], addr, act, width)
    assert len(seen) == 1 and seen[0] <= len(addr) - 80
