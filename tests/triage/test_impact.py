"""Runs per thread from loop trip counts, and priorities the guide leaves to the cost."""

from __future__ import annotations

from cudalens.findings import Finding, Priority
from cudalens.source.model import Loop
from cudalens.source.trips import UNKNOWN_TRIPS, trip_count
from cudalens.triage.impact import derived_priority


def _loop(start, cond, step, line=1, end=5):
    return Loop(line, end, "for", "i", "int", start, cond, step)


def test_trip_counts_from_literals_and_defines():
    assert trip_count(_loop("int i = 0", "i < 16", "++i")) == (16.0, "literal")
    assert trip_count(_loop("int i = 0", "i <= 15", "i++")) == (16.0, "literal")
    assert trip_count(_loop("int i = 0", "i < 32", "i += 4")) == (8.0, "literal")
    assert trip_count(_loop("0", "j < 4", "1")) == (4.0, "literal")  # the model's additive step amount
    assert trip_count(_loop("-8", "k <= 8", "1")) == (17.0, "literal")
    assert trip_count(_loop("0", "i < (BINS / 4)", "1"), {"BINS": "64"}) == (16.0, "literal")  # an expression
    assert trip_count(_loop("0", "i < BINS * n", "1"), {"BINS": "64"}) == (UNKNOWN_TRIPS, "assumed")
    assert trip_count(_loop("int k = 0", "k < TILE", "++k"), {"TILE": "32"}) == (32.0, "literal")
    assert trip_count(_loop("int s = 128", "s > 0", "s >>= 1")) == (8.0, "literal")
    assert trip_count(_loop("int i = 0", "i < n", "++i")) == (UNKNOWN_TRIPS, "assumed")
    assert trip_count(_loop("int i = tid", "i < n", "i += blockDim.x * gridDim.x")) == (1.0, "grid-stride")


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
