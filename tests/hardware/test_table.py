import pytest

from cudalens.errors import InputError
from cudalens.hardware.table import known_ccs, limits, normalize_cc


def test_every_row_parses_and_is_consistent():
    for cc in known_ccs():
        row = limits(cc)
        assert row.max_warps_per_sm * 32 == row.max_threads_per_sm
        assert row.max_smem_per_block_optin <= row.smem_per_sm


def test_h100_row():
    row = limits("9.0")
    assert (row.smem_per_sm, row.max_smem_per_block_optin, row.reserved_smem_per_block) == (233472, 232448, 1024)
    assert row.barrier_slots_per_sm == 64


@pytest.mark.parametrize("text", ["sm_90", "90", "9.0", "sm_90a"])
def test_normalize(text):
    assert normalize_cc(text) == "9.0"


@pytest.mark.parametrize("bad", ["4.0", "banana", "9"])
def test_unknown_cc_is_input_error(bad):
    with pytest.raises(InputError):
        limits(bad)
