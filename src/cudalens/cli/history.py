"""`cudalens history` (list stored runs) and `cudalens compare A B` (is B slower than A?)."""

from __future__ import annotations

import click

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError

_DB_HELP = "History database (default ~/.cudalens/history.db)."


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def register(group: click.Group) -> None:
    @group.command("history")
    @click.option("--db", default=None, help=_DB_HELP)
    @click.option("--kernel", default=None, help="Only runs of this kernel.")
    @click.option("--limit", default=50, show_default=True, help="At most this many runs, newest first.")
    @format_option
    def history_cmd(db, kernel, limit, fmt):
        """List stored benchmark runs, newest first (times in microseconds)."""
        from cudalens.measure.history import list_runs  # noqa: PLC0415

        rows = list_runs(db, kernel=kernel, limit=limit)
        if fmt == "json":
            echo_json({"runs": [r.to_dict() for r in rows]})
            return
        from rich.console import Console  # noqa: PLC0415
        from rich.table import Table  # noqa: PLC0415

        t = Table(title=f"{len(rows)} run(s)")
        for col in ("id", "date (UTC)", "kernel", "mode", "device", "median (us)", "95% CI (us)", "samples", "throttled"):
            t.add_column(col, justify="right" if col in ("id", "median (us)", "samples", "throttled") else "left")
        for r in rows:
            t.add_row(str(r.id), r.created_utc, r.kernel, r.mode, r.device, _us(r.median_s),
                      f"{_us(r.ci_low_s)} .. {_us(r.ci_high_s)}", str(r.n_samples), str(r.n_throttled))
        Console().print(t)

    @group.command("compare")
    @click.argument("run_a", type=int)
    @click.argument("run_b", type=int)
    @click.option("--db", default=None, help=_DB_HELP)
    @click.option("--fail-if-slower", default=None,
                  help="Exit 1 when B is SLOWER and its median is more than this much above A's (e.g. 5%).")
    @format_option
    def compare_cmd(run_a, run_b, db, fail_if_slower, fmt):
        """Compare run B against run A: ratio of medians and a verdict.

        Verdict rule: each median gets a seeded bootstrap 95 % confidence interval; B is SLOWER when
        its interval lies wholly above A's, FASTER when wholly below, SAME when they overlap.
        With --fail-if-slower X, the exit status is 1 when the verdict is SLOWER and
        median(B)/median(A) - 1 > X; otherwise 0.
        """
        from cudalens.measure.history import load_run  # noqa: PLC0415
        from cudalens.measure.stats import compare, fails_threshold, parse_percent  # noqa: PLC0415

        threshold = None
        if fail_if_slower is not None:
            try:
                threshold = parse_percent(fail_if_slower)
            except ValueError as exc:
                raise InputError(f"--fail-if-slower: {exc}") from None
        a, b = load_run(run_a, db), load_run(run_b, db)
        cmp = compare(a.kept_seconds, b.kept_seconds)
        failed = threshold is not None and fails_threshold(cmp, threshold)
        notes = []
        if a.kernel != b.kernel:
            notes.append(f"different kernels: {a.kernel} vs {b.kernel}")
        if a.device.name != b.device.name:
            notes.append(f"different devices: {a.device.name} vs {b.device.name}")
        if a.mode != b.mode:
            notes.append(f"different modes: {a.mode} vs {b.mode}")
        if fmt == "json":
            d = cmp.to_dict()
            d.update({"run_a": run_a, "run_b": run_b, "threshold": threshold, "failed": failed, "notes": notes})
            echo_json(d)
        else:
            click.echo(f"A = run {run_a} ({a.kernel}, {a.mode}): median {_us(cmp.median_a)} us, "
                       f"95% CI {_us(cmp.ci_a[0])} .. {_us(cmp.ci_a[1])} us")
            click.echo(f"B = run {run_b} ({b.kernel}, {b.mode}): median {_us(cmp.median_b)} us, "
                       f"95% CI {_us(cmp.ci_b[0])} .. {_us(cmp.ci_b[1])} us")
            click.echo(f"ratio B/A = {cmp.ratio:.4f} ({cmp.slower_by * 100:+.2f} %): {cmp.verdict}")
            for n in notes:
                click.echo(f"note: {n}")
            if threshold is not None:
                click.echo(f"{'FAIL' if failed else 'pass'}: threshold {threshold * 100:.2f} % slower")
        return 1 if failed else 0
