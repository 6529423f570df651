import numpy as np
import pytest

from cudalens.measure.stats import (
    bootstrap_median_ci,
    compare,
    fails_threshold,
    parse_percent,
    relative_stdev,
    summarize,
    verdict_from_intervals,
)


def test_summary_matches_numpy_on_random_data():
    x = np.random.default_rng(1).gamma(5.0, 2e-6, size=301)
    s = summarize(x)
    assert s.n == 301
    assert s.median == pytest.approx(np.median(x))
    assert s.mean == pytest.approx(x.mean())
    assert s.rel_stdev == pytest.approx(x.std(ddof=1) / x.mean())
    q1, q3 = np.percentile(x, [25, 75])
    assert s.iqr == pytest.approx(q3 - q1)
    assert s.min == x.min() and s.max == x.max()
    assert s.ci_low <= s.median <= s.ci_high


def test_bootstrap_ci_is_seeded_and_covers_true_median_mostly():
    rng = np.random.default_rng(7)
    a = rng.normal(10.0, 1.0, 200)
    assert bootstrap_median_ci(a) == bootstrap_median_ci(a)
    hits = 0
    for i in range(60):
        x = rng.normal(10.0, 1.0, 100)
        lo, hi = bootstrap_median_ci(x, seed=i, resamples=500)
        hits += lo <= 10.0 <= hi
    assert hits >= 50  # nominal 95 %: 60 trials, allow for the percentile bootstrap's undercoverage


def test_relative_stdev_needs_two_values():
    assert relative_stdev([1.0]) == float("inf")
    assert relative_stdev([1.0, 1.0]) == 0.0


def test_verdicts():
    assert verdict_from_intervals((1.0, 2.0), (2.5, 3.0)) == "SLOWER"
    assert verdict_from_intervals((2.5, 3.0), (1.0, 2.0)) == "FASTER"
    assert verdict_from_intervals((1.0, 2.0), (1.5, 3.0)) == "SAME"


def test_compare_detects_a_ten_percent_slowdown_but_not_noise():
    rng = np.random.default_rng(3)
    a = 100e-6 * (1 + 0.01 * rng.standard_normal(100))
    b = 110e-6 * (1 + 0.01 * rng.standard_normal(100))
    c = compare(a, b)
    assert c.verdict == "SLOWER" and c.ratio == pytest.approx(1.10, rel=0.01)
    assert fails_threshold(c, 0.05) and not fails_threshold(c, 0.20)
    same = compare(a, 100e-6 * (1 + 0.01 * rng.standard_normal(100)))
    assert same.verdict == "SAME" and not fails_threshold(same, 0.0)
    assert compare(b, a).verdict == "FASTER"


@pytest.mark.parametrize("text,value", [("5%", 0.05), ("0.05", 0.05), ("5", 0.05), ("12.5%", 0.125)])
def test_parse_percent(text, value):
    assert parse_percent(text) == pytest.approx(value)


def test_parse_percent_rejects_words():
    with pytest.raises(ValueError):
        parse_percent("five")
