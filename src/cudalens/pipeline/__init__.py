"""The analysis pipeline: parse → model → compile → join → rules → confirm → rank → serialize.

It schedules the layers and runs the rules on them; the per-kernel facts it schedules live in
:mod:`cudalens.evidence` (join, compiled access model, its figures, model workers).

- :mod:`~cudalens.pipeline.stages`: one file through every stage (:func:`analyze_file`), and many
  (:func:`analyze`);
- :mod:`~cudalens.pipeline.confirm`: source findings confirmed or downgraded by the compiled code;
- :mod:`~cudalens.pipeline.analysis`: the records of an analysis and their JSON (serialization only);
- :mod:`~cudalens.pipeline.defines`: which ``--define`` values reach the compiler;
- :mod:`~cudalens.pipeline.measured`: a measured launch and Nsight Compute counters;
- :mod:`~cudalens.pipeline.report`: one typed :class:`Report` of analyze, check or profile, the
  analysis merged with the evidence (what every emitter reads and the Python API returns);
- :mod:`~cudalens.pipeline.line_checks`: each prediction checked against its own line's
  instructions (ncu's source page), V1 findings naming the line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cudalens.evidence.join import KernelRecord, join
    from cudalens.pipeline.analysis import SCHEMA, Analysis, FileAnalysis
    from cudalens.pipeline.defines import compiler_defines, macro_names
    from cudalens.pipeline.measured import PROFILE_RUN, Evidence, RunSpec, gather_evidence
    from cudalens.pipeline.report import Report, guided_report
    from cudalens.pipeline.run import analyze
    from cudalens.pipeline.stages import analyze_file

#: each name's module, imported on first use: reading a cached analysis (pipeline.analysis) or the
#: per-file limits (pipeline.isolated) does not import the stages, the models and numpy (issue #29)
_WHERE = {
    "KernelRecord": "cudalens.evidence.join", "join": "cudalens.evidence.join",
    "SCHEMA": "cudalens.pipeline.analysis", "Analysis": "cudalens.pipeline.analysis",
    "FileAnalysis": "cudalens.pipeline.analysis",
    "compiler_defines": "cudalens.pipeline.defines", "macro_names": "cudalens.pipeline.defines",
    "PROFILE_RUN": "cudalens.pipeline.measured", "Evidence": "cudalens.pipeline.measured",
    "RunSpec": "cudalens.pipeline.measured", "gather_evidence": "cudalens.pipeline.measured",
    "Report": "cudalens.pipeline.report", "guided_report": "cudalens.pipeline.report",
    "analyze": "cudalens.pipeline.run", "analyze_file": "cudalens.pipeline.stages",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROFILE_RUN",
    "Report",
    "SCHEMA",
    "Analysis",
    "Evidence",
    "FileAnalysis",
    "KernelRecord",
    "RunSpec",
    "analyze",
    "analyze_file",
    "compiler_defines",
    "gather_evidence",
    "guided_report",
    "join",
    "macro_names",
]
