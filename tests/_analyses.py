"""The files the pipeline analyses again, for the tests of what a cached run skips."""

from __future__ import annotations

from pathlib import Path


def counting(monkeypatch) -> list[str]:
    """From now on, the name of every file ``pipeline.stages.analyze_file`` analyses, in order."""
    from cudalens.pipeline import stages

    seen: list[str] = []
    real = stages.analyze_file

    def counted(path, **kw):
        seen.append(Path(path).name)
        return real(path, **kw)

    monkeypatch.setattr(stages, "analyze_file", counted)
    return seen
