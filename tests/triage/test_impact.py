"""Runs per thread from loop trip counts, and priorities the guide leaves to the cost."""

from __future__ import annotations

from cudalens.findings import Finding, Priority
from cudalens.rules.priority import derived_priority
from cudalens.source.model import Loop
from cudalens.source.trips import DATA_TRIPS, TRIAL_VALUES, loop_trips, trip_count


def _loop(start, cond, step, line=1, end=5):
    return Loop(line, end, "for", "i", "int", start, cond, step)


def test_trip_counts_from_literals_and_defines():
    assert trip_count(_loop("int i = 0", "i < 16", "++i")) == (16.0, "literal")
    assert trip_count(_loop("int i = 0", "i <= 15", "i++")) == (16.0, "literal")
    assert trip_count(_loop("int i = 0", "i < 32", "i += 4")) == (8.0, "literal")
    assert trip_count(_loop("0", "j < 4", "1")) == (4.0, "literal")  # the model's additive step amount
    assert trip_count(_loop("-8", "k <= 8", "1")) == (17.0, "literal")
    assert trip_count(_loop("0", "i < (BINS / 4)", "1"), {"BINS": "64"}) == (16.0, "literal")  # an expression
    assert trip_count(_loop("0", "i < BINS * n", "1"), {"BINS": "64"}) == (None, "unknown")
    assert trip_count(_loop("int k = 0", "k < TILE", "++k"), {"TILE": "32"}) == (32.0, "literal")
    assert trip_count(_loop("int s = 128", "s > 0", "s >>= 1")) == (8.0, "literal")
    assert trip_count(_loop("int i = 0", "i < n", "++i")) == (None, "unknown")
    assert trip_count(_loop("int i = tid", "i < n", "i += blockDim.x * gridDim.x")) == (1.0, "grid-stride")


class _Range:  # the launch layer's ValueRange, as loop_trips reads it
    def __init__(self, lo, hi, condition):
        self.lo, self.hi, self.condition = lo, hi, condition


def test_loop_trips_from_the_launch_an_input_range_a_trial_range_never_a_silent_constant():
    scan = _loop("int j = 0", "j < n", "++j")
    t = loop_trips(scan, {}, {"n": 100000}, {"n"})
    assert (t.value, t.basis, t.lo) == (100000.0, "launch", None) and "n = 100000" in t.describe()
    half = loop_trips(_loop("int j = 0", "j < n / 2", "++j"), {}, {"n": _Range(1000, 4000, "from argv[1]")}, {"n"})
    assert (half.basis, half.lo, half.hi) == ("input range", 500.0, 2000.0)
    assert half.value == 1000.0 and "from argv[1]" in half.describe() and "geometric middle" in half.describe()
    trial = loop_trips(scan, {}, {}, {"n"})
    assert (trial.basis, trial.lo, trial.hi) == ("trial range", *map(float, TRIAL_VALUES))
    assert trial.value == (TRIAL_VALUES[0] * TRIAL_VALUES[1]) ** 0.5 and "n not known from any launch" in trial.describe()
    data = loop_trips(_loop("int j = start", "j < end", "++j"), {}, {}, {"n"})  # a bound the kernel computes
    assert (data.basis, data.lo, data.hi) == ("trial range", *map(float, DATA_TRIPS)) and "`j < end`" in data.describe()
    assert loop_trips(_loop("int k = 0", "k < TILE", "++k"), {"TILE": "32"}, {"TILE": 7}).basis == "literal"
    assert loop_trips(scan, {"n": "64"}, {"n": 100000}).value == 64.0  # --define wins over the launch
    block = _loop("int i = tid", "i < n", "i += blockDim.x")  # a block-stride loop: n / blockDim.x per thread
    t = loop_trips(block, {}, {"n": 100000}, {"n"}, block_x=256)
    assert (t.value, t.basis) == (391.0, "launch") and "blockDim.x = 256" in t.describe()
    assert loop_trips(block, {}, {}, {"n"}, block_x=256).hi == TRIAL_VALUES[1] / 256
    assert loop_trips(block, {}, {"n": 100000}, {"n"}).basis == "trial range"  # the block not known


def _f(rule, impact, runs, pri=Priority.INFO, advisory=False):
    f = Finding(rule, pri, "s", "k", "k.cu", 3, "m", "fix", impact=impact, runs=runs)
    return __import__("dataclasses").replace(f, advisory=True) if advisory else f


def test_derived_priority_only_where_the_guide_gives_none():
    assert derived_priority(_f("SH1", 0.97, 16.0), kernel_wide=False) is Priority.MEDIUM
    assert derived_priority(_f("SH1", 0.97, 1.0), kernel_wide=False) is Priority.LOW
    assert derived_priority(_f("E1", 0.75, 1.0), kernel_wide=True) is Priority.MEDIUM
    assert derived_priority(_f("SH1", 0.1, 16.0), kernel_wide=False) is Priority.INFO
    assert derived_priority(_f("I2", 0.9, 16.0, Priority.MEDIUM_LOW), kernel_wide=False) is Priority.MEDIUM_LOW
    assert derived_priority(_f("E6", 0.9, 16.0, advisory=True), kernel_wide=True) is Priority.INFO  # advisory
