"""The numpy sweep agrees with the scalar calculator; the what-if finds the real steps."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cudalens.hardware.table import known_ccs
from cudalens.occupancy import (
    LIMIT_NAMES,
    blocks_grid,
    calculate,
    device_for,
    device_from_properties,
    full_sweep,
    what_if,
)
from cudalens.occupancy.plot import curves
from cudalens.occupancy.sweep import NO_LIMIT


@pytest.mark.parametrize("cc", known_ccs())
def test_vectorized_grid_equals_scalar_calculator(cc):
    rng = random.Random(cc)
    dev = device_for(cc)
    for _ in range(3):
        static = rng.choice([0, 0, rng.randint(0, 48 * 1024)])
        carveout = rng.choice([None, 0, 50, 100, rng.randint(0, 100)])
        cache = rng.choice(["none", "shared", "l1", "equal"])
        barriers = rng.choice([0, 1, 1, 2])
        t = np.array([rng.randint(1, 1100) for _ in range(12)])
        r = np.array([rng.randint(0, 260) for _ in range(12)])
        s = np.array([rng.randint(0, int(dev.smem_per_sm * 1.1)) for _ in range(12)])
        kw = dict(static_shared_mem=static, carveout=carveout, cache_config=cache,
                  block_barriers=barriers)
        grid = blocks_grid(cc, t[:, None, None], r[None, :, None], s[None, None, :], **kw)
        for i, j, k in np.ndindex(grid["active"].shape):
            one = calculate(cc, int(t[i]), int(r[j]), int(s[k]), **kw)
            assert grid["active"][i, j, k] == one.active_blocks_per_sm
            for name in LIMIT_NAMES:
                want = one.block_limit(name)
                assert grid[name][i, j, k] == (NO_LIMIT if want is None else want), name


def test_full_sweep_shape_and_spot_values():
    sweep = full_sweep("9.0")
    assert sweep.active_blocks.shape == (32, 255, len(sweep.shared_mem_per_block))
    assert sweep.points > 1_500_000
    assert sweep.elapsed_s > 0
    rng = random.Random(1)
    for _ in range(200):
        i, j, k = (rng.randrange(n) for n in sweep.active_blocks.shape)
        r = calculate("9.0", int(sweep.threads_per_block[i]), int(sweep.registers_per_thread[j]),
                      int(sweep.shared_mem_per_block[k]))
        assert sweep.active_blocks[i, j, k] == r.active_blocks_per_sm
        assert sweep.occupancy[i, j, k] == pytest.approx(r.occupancy)


def test_register_cliff_is_the_first_register_that_loses_a_block():
    w = what_if("6.1", 512, 64)
    assert w.registers_cliff.value == 65 and w.registers_cliff.blocks_per_sm == 1
    assert w.register_headroom == 0
    # Check the cliff and gain against the calculator, one register at a time.
    w = what_if("9.0", 256, 37)
    cur = w.current.active_blocks_per_sm
    for regs in range(38, w.registers_cliff.value):
        assert calculate("9.0", 256, regs).active_blocks_per_sm == cur
    assert calculate("9.0", 256, w.registers_cliff.value).active_blocks_per_sm < cur
    gain = w.registers_gain
    assert calculate("9.0", 256, gain.value).active_blocks_per_sm == gain.blocks_per_sm > cur
    for regs in range(gain.value + 1, 37):
        assert calculate("9.0", 256, regs).active_blocks_per_sm <= cur


def test_shared_memory_cliff_and_gain_are_exact_bytes():
    w = what_if("9.0", 256, 37, 49152)
    cur = w.current.active_blocks_per_sm
    cliff, gain = w.smem_cliff, w.smem_gain
    assert calculate("9.0", 256, 37, cliff.value).active_blocks_per_sm == cliff.blocks_per_sm < cur
    assert calculate("9.0", 256, 37, cliff.value - 1).active_blocks_per_sm == cur
    assert calculate("9.0", 256, 37, gain.value).active_blocks_per_sm == gain.blocks_per_sm > cur
    assert calculate("9.0", 256, 37, gain.value + 1).active_blocks_per_sm <= cur
    assert any("become" in s for s in w.sentences())


def test_live_device_properties_replace_table_values():
    dev = device_from_properties("9.0", num_sms=132, smem_per_sm=100 * 1024)
    assert dev.num_sms == 132 and dev.smem_per_sm == 100 * 1024
    assert dev.max_blocks_per_sm == device_for("9.0").max_blocks_per_sm
    r = calculate(dev, 64, 16, 8 * 1024)
    # No carveout preference: the SM uses its reported size (a supported configuration here).
    assert r.smem_per_sm_config == 100 * 1024
    assert r.block_limit_shared_memory == (100 * 1024) // (9 * 1024)
    assert calculate("9.0", 64, 16, 8 * 1024).block_limit_shared_memory == 233472 // 9216


def test_curves_hold_two_inputs_and_mark_the_current_point():
    cur, (by_threads, by_regs, by_smem) = curves("9.0", 256, 37, 4096)
    i = int(np.nonzero(by_regs.x == 37)[0][0])
    assert by_regs.occupancy[i] == pytest.approx(cur.occupancy)
    j = int(np.nonzero(by_threads.x == 256)[0][0])
    assert by_threads.occupancy[j] == pytest.approx(cur.occupancy)
    k = int(np.nonzero(by_smem.x == 4096)[0][0])
    assert by_smem.occupancy[k] == pytest.approx(cur.occupancy)
    assert by_regs.occupancy[0] >= by_regs.occupancy[-1]
