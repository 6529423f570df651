"""The compiled access model on kernels of our own reproducing lines that public code measured on
the H100 and the model left without a figure (tests/access/ptx/share_patterns.cu):

- llm.c's ``__stcs(mean + idx, m)``: the intrinsic's inline PTX stores through the parameter plus an
  offset with no ``cvta``; the parameter is a pointer (a buffer), not a scalar to try at 256, 1000,
  4096 (which moved the store's sector alignment, so its figure "varied with parameters nobody gave"
  though the launch gave every scalar). One lane stores 4 bytes: 1 sector, 1 ideal; the row store
  of 32 lanes x 4 bytes: 4 sectors, 4 ideal. The part of the intrinsic ptxas places at each call
  carries the ratio of sectors to ideal sectors of that call's instructions (1.0 at both).
- a 64-bit size added to an address another parameter bases (``in[skip + i]``) stays a scalar;
- rodinia's pathfinder and gaussian: lines no thread reaches with every unknown parameter at 256
  (``tx < 256 - 2 * iteration``, ``n - 1 - t < 0``) get the range over the trials that reach them
  (the small sizes; one parameter at 0), said as trials; a line no trial reaches keeps no figure;
- llm.c's shared float atomics: their addresses' wavefronts per call (1 for a row of words, 2 for
  every other word), which the load of ptxas' compare-and-swap loop is compared with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _sources import entry, line_of
from cudalens.access.ptx_eval import evaluate
from cudalens.access.ptx_reach import REACHED_AT_SOME_TRIALS
from cudalens.access.ptx_reach import pointer_params as _pointer_params

PATTERNS = Path(__file__).parent / "ptx" / "share_patterns.cu"


@pytest.fixture(scope="module")
def module(ptx_of):
    return ptx_of(PATTERNS)



def _line(text: str) -> int:
    return line_of(PATTERNS, text)


def test_a_pointer_stored_through_with_an_offset_and_no_cvta_is_a_pointer(module):
    fn = entry(module, "stream_stats")
    assert _pointer_params(fn) == {0, 1, 2}
    ev = evaluate(module, fn, (128, 1, 1), (64, 1, 1), {3: 256, 4: 768})
    stcs = [p for p in ev.predictions if p.file.endswith("sm_32_intrinsics.hpp") and p.quantity.startswith("global store")]
    assert stcs and all(p.value is not None and p.reason == "" for p in stcs)
    bounds = {b[1]: b for p in stcs for b in p.site_bounds}
    stats, row = bounds[_line("STATS_STORE")], bounds[_line("ROW_STORE")]
    assert stats[2:4] == (1.0, 1.0) and stats[6:8] == (1.0, 1.0)  # one lane: 1 sector of 1 ideal
    assert row[2:4] == (4.0, 4.0) and row[6:8] == (1.0, 1.0)


def test_a_size_added_to_an_address_another_parameter_bases_is_a_scalar(module):
    fn = entry(module, "offset_by_size")
    assert _pointer_params(fn) == {0, 1}
    ev = evaluate(module, fn, (256, 1, 1), (4, 1, 1), {3: 1024})
    load = next(p for p in ev.predictions if p.line == _line("SKIP_LOAD") and p.quantity.startswith("global load"))
    assert len(load.trials) > 1  # skip was tried at the trial values


def test_a_line_reached_only_at_some_trials_gets_their_range_said_as_trials(module):
    # pyramid: at 256 no thread is valid; at the small trials (16, 17, 32, 33, 100) some are
    ev = evaluate(module, entry(module, "pyramid"), (256, 1, 1), (4, 1, 1))
    store = next(p for p in ev.predictions if p.line == _line("PYRAMID_COPY") and p.quantity.startswith("global store"))
    assert store.value is None and store.reason == REACHED_AT_SOME_TRIALS
    assert store.low is not None and store.high is not None and store.low <= store.high
    assert "param 0, param 3, param 4 = " in store.condition and " tried" in store.condition
    assert "256" not in store.condition.split(" tried")[0].split("= ")[1]  # not reached at the base trial
    assert store.trials[0] == (None, None, None)  # (the trials kept in PLAUSIBLE order)


def test_a_guard_every_equal_trial_fails_is_tried_with_one_parameter_at_0(module):
    # n - 1 - t < 0 whenever n = t: only the trials with t = 0 (or n = 0, by unsigned wrap) pass it
    ev = evaluate(module, entry(module, "eliminate"), (4, 4, 1), (4, 4, 1))
    store = next(p for p in ev.predictions if p.line == _line("ELIMINATE_ROW") and p.quantity.startswith("global store"))
    assert store.reason == REACHED_AT_SOME_TRIALS and "param 3 = 0 with the others = 256 tried" in store.condition
    assert store.low is not None and store.high == 4.0  # 4 rows of 4 floats at t = 0: 4 sectors


def test_a_line_no_trial_reaches_stays_without_a_figure(module):
    ev = evaluate(module, entry(module, "never"), (256, 1, 1), (2, 1, 1))
    store = next(p for p in ev.predictions if p.line == _line("NEVER_STORE") and p.quantity.startswith("global store"))
    assert store.value is None and store.low is None and store.reason.startswith("not a data dependence: not reached")


def test_a_shared_atomics_addresses_get_their_wavefronts_per_call(module):
    # atomicAdd is CUDA's inline function: its instruction's figure is per call in site_bounds
    ev = evaluate(module, entry(module, "shared_sums"), (256, 1, 1), (4, 1, 1), {2: 0})
    atomic = [p for p in ev.predictions if p.quantity == "shared atomic wavefronts/request"]
    assert atomic and all(p.value is not None for p in atomic)
    bounds = {b[1]: b for p in atomic for b in p.site_bounds}
    assert bounds[_line("ROW_ATOMIC")][2:6] == (1.0, 1.0, 1.0, 1.0)  # 32 lanes, 32 words of one row
    assert bounds[_line("STRIDED_ATOMIC")][2:6] == (2.0, 2.0, 2.0, 2.0)  # every other word: 2 rows
