"""The occupancy examples the guides work through, and other fixed points a reader can check."""

from __future__ import annotations

import pytest

from cudalens.occupancy import calculate, max_potential_block_size


@pytest.mark.parametrize(
    ("cc", "threads", "regs", "smem", "blocks", "occupancy", "limiter"),
    [
        ("7.0", 128, 37, 0, 12, 0.75, "registers"),
        ("7.0", 320, 37, 0, 4, 0.625, "registers"),
        ("6.1", 512, 64, 0, 2, 0.5, "registers"),
        ("6.1", 512, 65, 0, 1, 0.25, "registers"),  # one more register: 2 blocks become 1
        ("9.0", 256, 37, 0, 6, 0.75, "registers"),
        ("9.0", 256, 37, 49152, 4, 0.5, "shared_memory"),
    ],
)
def test_guide_example(cc, threads, regs, smem, blocks, occupancy, limiter):
    r = calculate(cc, threads, regs, smem)
    assert r.active_blocks_per_sm == blocks
    assert r.occupancy == pytest.approx(occupancy)
    assert r.limiters == frozenset({limiter})
    assert r.active_warps_per_sm == blocks * (threads // 32)
    assert r.reason is None


def test_h100_shared_memory_limit_counts_reserved_memory():
    # 1 KiB reserved per block: 233472 B / 1024 B = 228 blocks even with no shared memory used.
    r = calculate("9.0", 32, 16, 0)
    assert r.block_limit_shared_memory == 228
    assert r.shared_mem_allocated_per_block == 1024


def test_impossible_configs_give_zero_blocks_and_a_reason():
    cases = [
        (dict(threads_per_block=1025, registers_per_thread=16), "threads per block"),
        (dict(threads_per_block=256, registers_per_thread=257), "registers per thread"),
        (dict(threads_per_block=1024, registers_per_thread=255), "registers"),
        (dict(threads_per_block=128, registers_per_thread=16, shared_mem_per_block=300_000),
         "dynamic shared memory"),
        (dict(threads_per_block=128, registers_per_thread=16, static_shared_mem=40_000,
              shared_mem_per_block=200_000), "shared memory"),
    ]
    for kwargs, word in cases:
        r = calculate("9.0", **kwargs)
        assert r.active_blocks_per_sm == 0 and r.occupancy == 0.0
        assert r.reason and word in r.reason, (kwargs, r.reason)


def test_carveout_limits_blocks_until_one_block_needs_more():
    # Carveout 25% of 228 KiB = 57 KiB -> the 64 KiB configuration: 64 KiB / 9 KiB = 7 blocks.
    r = calculate("9.0", 64, 16, 8 * 1024, carveout=25)
    assert r.smem_per_sm_config == 64 * 1024
    assert r.block_limit_shared_memory == (64 * 1024) // (9 * 1024)
    # A block larger than the preferred carveout still runs: the SM is set to the next size.
    big = calculate("9.0", 64, 16, 70 * 1024, carveout=25)
    assert big.smem_per_sm_config == 100 * 1024 and big.active_blocks_per_sm == 1


def test_max_potential_block_size_prefers_largest_of_equal_occupancy():
    # 37 registers on CC 9.0: 256 x 6 = 768 x 2 = 1536 threads; the tie goes to 768.
    assert max_potential_block_size("9.0", 37, num_sms=132) == (2 * 132, 768)
    # 32 registers fill the SM with 1024-thread blocks.
    assert max_potential_block_size("9.0", 32) == (2, 1024)
    # block_size_limit caps the search like a kernel's own maximum does.
    assert max_potential_block_size("9.0", 37, 0, 200) == max_potential_block_size(
        "9.0", 37, 0, kernel_max_threads=200)
    assert max_potential_block_size("9.0", 37, 0, 200).block_size <= 200


def test_variable_shared_memory_block_size():
    # 200 B per thread: a 1024-thread block needs 200 KiB -> 1 block; smaller ones pack better.
    per_thread = 200
    grid, block = max_potential_block_size("9.0", 32, lambda b: per_thread * b)
    r = calculate("9.0", block, 32, per_thread * block)
    assert grid == r.active_blocks_per_sm
    for other in range(32, 1025, 32):
        o = calculate("9.0", other, 32, per_thread * other)
        assert o.active_threads_per_sm <= r.active_threads_per_sm
