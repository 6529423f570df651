"""Options `analyze` and `check` share for choosing what to report: --select/--ignore, --baseline,
--write-baseline, --min-priority, --min-impact, --fail-on; and the one-line formats (concise, github).

The config's ``[tool.cudalens]`` keys ``select``, ``ignore``, ``min-priority``, ``min-impact`` and
``baseline`` give the defaults; an option on the command line replaces the config's value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import click

from cudalens.findings import Finding, Priority

FAIL_ON = ["high", "medium", "medium-low", "low", "info"]


def triage_options(fn: Callable) -> Callable:
    """Decorate a click command with the selection and baseline options."""
    options = [
        click.option("--select", "select", multiple=True, metavar="RULES",
                     help="Report only these rules: ids or chapter prefixes, comma-separated (e.g. G,SH1). "
                          "Default: [tool.cudalens] select, else every rule."),
        click.option("--ignore", "ignore", multiple=True, metavar="RULES",
                     help="Leave out these rules (ids or chapter prefixes, e.g. Y1,I17). The more specific of "
                          "--select and --ignore wins."),
        click.option("--baseline", "baseline", default=None, metavar="FILE",
                     help="Report (and fail on) only findings not in this baseline (see --write-baseline)."),
        click.option("--write-baseline", "write_baseline", default=None, metavar="FILE",
                     help="Write today's findings to FILE as a baseline, then report as usual."),
        click.option("--min-priority", "min_priority", type=click.Choice(FAIL_ON), default=None,
                     help="Report only findings at or above this guide priority (default: [tool.cudalens] "
                          "min-priority, else every priority)."),
        click.option("--min-impact", "min_impact", type=float, default=None, metavar="SCORE",
                     help="Leave out findings whose estimated impact score (cost share x runs per thread) is "
                          "below SCORE; findings without an estimate are kept."),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def fail_on_option(fn: Callable) -> Callable:
    return click.option("--fail-on", type=click.Choice(FAIL_ON), default=None,
                        help="Exit 1 when findings at or above this priority exist (info: any finding).")(fn)


def refuse_clobber_all(inputs: list[str], output: str | None, baseline_out: str | None) -> None:
    """InputError when -o or --write-baseline would write over an analysed file or any source file."""
    from cudalens.errors import InputError
    from cudalens.textio import refuse_clobber

    try:
        if output:
            refuse_clobber(output, inputs, "-o")
        if baseline_out:
            refuse_clobber(baseline_out, inputs, "--write-baseline")
    except ValueError as exc:
        raise InputError(str(exc)) from None


def fails(findings: Iterable[Finding], threshold: str | None) -> bool:
    if not threshold:
        return False
    limit = Priority.parse(threshold).rank
    return any(f.priority.rank <= limit for f in findings)
