"""A rich console for reports: a TTY's width and colours, else no width limit and no colour codes;
text from files and names shown inert."""

from __future__ import annotations

from typing import Any


def report_console(file: Any = None, terminal: bool = False) -> Any:
    """A rich console for a report: the terminal's width on a TTY; piped or written to a file, no
    width limit (a value is never cut or wrapped at 80 columns) and no colour codes. Text from files
    and names (terminal escapes, bidirectional overrides) is shown inert. ``terminal``: ``file`` stands
    for a TTY (the report is rendered elsewhere and printed there)."""
    import sys

    from rich.console import Console

    class SafeConsole(Console):
        def print(self, *objects: Any, **kw: Any) -> None:
            from rich.table import Table
            from rich.text import Text

            from cudalens.textio import neutral

            def safe(o: Any) -> Any:
                if isinstance(o, str):
                    return neutral(o)
                if isinstance(o, Text):
                    return Text(neutral(o.plain), style=o.style, justify=o.justify, spans=o.spans)
                if isinstance(o, Table):  # its cells, in place
                    for col in o.columns:
                        col._cells[:] = [safe(c) for c in col._cells]
                return o

            super().print(*[safe(o) for o in objects], **kw)

    stream = file if file is not None else sys.stdout
    if file is None and stream.isatty():
        return SafeConsole()
    if terminal:  # a report rendered (in a worker) for the terminal: its width and colours
        import shutil

        return SafeConsole(file=stream, force_terminal=True, width=shutil.get_terminal_size().columns)
    return SafeConsole(file=stream, width=100_000, soft_wrap=True, force_terminal=False, color_system=None)
