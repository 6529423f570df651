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

from cudalens.evidence.join import KernelRecord, join
from cudalens.pipeline.analysis import SCHEMA, Analysis, FileAnalysis
from cudalens.pipeline.defines import compiler_defines, macro_names
from cudalens.pipeline.measured import PROFILE_RUN, Evidence, RunSpec, gather_evidence
from cudalens.pipeline.report import Report, guided_report
from cudalens.pipeline.run import analyze
from cudalens.pipeline.stages import analyze_file

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
