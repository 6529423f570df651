"""Terminal rendering of an analysis (rich): findings grouped by kernel, then the access table;
for a guided report, the first things to do, the speed of light and predicted versus measured."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cudalens.report.quiet import speedup_text
from cudalens.textio import printable

if TYPE_CHECKING:  # annotations only: check's text summary renders with no guided analysis (nor numpy) loaded
    from cudalens.evidence.join import KernelRecord
    from cudalens.guided.merge import Guided

_COLORS = {"high": "bold red", "medium": "yellow", "medium-low": "cyan", "low": "blue", "info": "dim"}


def render_analysis(analysis: Any, console: Console, show_accesses: bool = True,
                    findings: list[Any] | None = None, source: Any = None) -> None:
    """Print findings grouped by kernel (priority, then impact) and each kernel's access verdicts.
    ``source`` (path -> lines): each finding's code frame under it (--show-source).

    ``findings`` replaces the analysis' own (e.g. the guided report's, re-ranked, with V1 added),
    printed in the order given.
    """
    findings = analysis.findings if findings is None else list(findings)
    for fa in analysis.files:
        console.print(Text(printable(fa.model.path), style="bold"))
        for note in fa.notes:
            console.print(Text(f"  note: {note}", style="dim"))
        for p in fa.model.problems[:5]:
            console.print(Text(f"  not modelled: {p}", style="dim"))
        if not fa.model.kernels:
            console.print("  no __global__ kernels found")
        for rec in fa.kernels:
            k = rec.kernel
            block = "x".join(map(str, k.block_dims)) if k.block_dims else "?"
            came = f"; {k.launch.describe()}" if k.launch is not None else ""
            console.print(Text(f"\n  kernel {k.name} (line {k.line}, block {block}{came})", style="bold cyan"))
            if rec.resources is not None:
                console.print(Text(_compiled_line(rec, analysis.cc), style="magenta"))
            mine = [f for f in findings if f.kernel == k.name and f.file == k.file]
            if not mine:
                console.print("    no findings")
            for f in mine:
                impact = f" [{f.impact:.0%} {f.impact_text}]" if f.impact is not None and f.impact_text else ""
                line = Text("    ")
                line.append(f"{speedup_text(f):>5} ")
                line.append(f"{f.priority.value:<10}", style=_COLORS.get(f.priority.value, ""))
                line.append(f" {f.rule:<4} line {f.line}: {f.message}{impact}")
                console.print(line)
                _frame(console, f, source)
                console.print(Text(f"               fix: {f.fix}", style="green"))
            if show_accesses and (k.accesses or k.branches):
                console.print(_access_table(k))
        other = [f for f in findings if f.file == fa.model.path and f.kernel not in {k.name for k in fa.model.kernels}]
        if other:
            console.print(Text("\n  host code", style="bold cyan"))
            for f in other:
                line = Text("    ")
                line.append(f"{f.priority.value:<10}", style=_COLORS.get(f.priority.value, ""))
                line.append(f" {f.rule:<4} line {f.line}: {f.message}")
                console.print(line)
                _frame(console, f, source)
                console.print(Text(f"               fix: {f.fix}", style="green"))
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.priority.value] = counts.get(f.priority.value, 0) + 1
    summary = ", ".join(f"{n} {p}" for p, n in counts.items()) or "none"
    console.print(f"\nfindings: {summary}")
    source_only = getattr(analysis, "source_only", [])
    if source_only:
        console.print(Text(f"{len(source_only)} file(s) analysed source-only (not compiled): "
                           + ", ".join(f.path for f in source_only), style="yellow"))


def _frame(console: Console, f: Any, source: Any) -> None:
    if source is not None:
        from cudalens.report.frames import finding_frame

        for row in finding_frame(f, source, indent=" " * 15):
            console.print(Text(row, style="dim"))


def _compiled_line(rec: KernelRecord, cc: str) -> str:
    """Resources from the compiler and the theoretical occupancy at the launch (both from the
    kernel's record), in one sentence."""
    r = rec.resources or {}
    text = (f"    compiled (sm_{cc.replace('.', '')}): {r['registers']} registers/thread, "
            f"{r['static_shared_bytes']} B static shared, {r['local_bytes']} B local/thread")
    if r["spill_stores"] or r["spill_loads"]:
        text += f", spills {r['spill_stores']} B stored / {r['spill_loads']} B loaded"
    occ = rec.occupancy
    if occ:
        text += (f"; occupancy {occ['occupancy']:.0%} ({occ['active_blocks_per_sm']} blocks of "
                 f"{occ['threads_per_block']} threads per SM, limited by {', '.join(occ['limiters']) or '-'}; "
                 f"{occ['block_from']})")
        step = occ.get("register_steps") or {}
        if step.get("more_registers"):
            text += (f"; at {step['more_registers']} registers it drops to {step['blocks_with_more']} blocks")
    return text


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _access_table(k: Any) -> Table:
    t = Table(title=None, show_edge=False, pad_edge=False, box=None, padding=(0, 1))
    for col in ("line", "access", "space", "op", "B/thread", "sectors/req", "ideal", "bank ways", "pattern"):
        t.add_column(col, justify="right" if col not in ("access", "space", "op", "pattern") else "left")
    for a in k.accesses:
        where = f"{os.path.basename(a.file)}:{a.line}" if getattr(a, "file", None) else str(a.line)
        t.add_row(where, Text(f"{a.array}[{a.index}]"), a.space, a.op, _fmt(a.bytes_per_thread),
                  f"{_fmt(a.sectors_low)}-{_fmt(a.sectors_per_request)}" if getattr(a, "sectors_low", None) is not None
                  else _fmt(a.sectors_per_request), _fmt(a.ideal_sectors_per_request),
                  _fmt(a.bank_conflict_ways if a.space == "shared" else a.distinct_addresses), a.pattern or "-")
    for b in k.branches:
        verdict = {True: "divergent", False: "uniform", None: "unknown"}[b.divergent]
        t.add_row(str(b.line), Text(f"if ({b.condition})"), "branch", "", "", "", "", "", verdict)
    return t


def render_guided(guided: Guided, console: Console, notes: Sequence[str] = ()) -> None:
    """After the per-kernel findings: first things to do, speed of light, predicted vs measured,
    then ``notes`` (what could not be measured, and why)."""
    steps = guided.first_steps
    if steps:
        console.print(Text("\nFirst things to do", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", width=4)
        grid.add_column()
        for i, step in enumerate(steps[:3], 1):
            grid.add_row(f"{i}.", Text(step))
        console.print(grid)
    sol = [line for s in guided.speed_of_light for line in s.lines]
    if sol:
        console.print(Text("\nSpeed of light", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=1)
        grid.add_column()
        for line in sol:
            grid.add_row("", Text(line))
        console.print(grid)
    checks = [c.to_dict() for c in guided.cross_checks]
    if checks:
        console.print(Text("\nPredicted vs measured (Nsight Compute)", style="bold"))
        console.print(_checks_table(checks))
        console.print(Text("  n/a: not comparable (see cross_checks[].reason in --format json)", style="dim"))
    for note in notes:
        console.print(Text(f"note: {note}", style="dim"))


_VERDICT = {True: ("agrees", "green"), False: ("DISAGREES", "bold red"), None: ("n/a", "dim")}


def _checks_table(checks: list[dict[str, Any]]) -> Table:
    """Rows grouped by kernel; numbers in the quantity's unit (% where the unit is a percentage)."""
    t = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 1))
    t.add_column("line", justify="right")
    t.add_column("quantity", no_wrap=True)
    t.add_column("predicted", justify="right", no_wrap=True)
    t.add_column("measured", justify="right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    kernel = object()
    for c in checks:
        if c.get("kernel") != kernel:
            kernel = c.get("kernel")
            t.add_row("", Text(f"{kernel or '-'}", style="cyan"), "", "", "")
        rel = c.get("relation") or "≈"
        pct = " %" if c.get("unit") == "%" else ""
        pred = "-" if c.get("predicted") is None else f"{'' if rel == '≈' else rel + ' '}{c['predicted']:.3g}{pct}"
        meas = "-" if c.get("measured") is None else f"{c['measured']:.3g}{pct}"
        word, style = _VERDICT[c.get("agree")]
        quantity = str(c.get("quantity")).replace("/request", "/req").replace(" efficiency", " eff.")
        t.add_row(_fmt(c.get("line")), f"  {quantity}", pred, meas, Text(word, style=style))
    return t
