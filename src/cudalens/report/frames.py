"""Code frames under a finding (``--show-source``), as ruff and clang-tidy print them::

    saxpy.cu:12:5: G1 [high] stride-32 access ...
       |
    11 |   int i = blockIdx.x * blockDim.x + threadIdx.x;
    12 |   y[i * 32] = a * x[i];
       |   ^
       |

The line before the finding's (context), its own line, and a caret under its column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from cudalens.findings import Finding


class SourceText:
    """Each file's lines, read once (the analysis's own text where it has it)."""

    def __init__(self, texts: dict[str, str] | None = None) -> None:
        self._lines = {path: text.splitlines() for path, text in (texts or {}).items()}

    def __call__(self, path: str) -> list[str]:
        if path not in self._lines:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    self._lines[path] = fh.read().splitlines()
            except OSError:
                self._lines[path] = []
        return self._lines[path]


def code_frame(lines: Sequence[str], line: int | None, column: int | None = None, context: int = 1) -> list[str]:
    """The frame of ``line`` (1-based) in ``lines``: ``context`` lines before it, the line, a
    caret under ``column``; [] when the line is unknown or outside the file. Tabs become spaces so
    the caret stays under its character."""
    if not line or not 0 < line <= len(lines):
        return []
    first = max(1, line - context)
    width = len(str(line))
    gutter = " " * width + " |"
    out = [gutter]
    for n in range(first, line + 1):
        text = lines[n - 1].expandtabs(4).rstrip()
        out.append(f"{n:>{width}} | {text}" if text else f"{n:>{width}} |")
    raw = lines[line - 1]
    col = column if column and column > 0 else len(raw) - len(raw.lstrip()) + 1
    caret_at = len(raw[:col - 1].expandtabs(4))
    out.append(f"{gutter} {' ' * caret_at}^")
    out.append(gutter)
    return out


def finding_frame(f: Finding, source: Callable[[str], Sequence[str]], indent: str = "") -> list[str]:
    """``f``'s code frame from ``source`` (path -> lines), each line indented."""
    return [indent + row for row in code_frame(source(f.file), f.line, f.column)] if f.file else []


def with_frames(lines: Iterable[str], findings: Iterable[Finding], source: Callable[[str], Sequence[str]],
                indent: str = "") -> list[str]:
    """One-line findings (``lines``, one per finding in the same order) each followed by its frame."""
    out: list[str] = []
    for text, f in zip(lines, findings):
        out.append(text)
        out += finding_frame(f, source, indent)
    return out
