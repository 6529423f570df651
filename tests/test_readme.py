"""The README's Python examples run as doctests: each ```python block holding ``>>>`` lines, from the
repository root. A block under ``<!-- doctest: needs GPU -->`` runs where there is a GPU, one under
``<!-- doctest: no GPU -->`` where there is none (what the API says without one)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"(?:<!-- doctest: (?P<mark>[^>]*?) -->\s*\n)?```python\n(?P<code>.*?)```", re.S)


def _blocks() -> list[tuple[int, str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 1, m.group("mark") or "", m.group("code"))
            for m in _BLOCK.finditer(text) if ">>>" in m.group("code")]


BLOCKS = _blocks()


def test_the_readme_has_api_examples():
    code = "\n".join(c for _, _, c in BLOCKS)
    for name in ("analyze", "check", "occupancy", "profile", "tune", "bench"):
        assert f"cudalens.{name}(" in code, name
    assert {mark for _, mark, _ in BLOCKS} == {"", "needs GPU", "no GPU"}


@pytest.mark.parametrize("line,mark,code", BLOCKS, ids=[f"README.md:{b[0]}" for b in BLOCKS])
def test_readme_example(line, mark, code, monkeypatch):
    from cudalens.hardware.target import device_cc

    gpu = device_cc() is not None
    if mark == "needs GPU" and not gpu:
        pytest.skip("needs a GPU")
    if mark == "no GPU" and gpu:
        pytest.skip("shows what happens without a GPU")
    monkeypatch.chdir(ROOT)
    test = doctest.DocTestParser().get_doctest(code, {}, f"README.md:{line}", str(ROOT / "README.md"), line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
