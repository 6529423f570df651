"""`cudalens analyze FILE.cu ...`: source (and compiled) findings, optionally joined with a measured
launch and Nsight Compute counters into one report (text, JSON, HTML or SARIF)."""

from __future__ import annotations

import shlex
import sys
from typing import Any

import click

from cudalens.cli._common import cc_option, show_source_option
from cudalens.errors import InputError
from cudalens.findings import Priority
from cudalens.textio import printable

RUN_HELP = """Measure one launch and merge the timing: "KERNEL --grid G --block B --arg SPEC ..."
takes the options of `cudalens bench` (--arg, --shared-mem, -D, --hot, --timeout, ...; see
`cudalens bench --help`), and names the kernel as bench does: plain or any C++ name, e.g.
"vk::strided_copy<8> --grid 4096 --block 256 ...". Needs a GPU: without one, a note says the
measurement was skipped and the static report is still produced."""

COUNTERS_HELP = """Nsight Compute counters to check the predictions against. Alone (--counters, or
--counters=run): profile the --run launch with ncu, its kernel counters and its per-instruction
source page (a -lineinfo build: every prediction is checked against its own line's instructions).
With a file (--counters FILE.csv): import a CSV saved earlier, e.g. on another machine, with `ncu
--csv --page raw` (kernel counters) or `ncu --csv --page source --print-source cuda,sass` (per line).
Give --counters again with `ncu --csv --page details` of the same report (or append that page to the
source page's file): the launch each kernel's counters measured (block, grid) is read from it, and its
lines are compared with the evaluation under that launch when cudalens found it (a loop over block
sizes launches a kernel several ways), else each line says the measured launch was not found.
When ncu is missing or not allowed, a note says why and the static report is still produced. Put a bare --counters after
the files (or write --counters=run): before them it would take the first file as its CSV."""


INSTANTIATE_HELP = """Instantiate a template kernel in the compiled unit, e.g. 'gemm<128,128,8>'
(repeatable), so the compiled access model evaluates it even when the file never launches it. Text
that is not a template-id, or that the compiler rejects, is an error naming the argument."""


def _parse_run(ctx: click.Context, spec: str) -> Any:
    """A RunSpec from the --run text, parsed by `cudalens bench`'s own options."""
    from cudalens.measure.argspec import parse_args, parse_dims
    from cudalens.measure.sampling import SamplingPolicy
    from cudalens.measure.stats import parse_percent
    from cudalens.pipeline import RunSpec

    try:
        words = shlex.split(spec)
    except ValueError as exc:
        raise InputError(f"--run {spec!r}: {exc}") from None
    if not words or words[0].startswith("-"):
        raise InputError(f"--run {spec!r}: start with the kernel's name, e.g. \"saxpy --grid 4096 --block 256 ...\"")
    root = ctx.find_root()
    bench = root.command.get_command(root, "bench")  # type: ignore[attr-defined]
    if bench is None:  # pragma: no cover - the bench command ships with cudalens
        raise InputError("--run needs the `cudalens bench` command, which is not installed")
    try:
        sub = bench.make_context("bench", ["<analyzed file>", "--kernel", words[0], *words[1:]], parent=None)
    except click.ClickException as exc:
        raise InputError(f"--run {spec!r}: {exc.format_message()}") from None
    p = sub.params
    parse_args(p["args"])  # InputError names the bad --arg
    try:
        policy = SamplingPolicy(noise_target=parse_percent(p["noise"]), min_samples=p["min_samples"],
                                min_time_s=p["min_time"], max_time_s=p["max_time"],
                                max_samples=max(10_000, p["min_samples"]))
    except ValueError as exc:
        raise InputError(f"--run: {exc}") from None
    defines = []
    for d in p["defines"]:
        name, _, value = d.partition("=")
        defines.append((name, value if value else None))
    return RunSpec(kernel=words[0], grid=parse_dims(p["grid"], "grid"), block=parse_dims(p["block"], "block"),
                   args=tuple(p["args"]), shared_mem=p["shared_mem"], mode="cold" if p["cold"] else "hot",
                   batch=p["batch"], defines=tuple(defines), bytes_read=p["bytes_read"],
                   bytes_written=p["bytes_written"], flops=p["flops"], policy=policy.to_dict(),
                   timeout_s=p["timeout"], device=p["device"])


def register(group: click.Group) -> None:
    from cudalens.cli._build import build_options as build_context_options
    from cudalens.cli._triage import fail_on_option, triage_options
    from cudalens.cli.cache import no_cache_option

    @group.command("analyze")
    @click.argument("files", nargs=-1, required=True)
    @click.option("--block", "block", multiple=True, metavar="[KERNEL=]X[,Y[,Z]]",
                  help="Block size the models use, for every kernel or for one (--block transpose=32,8; "
                       "repeatable). Default: the block of the kernel's launch found in the project, else 256.")
    @click.option("--define", "-D", "defines", multiple=True, metavar="NAME=VALUE",
                  help="Value of a kernel parameter, template parameter or macro (repeatable). nvcc gets "
                       "-DNAME=VALUE only for names the file uses as macros or that are not parameter names.")
    @cc_option
    @click.option("--instantiate", "instantiate", multiple=True, metavar="'KERNEL<ARGS>'", help=INSTANTIATE_HELP)
    @fail_on_option
    @triage_options
    @click.option("--no-compile", is_flag=True, help="Source-only analysis (skip nvcc).")
    @click.option("--strict", is_flag=True, help="Exit 1 when a file was analysed source-only (it did not compile).")
    @no_cache_option
    @click.option("--binary", "binary", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                  help="A built executable, object or library: are its SASS and PTX right for --cc (rule Y3)?")
    @click.option("--run", "run", default=None, metavar="\"KERNEL --grid G --block B --arg ...\"", help=RUN_HELP)
    @click.option("--counters", "counters", is_flag=False, flag_value="run", default=None, metavar="[FILE.csv]",
                  multiple=True, help=COUNTERS_HELP)
    @click.option("--format", "fmt", type=click.Choice(["text", "concise", "github", "json", "html", "sarif"]),
                  default="text", show_default=True,
                  help="Output format (concise: path:line:col: RULE [priority] message; github: workflow annotations).")
    @click.option("-o", "--output", "output", default=None, type=click.Path(dir_okay=False),
                  help="Write the report to this file (default: standard output).")
    @show_source_option
    @build_context_options
    @click.pass_context
    def analyze_cmd(ctx, files, block, defines, cc, instantiate, fail_on, select, ignore, baseline, write_baseline,
                    min_priority, min_impact, no_compile, strict, binary, run, counters, fmt, output, show_source,
                    include_dirs, nvcc_flags, compile_commands, no_config, trust_flags, no_cache):
        """Analyze CUDA files: warp access model, divergence, pattern rules, compiled facts.

        The access model evaluates blocks blockIdx=(0,0,0) and (1,0,0), assumes 256-byte aligned
        pointers (cudaMalloc), loops at their first iteration, and tries unknown integer
        parameters at 2048 and 3136 (reporting only verdicts that agree).

        With --run and/or --counters the report also holds the measured time, the speed of
        light, the predictions checked against the counters (V1 findings where they disagree)
        and the findings re-ranked by measured cost.

        Example: cudalens analyze saxpy.cu --run "saxpy --grid 65536 --block 256 --arg int32=16777216
        --arg float32=2 --arg float32[2^24] --arg float32[2^24]@inout" --counters --format html -o saxpy.html
        """
        from cudalens.api import analyze
        from cudalens.pipeline import PROFILE_RUN

        bad = next((c for c in counters if c.endswith((".cu", ".cuh"))), None)
        if bad:
            raise InputError(f"--counters {bad}: a CSV is expected; put a bare --counters after the files "
                             "or write --counters=run")
        counters = (counters[0] if PROFILE_RUN in counters else tuple(counters)) if counters else None
        run_spec = _parse_run(ctx, run) if run else None
        if counters == PROFILE_RUN and run_spec is None:
            raise InputError("--counters without a file profiles the --run launch: give --run, or --counters FILE.csv")
        from cudalens.cli._triage import refuse_clobber_all
        from cudalens.cli.cache import result_cache
        from cudalens.pipeline.isolated import FileLimits

        refuse_clobber_all(list(files), output, write_baseline)
        limits = FileLimits()
        report = analyze(list(files), cc=cc, defines=list(defines), block=tuple(block), compile=not no_compile,
                         include_dirs=include_dirs, nvcc_flags=nvcc_flags, compile_commands=compile_commands,
                         use_config=not no_config, trust_flags=trust_flags, select=select, ignore=ignore,
                         baseline=baseline, min_priority=min_priority, min_impact=min_impact,
                         write_baseline=write_baseline, instantiate=instantiate, binary=binary, run=run_spec,
                         counters=counters, file_limits=limits, cache=result_cache(no_cache))
        for line in (*(f"warning: {w}" for w in report.warnings), *report.notes):
            click.echo(printable(f"cudalens: {line}"), err=True)
        from cudalens.report.emit import Style, emit
        from cudalens.triage import Triaged

        triaged = Triaged((), dict(report.suppressed))
        if triaged.suppressed_total:
            click.echo(f"cudalens: {triaged.summary()}", err=True)
        style = Style(terminal=output is None and sys.stdout.isatty(), to_file=output is not None,
                      show_source=show_source)

        def rendered() -> tuple[str, bool]:  # the report and whether it reaches --fail-on
            return emit(report, fmt, style), bool(fail_on) and _fails(report, Priority.parse(fail_on))

        from cudalens.cli.check import bounded_render

        text, failing = bounded_render(rendered, limits)
        if output:
            _write(output, text)
        elif text.strip():
            click.echo(text, nl=False)
        if failing:
            return 1
        return 1 if strict and report.analysis.source_only else 0


def _fails(report: Any, threshold: Priority) -> bool:
    """Whether a finding the report lists (with the evidence's, when measured) reaches ``threshold``."""
    listed = report.ranked if report.evidence is not None else report.findings
    return any(f.priority.rank <= threshold.rank for f in listed)


def _write(path: str, text: str) -> None:
    from cudalens.textio import write_atomic

    try:
        write_atomic(path, text)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None

