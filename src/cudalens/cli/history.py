"""`cudalens history` (list stored runs) and `cudalens compare A B` (is B slower than A?)."""

from __future__ import annotations

import click

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError
from cudalens.report.console import report_console

_DB_HELP = "History database (default ~/.cudalens/history.db)."


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def register(group: click.Group) -> None:
    @group.command("history")
    @click.option("--db", default=None, help=_DB_HELP)
    @click.option("--kernel", default=None, help="Only runs of this kernel.")
    @click.option("--limit", default=50, show_default=True, type=click.IntRange(min=1),
                  help="At most this many runs, newest first.")
    @format_option
    def history_cmd(db, kernel, limit, fmt):
        """List stored benchmark runs, newest first (times in microseconds)."""
        from cudalens.measure.history import list_runs  # noqa: PLC0415

        rows = list_runs(db, kernel=kernel, limit=limit)
        if fmt == "json":
            echo_json({"runs": [r.to_dict() for r in rows]})
            return
        from rich.table import Table  # noqa: PLC0415

        t = Table(title=f"{len(rows)} run(s)")
        for col in ("id", "date (UTC)", "kernel", "mode", "device", "median (us)", "95% CI (us)", "samples", "throttled"):
            t.add_column(col, justify="right" if col in ("id", "median (us)", "samples", "throttled") else "left")
        for r in rows:
            t.add_row(str(r.id), r.created_utc, r.kernel, r.mode, r.device, _us(r.median_s),
                      f"{_us(r.ci_low_s)} .. {_us(r.ci_high_s)}", str(r.n_samples), str(r.n_throttled))
        report_console().print(t)

    @group.command("compare")
    @click.argument("run_a")
    @click.argument("run_b")
    @click.option("--db", default=None, help=_DB_HELP)
    @click.option("--fail-if-slower", default=None,
                  help="Exit 1 when B is SLOWER and its median is more than this much above A's (e.g. 5%).")
    @format_option
    def compare_cmd(run_a, run_b, db, fail_if_slower, fmt):
        """Compare B against A: ratio of medians and a verdict. A and B are history run ids or result
        files (a result, a sweep's list, or a pytest-plugin store); sweeps are matched by kernel and cell.

        Verdict rule: each median gets a seeded bootstrap 95 % confidence interval; B is SLOWER when
        its interval lies wholly above A's, FASTER when wholly below, SAME when they overlap.
        With --fail-if-slower X, the exit status is 1 when the verdict is SLOWER and
        median(B)/median(A) - 1 > X; otherwise 0.
        """
        from cudalens.measure.comparison import compare_results, load_results  # noqa: PLC0415
        from cudalens.measure.stats import parse_percent  # noqa: PLC0415

        threshold = None
        if fail_if_slower is not None:
            try:
                threshold = parse_percent(fail_if_slower)
            except ValueError as exc:
                raise InputError(f"--fail-if-slower: {exc}") from None
        res = compare_results(load_results(run_a, db), load_results(run_b, db), threshold)
        if fmt == "json":
            top = dict(res["rows"][0]) if res["single"] and res["rows"] else {}
            echo_json({**top, "run_a": run_a, "run_b": run_b, "threshold": threshold, **res})
        else:
            for r in res["rows"]:
                click.echo(f"{r['key']}: A {r['median_a_us']:.3f} us (noise {r['noise_a_pct']:.2f} %), "
                           f"B {r['median_b_us']:.3f} us (noise {r['noise_b_pct']:.2f} %), "
                           f"diff {r['diff_pct']:+.2f} %: {r['verdict']}"
                           + (f" [suspect: {', '.join(r['suspect'])}]" if r["suspect"] else ""))
                for n in r["notes"]:
                    click.echo(f"note: {n}")
            for side in ("only_a", "only_b"):
                if res[side]:
                    click.echo(f"only in {side[-1].upper()}: {', '.join(res[side])}")
            if threshold is not None:
                click.echo(f"{'FAIL' if res['failed'] else 'pass'}: threshold {threshold * 100:.2f} % slower")
        return 1 if res["failed"] else 0
