"""The static analyzer's verdict on each lab's bad/good kernel pair: the bad kernel is flagged
with the lab's catalog rule, the good one is not."""

from __future__ import annotations

import pytest

from cudalens.labs import all_labs
from cudalens.labs.runner import kernel_path

PAIRS = [(lab, pair) for lab in all_labs() if lab.kernel_file for pair in lab.pairs]
BLOCKS = {"matmul.cu": (32, 32, 1)}


_CACHE: dict = {}


def _analyze(file):
    try:
        from cudalens.pipeline import analyze_file
    except ImportError as exc:
        pytest.skip(f"cudalens.pipeline not available ({exc})")
    if file not in _CACHE:  # compile=True: some rules (L1, I6) read the compiled layer
        _CACHE[file] = analyze_file(kernel_path(file), block=BLOCKS.get(file, (256, 1, 1)), compile=True)
    return _CACHE[file]


@pytest.mark.parametrize("lab,pair", PAIRS, ids=[f"{lab.name}:{p.rule}:{p.bad}" for lab, p in PAIRS])
def test_bad_flagged_good_clean(lab, pair):
    from cudalens.rules.registry import load_all
    if pair.rule not in load_all():
        pytest.skip(f"rule {pair.rule} has no detector in cudalens.rules yet")
    result = _analyze(lab.kernel_file)
    flagged = {f.kernel for f in result.findings if f.rule == pair.rule}
    assert pair.bad in flagged, f"{pair.rule} not reported on {pair.bad}: {sorted(flagged)}"
    assert pair.good not in flagged, f"{pair.rule} wrongly reported on {pair.good}"
