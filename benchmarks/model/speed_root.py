"""The speed root's public units, prepared as ``benchmarks/model/ptx_model_speed.py`` runs them, for the
scripts beside it that run the compiled model on them (``ptx_lane_steps.py``, ``ptx_model_callgrind.py``).

Works with the code of 7e8b909 (``cudalens.pipeline.compiled_access``, no ``worker`` argument) and later
(``cudalens.evidence.compiled_access``): the checkout measured is the one first on PYTHONPATH.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cudalens.access.model import analyze_model
from cudalens.pipeline.defines import compiler_defines
from cudalens.source.limits import Budget
from cudalens.source.parse import parse_file

try:
    from cudalens.evidence.compiled_access import compiled_access
except ImportError:  # 7e8b909
    from cudalens.pipeline.compiled_access import compiled_access  # type: ignore[no-redef]

#: whether this code's compiled_access takes a worker (looked up once, outside the runs measured)
_TAKES_WORKER = "worker" in inspect.signature(compiled_access).parameters


def units(root: Path, names: list[str] | None = None,
          budget: dict[str, float] | None = None) -> Iterator[tuple[dict, Any, str]]:
    """(plan entry, source model, PTX text) of each public unit of ``root`` (those whose name holds one of
    ``names``, when given); ``budget``: the source parse's ``Budget`` arguments (default: the default)."""
    plan = json.loads((root / "plan.json").read_text())
    for u in plan["units"]:
        if u["project"] == "own" or (names is not None and not any(s in u["tu"] for s in names)):
            continue
        b = Budget(**(budget or {}))
        yield u, analyze_model(parse_file(u["source"], (), b), budget=b), (root / u["ptx"]).read_text(errors="replace")


def run(unit: dict, model: Any, text: str) -> Any:
    """``compiled_access`` on one prepared unit, in this process alone (no worker), as the speed script's
    ``--serial``."""
    kw: dict = {"flags": (), "sass_lds": None, "ptx": text}
    if _TAKES_WORKER:
        kw["worker"] = None
    return compiled_access(unit["source"], model, "9.0", compiler_defines(model, {}), **kw)
