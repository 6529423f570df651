"""What rules read: every fact established for one analyzed file, by layer.

Fields are ``None`` when that layer was not run (no compiler, no GPU, no counters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AnalysisContext:
    source: Any  # cudalens.source.model.SourceModel
    cc: str = "9.0"  # target compute capability
    compiled: dict[str, Any] | None = None  # kernel name -> cudalens.compiled facts
    launch: dict[str, Any] = field(default_factory=dict)  # kernel name -> launch facts (block, grid, smem)
    measurement: dict[str, Any] | None = None
    counters: dict[str, Any] | None = None
    binary: Any = None  # cudalens.compiled.fatbin.FatbinContents of a built executable/object (rule Y3)
