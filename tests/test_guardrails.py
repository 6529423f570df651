"""The code's guardrails, run with the suite: ruff, mypy, the import-layer contract, module size.

Each tool is configured in pyproject.toml and comes with the ``test`` extra, so a failure here is a
real lint, type or layering error in ``src/``, reported with the tool's own output.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param([sys.executable, "-m", "ruff", "check", "src", "tests", "benchmarks"], id="ruff"),
        pytest.param([sys.executable, "-m", "mypy"], id="mypy"),
        pytest.param(["lint-imports"], id="import-contract"),
    ],
)
def test_guardrail_passes(argv: list[str]) -> None:
    if argv[0] == "lint-imports":
        tool = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
        if not Path(tool).exists():
            pytest.fail("lint-imports is not installed: it comes with the test extra (import-linter)")
        argv = [tool]
    done = _run(argv)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"


def test_no_module_over_500_lines() -> None:
    big = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / "src").rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert not big, f"modules over 500 lines: {big}"
