"""Hypothesis drives the fuzz harness's mutations over our own corpus on every commit: a few
hundred mutated files, each analysed in process (no compile) as `cudalens analyze --no-compile`
would, must give a report or a clean InputError, with every user-facing line in our own words.
The long run over public code is ``benchmarks/check/fuzz_analyzer.py`` (see benchmarks/results/cpu/fuzz.json)."""

from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fuzz_analyzer", ROOT / "benchmarks" / "check" / "fuzz_analyzer.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

CORPUS = fuzz.corpus_files([], 200_000)
BLOBS = [p.read_bytes() for p in CORPUS]


def test_corpus_is_our_own_kernels():
    assert len(CORPUS) >= 50
    assert all(ROOT in p.parents for p in CORPUS)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(min_value=0, max_value=len(BLOBS) - 1), seed=st.integers(min_value=0, max_value=2**32))
def test_mutated_corpus_never_crashes(index, seed, tmp_path_factory):
    data, applied = fuzz.mutate(BLOBS[index], random.Random(seed))
    res = fuzz.analyse_bytes(data, str(tmp_path_factory.mktemp("fuzz")))
    if res["outcome"] == "rejected":
        assert not fuzz.PY_EXC.search(res["message"]), (CORPUS[index].name, applied, res["message"])
        return
    bad = [line for line in res["lines"] if fuzz.PY_EXC.search(line)]
    assert not bad, (CORPUS[index].name, applied, bad[:3])


def test_harness_flags_python_exception_names():
    assert fuzz.PY_EXC.search("rule I1 failed: RecursionError: maximum recursion depth exceeded")
    assert not fuzz.PY_EXC.search("kernel k: unmodelled: nesting too deep (more than 200 levels at line 9)")
    assert re.search(r"parse error at line \d+", "x.cu: parse error at line 3")
