"""Invalid input raises InputError (a ValueError) with a clear message; the CLI prints one line."""

from __future__ import annotations

import pytest

from cudalens.cli import main
from cudalens.errors import InputError
from cudalens.occupancy import calculate, max_potential_block_size, what_if


@pytest.mark.parametrize(
    ("args", "kwargs", "words"),
    [
        (("4.0", 256, 32), {}, "unknown compute capability"),
        (("nine", 256, 32), {}, "MAJOR.MINOR"),
        (("9.0", 0, 32), {}, "threads per block"),
        (("9.0", -32, 32), {}, "threads per block"),
        (("9.0", 256, -1), {}, "registers per thread"),
        (("9.0", 256, 32, -1), {}, "dynamic shared memory"),
        (("9.0", 256, 32), {"static_shared_mem": -4}, "static shared memory"),
        (("9.0", "abc", 32), {}, "whole number"),
        (("9.0", 256, 32.5), {}, "whole number"),
        (("9.0", 256, None), {}, "whole number"),
        (("9.0", 256, True), {}, "whole number"),
        (("9.0", 256, 32), {"carveout": 101}, "carveout"),
        (("9.0", 256, 32), {"cache_config": "huge"}, "cache config"),
        (("9.0", 256, 32), {"block_barriers": -1}, "barriers"),
    ],
)
def test_api_rejects_invalid_input(args, kwargs, words):
    with pytest.raises(InputError, match=words) as info:
        calculate(*args, **kwargs)
    assert isinstance(info.value, ValueError)


def test_integral_floats_and_numeric_strings_are_accepted():
    assert calculate("9.0", 256.0, "37").active_blocks_per_sm == 6
    assert calculate(9.0, 256, 37).active_blocks_per_sm == 6
    assert calculate("sm_90", 256, 37).active_blocks_per_sm == 6


def test_block_size_and_what_if_validate_too():
    with pytest.raises(InputError):
        max_potential_block_size("9.0", 32, -5)
    with pytest.raises(InputError):
        max_potential_block_size("9.0", 32, lambda b: -1)
    with pytest.raises(InputError, match="failed"):
        max_potential_block_size("9.0", 32, lambda b: 1 // 0)
    with pytest.raises(InputError):
        what_if("4.0", 256, 32)


@pytest.mark.parametrize(
    "argv",
    [
        ["--cc", "4.0", "--threads", "256", "--registers", "37"],
        ["--cc", "9.0", "--threads", "0", "--registers", "37"],
        ["--cc", "9.0", "--threads", "256", "--registers", "-3"],
        ["--cc", "9.0", "--threads", "256", "--registers", "37", "--shared-mem", "-1"],
        ["--cc", "9.0", "--threads", "many", "--registers", "37"],
        ["--cc", "9.0", "--threads", "256", "--registers", "3.7"],
        ["--cc", "9.0", "--threads", "256", "--registers", "37", "--carveout", "x"],
        ["--cc", "9.0", "--threads", "256", "--registers", "37", "--sms", "0"],
        ["--cc", "9.0", "--threads", "256"],
    ],
)
def test_cli_bad_input_is_one_line_exit_2(argv, capsys):
    assert main(["occupancy", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error"), captured.err
    assert "Traceback" not in captured.err + captured.out
