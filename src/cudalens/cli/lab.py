"""`cudalens lab`: list the guide's experiments and run them on this GPU."""

from __future__ import annotations

import json
from pathlib import Path

import click

from cudalens.cli._common import format_option
from cudalens.report.console import report_console


def register(group: click.Group) -> None:
    group.add_command(lab)


@click.group()
def lab() -> None:
    """The guide's experiments, reproduced on your GPU."""


@lab.command("list")
@format_option
def list_cmd(fmt: str) -> None:
    """List the labs (no GPU needed)."""
    from cudalens.labs import all_labs
    labs = all_labs()
    if fmt == "json":
        click.echo(json.dumps([{"number": x.number, "name": x.name, "title": x.title, "rules": list(x.rules),
                                "section": x.section, "claim": x.claim,
                                "min_cc": f"{x.min_cc[0]}.{x.min_cc[1]}"} for x in labs], indent=2))
        return
    from rich.table import Table
    t = Table(title="cudalens labs")
    for col in ("#", "name", "rules", "section", "what it shows"):
        t.add_column(col, no_wrap=col in ("#", "name"))
    for x in labs:
        t.add_row(str(x.number), x.name, " ".join(x.rules), x.section, x.title)
    report_console().print(t)


@lab.command("run")
@click.argument("name")
@click.option("--quick", is_flag=True, help="Smaller sizes and fewer samples.")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for <lab>.json and <lab>.png (default: none written).")
@format_option
def run_cmd(name: str, quick: bool, out_dir: str | None, fmt: str) -> None:
    """Run lab NAME (or number), or `all`."""
    from cudalens.labs import all_labs, get_lab, run_lab, write_result
    from cudalens.labs.runner import open_runner

    labs = all_labs() if name == "all" else (get_lab(name),)
    runner = open_runner(quick=quick)  # NoDeviceError -> one line, exit 2
    results = []
    try:
        from rich.console import Console
        from rich.progress import Progress
        console = Console(stderr=True)
        with Progress(console=console, transient=True, disable=fmt == "json") as progress:
            task = progress.add_task("labs", total=len(labs))
            for x in labs:
                progress.update(task, description=f"lab {x.number} {x.name}")
                res = run_lab(x, runner, quick)
                if out_dir:
                    write_result(x, res, Path(out_dir))
                results.append((x, res))
                progress.advance(task)
    finally:
        runner.close()
    if fmt == "json":
        click.echo(json.dumps([r.to_dict(x) for x, r in results], indent=2))
        return
    _render(results)


def _render(results) -> None:
    from rich.table import Table
    console = report_console()
    for x, r in results:
        if r.status != "ok":
            console.print(f"[bold]{x.number}. {x.name}[/bold]: {r.status} - {r.message}")
            continue
        t = Table(title=f"{x.number}. {x.title} ({' '.join(x.rules)}, {x.section})")
        cols = list(r.rows[0].keys()) if r.rows else []
        for c in cols:
            t.add_column(c, justify="right")
        for row in r.rows:
            t.add_row(*[_cell(row.get(c)) for c in cols])
        console.print(t)
        console.print(f"  claim: {x.claim}")
        for f in x.guide_figures:
            console.print(f"  guide ({f.device}, {f.section}): {f.label} = {f.value} {f.unit}")
        v = r.verdict
        mark = {True: "[green]holds[/green]", False: "[red]does not hold[/red]", None: "undecided"}[v.holds]
        console.print(f"  verdict: {mark} - {v.summary}")
        console.print(f"  ({r.seconds:.1f} s)\n")


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)
