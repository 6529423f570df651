"""Real paths (:func:`os.path.realpath`) worked out once per run.

An analysis asks for the real paths of the same few files thousands of times (each launch's site,
each compiled line's file, each inlined access's file), and each answer costs a system call per path
component: about 4 % of a file's analysis on llm.c. The answers are kept for the run: :func:`forget`
is called where a run starts (:func:`cudalens.pipeline.batch.analyze_files`), so a long-lived process
(the Python API) sees a link changed between two runs.
"""

from __future__ import annotations

import functools
import os


@functools.lru_cache(maxsize=1 << 14)
def real_path(path: str) -> str:
    """``os.path.realpath(path)``, once per run for each ``path``."""
    return os.path.realpath(path)


def forget() -> None:
    """Drop the kept answers (a new run starts)."""
    real_path.cache_clear()
