"""The space parser, restrictions and the safe expression grammar of cudalens.tune."""

from __future__ import annotations

import pytest

from cudalens.errors import InputError
from cudalens.tune import expr as E
from cudalens.tune.engine import TuneSpec, launch_for
from cudalens.tune.space import Config, make_space, parse_param


def test_param_lists_and_ranges():
    assert parse_param("BM=32,64,128").values == (32, 64, 128)
    assert parse_param("BK=8:64:x2").values == (8, 16, 32, 64)
    assert parse_param("U=1:4:+1").values == (1, 2, 3, 4)
    assert parse_param("U=0:8:+4").values == (0, 4, 8)


def test_space_ranges_are_the_axis_grammar():
    """One range grammar: `tune --space` and `bench --axis` give the same values for the same text."""
    from cudalens.measure.axes import parse_axis

    for text in ("8:64:x2", "2^10:2^14:x4", "0:64:+16", "3:11:4", "1:1:+1"):
        assert parse_param(f"P={text}").values == tuple(int(v) for v in parse_axis(f"P={text}").values)


@pytest.mark.parametrize("text", ["BM", "BM=", "1BM=4", "BM=4,x", "BM=4,4", "BK=8:4:+1", "BK=0:8:x2", "BK=2:8:x1",
                                  "BK=8..32*2"])
def test_bad_params_name_the_option(text):
    with pytest.raises(InputError, match="--space"):
        parse_param(text)


def test_restrictions_filter_the_product():
    sp = make_space(["A=1,2,4,8", "B=1,2,4,8"], ["A*B <= 8", "A >= B"])
    keys = [c.key for c in sp.configs()]
    expected = [f"A={a},B={b}" for a in (1, 2, 4, 8) for b in (1, 2, 4, 8) if a * b <= 8 and a >= b]
    assert keys == expected
    assert sp.full_size == 16
    assert sp.violated(Config((("A", 1), ("B", 2)))) == "A >= B"


def test_constants_and_exact_division():
    sp = make_space({"BM": [32, 48]}, ["N % BM == 0"], {"N": 2048})
    assert [c.key for c in sp.configs()] == ["BM=32"]  # 2048 % 48 != 0
    assert E.parse("N/BM", {"N", "BM"}).value({"N": 2048, "BM": 32}) == 64
    assert E.parse("N/BM", {"N", "BM"}).value({"N": 100, "BM": 32}) == pytest.approx(3.125)
    assert E.parse("cdiv(N, BM)", {"N", "BM"}).value({"N": 100, "BM": 32}) == 4
    assert E.parse("min(A, 3) if A > 1 else -1", {"A"}).value({"A": 5}) == 3
    assert E.parse("1 < A <= 4 and not A == 3", {"A"}).holds({"A": 4})


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "A.__class__", "A[0]", "lambda: 1", "'x'", "[A for A in (1,)]",
    "open('f')", "A ** 1000", "min", "eval('1')",
])
def test_unsafe_or_foreign_expressions_are_refused_or_bounded(text):
    with pytest.raises(InputError):
        E.parse(text, {"A"}).value({"A": 2})


def test_unknown_names_and_duplicates():
    with pytest.raises(InputError, match="unknown name 'Q'"):
        make_space(["A=1"], ["A < Q"])
    with pytest.raises(InputError, match="given twice"):
        make_space(["A=1", "A=2"])
    with pytest.raises(InputError, match="no parameters"):
        make_space([])


def test_launch_geometry_from_expressions():
    sp = make_space({"BM": [64], "TM": [4, 3]}, [], {"M": 256})
    spec = TuneSpec("x.cu", "k<BM,TM>", sp, ("M/BM",), ("BM/TM", "2"))
    good, err = launch_for(spec, Config((("BM", 64), ("TM", 4))))
    assert err is None and good.grid == (4, 1, 1) and good.block == (16, 2, 1) and good.threads == 32
    bad, err = launch_for(spec, Config((("BM", 64), ("TM", 3))))
    assert bad is None and "not a whole number" in err


def test_config_key_round_trip():
    c = Config((("BM", 64), ("BN", 128)))
    assert Config.from_key(c.key) == c and c.as_dict() == {"BM": 64, "BN": 128}
