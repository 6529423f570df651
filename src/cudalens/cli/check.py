"""`cudalens check DIR`: analyze every CUDA file of a directory, for CI.

Finds every ``.cu`` and ``.cuh`` file under DIR (sorted, hidden directories and files skipped),
analyzes them together and prints a compact summary per file, the analysis JSON, or a SARIF 2.1.0
log for code-scanning tools. ``--fail-on`` turns findings at or above a priority into exit code 1.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from cudalens.errors import InputError
from cudalens.findings import Priority

CUDA_SUFFIXES = (".cu", ".cuh")


def cuda_files(directory: str) -> list[str]:
    """Every .cu/.cuh file under ``directory``, sorted; hidden directories and files are skipped."""
    root = Path(directory)
    if not root.exists():
        raise InputError(f"{directory}: no such directory")
    if not root.is_dir():
        raise InputError(f"{directory}: not a directory")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [os.path.join(dirpath, f) for f in filenames if f.endswith(CUDA_SUFFIXES) and not f.startswith(".")]
    if not found:
        raise InputError(f"{directory}: no .cu or .cuh files found")
    return sorted(found)


def summary_lines(result) -> list[str]:
    """One header per file (finding counts by priority), then one line per finding."""
    lines = []
    total: dict[str, int] = {}
    for fa in result.files:
        counts: dict[str, int] = {}
        for f in fa.findings:
            counts[f.priority.value] = counts.get(f.priority.value, 0) + 1
            total[f.priority.value] = total.get(f.priority.value, 0) + 1
        tally = ", ".join(f"{counts[p.value]} {p.value}" for p in Priority if p.value in counts) or "no findings"
        lines.append(f"{fa.model.path}: {tally}")
        for f in fa.findings:
            where = f"{f.line:>5}" if f.line else "    -"
            lines.append(f"  {where}  {f.priority.value:<10} {f.rule:<5} {f.message}")
        lines += [f"  note: {n}" for n in fa.notes]
    tally = ", ".join(f"{total[p.value]} {p.value}" for p in Priority if p.value in total) or "no findings"
    lines.append(f"{len(result.files)} file(s): {tally}")
    return lines


def register(group: click.Group) -> None:
    @group.command("check")
    @click.argument("directory", metavar="DIR")
    @click.option("--fail-on", type=click.Choice(["high", "medium", "low"]), default=None,
                  help="Exit 1 when findings at or above this priority exist.")
    @click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
                  show_default=True, help="Output format (sarif: SARIF 2.1.0 for code scanning).")
    @click.option("-o", "--output", default=None, metavar="FILE", help="Write the output to FILE instead of stdout.")
    @click.option("--no-compile", is_flag=True, help="Source-only analysis (skip nvcc).")
    @click.option("--cc", default="9.0", show_default=True, help="Target compute capability.")
    @click.option("--define", "-D", "defines", multiple=True, metavar="NAME=VALUE",
                  help="Value of a kernel parameter, template parameter or macro (repeatable).")
    def check_cmd(directory, fail_on, fmt, output, no_compile, cc, defines):
        """Analyze every .cu/.cuh file under DIR; exit 1 with --fail-on when findings reach it."""
        from cudalens.access.model import parse_defines
        from cudalens.analyze import analyze

        try:
            defs = parse_defines(list(defines))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        result = analyze(cuda_files(directory), defines=defs, cc=cc, compile=not no_compile)
        if fmt == "json":
            text = json.dumps(result.to_dict(), indent=2, default=str)
        elif fmt == "sarif":
            from cudalens.report.sarif import to_sarif
            from cudalens.rules.registry import load_all

            text = json.dumps(to_sarif(result.findings, load_all(), root=directory), indent=2)
        else:
            text = "\n".join(summary_lines(result))
        if output:
            try:
                Path(output).write_text(text + "\n", encoding="utf-8")
            except OSError as exc:
                raise InputError(f"{output}: cannot write ({exc.strerror})") from None
        else:
            click.echo(text)
        if fail_on and result.at_or_above(Priority.parse(fail_on)):
            return 1
        return 0
