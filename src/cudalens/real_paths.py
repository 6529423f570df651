"""Real paths (:func:`os.path.realpath`) worked out once per file's analysis.

An analysis asks for the real paths of the same few files thousands of times (each launch's site,
each compiled line's file, each inlined access's file), and each answer costs a system call per path
component: about 4 % of a file's analysis on llm.c. The answers are kept for one file's analysis:
:func:`forget` is called where it starts (:func:`cudalens.pipeline.stages.analyze_file`), so a
long-lived process (the Python API) sees a link changed between two runs.
"""

from __future__ import annotations

import functools
import os


@functools.lru_cache(maxsize=1 << 14)
def real_path(path: str) -> str:
    """``os.path.realpath(path)``, once per analysis for each ``path``."""
    return os.path.realpath(path)


def forget() -> None:
    """Drop the kept answers (a new analysis starts)."""
    real_path.cache_clear()
