"""Amdahl and Gustafson bounds (catalog A2, A3) and the `speedup` command."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudalens.assess import scaling
from cudalens.cli import main
from cudalens.errors import InputError


def test_guide_example_three_quarters_parallel_is_at_most_4x():
    # BPG 3.1.3.1: with P = 3/4 the serial quarter caps the speedup at 1/(1/4) = 4.
    assert scaling.amdahl_limit(0.75) == pytest.approx(4.0)
    for n in (1, 2, 16, 10**6):
        assert scaling.amdahl(0.75, n) < 4.0
    assert scaling.amdahl(0.75, 10**9) == pytest.approx(4.0, rel=1e-6)


def test_amdahl_against_formula_by_hand():
    # 1 / (0.1 + 0.9/8) = 1 / 0.2125
    assert scaling.amdahl(0.9, 8) == pytest.approx(1 / 0.2125)
    assert scaling.amdahl(0.0, 64) == pytest.approx(1.0)
    assert scaling.amdahl(1.0, 64) == pytest.approx(64.0)
    assert math.isinf(scaling.amdahl_limit(1.0))


def test_gustafson_formula():
    # N + (1 - P)(1 - N): P = 0.75, N = 8 -> 8 - 0.25 * 7 = 6.25
    assert scaling.gustafson(0.75, 8) == pytest.approx(6.25)
    assert scaling.gustafson(1.0, 100) == pytest.approx(100.0)
    assert scaling.gustafson(0.0, 100) == pytest.approx(1.0)


@given(st.floats(0, 1), st.integers(1, 10**6))
def test_bounds_are_ordered(p, n):
    s = scaling.amdahl(p, n)
    assert 1.0 - 1e-9 <= s <= n * (1 + 1e-9)
    assert s <= scaling.amdahl_limit(p) * (1 + 1e-9)
    assert scaling.gustafson(p, n) >= s * (1 - 1e-9)  # scaled speedup never below fixed-size


@pytest.mark.parametrize("p,n", [(-0.1, 4), (1.5, 4), (float("nan"), 4), (0.5, 0), (0.5, 0.5), ("x", 4)])
def test_invalid_inputs_rejected(p, n):
    with pytest.raises(InputError):
        scaling.amdahl(p, n)


def test_table_goes_beyond_n_and_includes_it():
    counts = scaling.processor_counts(12)
    assert counts[0] == 1 and 12 in counts and max(counts) >= 4 * 12
    rows = scaling.scaling_table(0.5, 12)
    assert [r.processors for r in rows] == counts
    for r in rows:
        assert r.amdahl == pytest.approx(1 / (0.5 + 0.5 / r.processors))


def test_speedup_cli_json(capsys):
    assert main(["speedup", "--parallel-fraction", "3/4", "--processors", "8", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["amdahl_limit_x"] == pytest.approx(4.0)
    assert data["amdahl_speedup_x"] == pytest.approx(1 / (0.25 + 0.75 / 8))
    assert data["gustafson_speedup_x"] == pytest.approx(8 + 0.25 * (1 - 8))
    assert max(r["processors"] for r in data["table"]) > 8


def test_speedup_cli_text_and_plot(tmp_path, capsys):
    plot = tmp_path / "s.svg"
    assert main(["speedup", "--parallel-fraction", "75%", "-n", "8", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "4.000x" in out and plot.read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize(
    "args",
    [["--parallel-fraction", "1.2", "-n", "4"], ["--parallel-fraction", "0.5", "-n", "0"], ["--parallel-fraction", "half", "-n", "4"], ["--parallel-fraction", "0.5", "-n", "4", "--plot", "x.pdf"]],
)
def test_speedup_cli_bad_input_is_one_line_exit_2(args, capsys):
    assert main(["speedup", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error")
