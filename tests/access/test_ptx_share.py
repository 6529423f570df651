"""The compiled access model on kernels of our own reproducing lines that public code measured on
the H100 and the model left without a figure (tests/access/ptx/share_patterns.cu):

- llm.c's ``__stcs(mean + idx, m)``: the intrinsic's inline PTX stores through the parameter plus an
  offset with no ``cvta``; the parameter is a pointer (a buffer), not a scalar to try at 256, 1000,
  4096 (which moved the store's sector alignment, so its figure "varied with parameters nobody gave"
  though the launch gave every scalar). One lane stores 4 bytes: 1 sector, 1 ideal; the row store
  of 32 lanes x 4 bytes: 4 sectors, 4 ideal. The part of the intrinsic ptxas places at each call
  carries the ratio of sectors to ideal sectors of that call's instructions (1.0 at both).
- a 64-bit size added to an address another parameter bases (``in[skip + i]``) stays a scalar.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.access.ptx_eval import _pointer_params, evaluate

PATTERNS = Path(__file__).parent / "ptx" / "share_patterns.cu"


@pytest.fixture(scope="module")
def module(ptx_of):
    return ptx_of(PATTERNS)


def _fn(module, name):
    return next(f for f in module.entries if name in f.name)


def _line(text: str) -> int:
    return next(i for i, t in enumerate(PATTERNS.read_text().splitlines(), 1) if text in t)


def test_a_pointer_stored_through_with_an_offset_and_no_cvta_is_a_pointer(module):
    fn = _fn(module, "stream_stats")
    assert _pointer_params(fn) == {0, 1, 2}
    ev = evaluate(module, fn, (128, 1, 1), (64, 1, 1), {3: 256, 4: 768})
    stcs = [p for p in ev.predictions if p.file.endswith("sm_32_intrinsics.hpp") and p.quantity.startswith("global store")]
    assert stcs and all(p.value is not None and p.reason == "" for p in stcs)
    bounds = {b[1]: b for p in stcs for b in p.site_bounds}
    stats, row = bounds[_line("STATS_STORE")], bounds[_line("ROW_STORE")]
    assert stats[2:4] == (1.0, 1.0) and stats[6:8] == (1.0, 1.0)  # one lane: 1 sector of 1 ideal
    assert row[2:4] == (4.0, 4.0) and row[6:8] == (1.0, 1.0)


def test_a_size_added_to_an_address_another_parameter_bases_is_a_scalar(module):
    fn = _fn(module, "offset_by_size")
    assert _pointer_params(fn) == {0, 1}
    ev = evaluate(module, fn, (256, 1, 1), (4, 1, 1), {3: 1024})
    load = next(p for p in ev.predictions if p.line == _line("SKIP_LOAD") and p.quantity.startswith("global load"))
    assert len(load.trials) > 1  # skip was tried at the trial values
