"""A real capture: tests/fixtures/ncu_h100_raw.csv was written by benchmarks/model/ncu_fixture.py on an
H100 (driver 580.159.04, ncu 2025.3.1, 2026-11-22). The kernels have known signatures, so the
derived metrics are checked against first principles, not against a copy of the file's numbers."""

from pathlib import Path

import pytest

from cudalens.profile.ncu import by_kernel, parse_csv_file

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ncu_h100_raw.csv"


@pytest.fixture(scope="module")
def legacy():
    return by_kernel(parse_csv_file(str(FIXTURE)))


def test_every_kernel_of_the_capture_is_there(legacy):
    assert set(legacy) == {"copy_coalesced", "copy_stride2", "transpose_conflicts", "transpose_padded",
                           "branch_odd_even", "branch_warp_aligned"}


def test_sectors_per_request_follow_the_guide_model(legacy):
    # 32 lanes x 4 bytes = 128 bytes = 4 sectors; stride 2 doubles the span to 8 sectors.
    assert legacy["copy_coalesced"].global_ld_sectors_per_request == pytest.approx(4.0)
    assert legacy["copy_stride2"].global_ld_sectors_per_request == pytest.approx(8.0)


def test_bank_conflicts_show_in_shared_wavefronts(legacy):
    # tile[tx][ty] with a 32-float row: all 32 lanes in one bank -> ~32 wavefronts; padded row -> ~1.
    assert legacy["transpose_conflicts"].shared_ld_wavefronts_per_request == pytest.approx(32, rel=0.05)
    assert legacy["transpose_padded"].shared_ld_wavefronts_per_request == pytest.approx(1, rel=0.05)


def test_divergent_branch_has_lower_uniformity(legacy):
    assert legacy["branch_odd_even"].branch_efficiency < legacy["branch_warp_aligned"].branch_efficiency


def test_time_occupancy_and_dram(legacy):
    for m in legacy.values():
        assert m.duration_s is not None and 1e-7 < m.duration_s < 1.0
        assert m.theoretical_occupancy == pytest.approx(1.0)
        assert 0 < m.achieved_occupancy <= 1.0
    copy = legacy["copy_coalesced"]
    # 2^24 floats read and written: at most 128 MiB of DRAM traffic. Less reaches DRAM because the
    # 50 MiB L2 keeps part of the written data (and of the input, set by cudaMemset just before).
    nominal = 2 * 4 * (1 << 24)
    assert 0.5 * nominal < copy.dram_bytes <= 1.05 * nominal
    assert copy.dram_bandwidth_gbps == pytest.approx(copy.dram_bytes / copy.duration_s / 1e9)


def test_per_limit_block_counts_equal_our_calculator(legacy):
    """ncu's launch__occupancy_limit_{warps,registers,blocks} against cudalens.occupancy for the same
    launch (block size and registers as ncu recorded them). The shared-memory limit is left out: ncu
    reports it for the carveout the driver chose at run time, which the launch does not fix."""
    from cudalens.occupancy import calculate

    blocks = {"copy_coalesced": 256, "copy_stride2": 256, "transpose_conflicts": 1024, "transpose_padded": 1024,
              "branch_odd_even": 256, "branch_warp_aligned": 256}
    for name, m in legacy.items():
        ours = calculate(cc="9.0", threads_per_block=blocks[name], registers_per_thread=int(m.registers_per_thread))
        assert m.occupancy_limits["warps"] == ours.block_limit_warps, name
        assert m.occupancy_limits["registers"] == ours.block_limit_registers, name
        assert m.occupancy_limits["blocks"] == ours.block_limit_blocks, name
