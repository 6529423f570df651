"""Registers' forms (cudalens.access.ptx_exec) only let the lane machine skip conversions that would
change nothing: with every shortcut turned off (each read converts, each store converts) every
prediction on our kernels is the same."""

from __future__ import annotations

from pathlib import Path

import pytest

import cudalens.access.ptx_decode as ptx_decode
import cudalens.access.ptx_exec as ptx_exec
from cudalens.access.ptx_eval import evaluate

KERNELS = [Path(__file__).parent / "ptx" / n for n in ("features.cu", "realworld_patterns.cu")]


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_forms_change_no_prediction(path, ptx_of, monkeypatch):
    module = ptx_of(path)
    with_forms = [evaluate(module, fn, (128, 1, 1), (2, 1, 1)) for fn in module.entries]
    monkeypatch.setattr(ptx_exec, "_same_as", lambda form, typ: typ == "pred")
    monkeypatch.setattr(ptx_exec, "_stored_form", lambda form, typ: (False, ""))
    monkeypatch.setattr(ptx_decode, "_same_forms", lambda typ: frozenset())  # (decoded reads: Machine.read's)
    without = [evaluate(module, fn, (128, 1, 1), (2, 1, 1)) for fn in module.entries]
    assert len(with_forms) == len(without) >= 5
    for a, b in zip(with_forms, without):
        assert a.predictions == b.predictions and a.loops == b.loops and a.complete == b.complete
