"""`cudalens analyze FILE.cu ...`: source (and compiled) findings, optionally joined with a measured
launch and Nsight Compute counters into one report (text, JSON, HTML or SARIF)."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from typing import Any

import click

from cudalens.cli._common import _default, echo_json
from cudalens.errors import InputError
from cudalens.findings import Priority

RUN_HELP = """Measure one launch and merge the timing: "KERNEL --grid G --block B --arg SPEC ..."
takes the options of `cudalens bench` (--arg, --shared-mem, -D, --hot, --timeout, ...; see
`cudalens bench --help`). The kernel must be declared extern "C". Needs a GPU: without one, a note
says the measurement was skipped and the static report is still produced."""

COUNTERS_HELP = """Nsight Compute counters to check the predictions against. Alone (--counters, or
--counters=run): profile the --run launch with ncu, its kernel counters and its per-instruction
source page (a -lineinfo build: every prediction is checked against its own line's instructions).
With a file (--counters FILE.csv): import a CSV saved earlier, e.g. on another machine, with `ncu
--csv --page raw` (kernel counters) or `ncu --csv --page source --print-source cuda,sass` (per line).
When ncu is missing or not allowed, a note says why and the static report is still produced. Put a bare --counters after
the files (or write --counters=run): before them it would take the first file as its CSV."""


INSTANTIATE_HELP = """Instantiate a template kernel in the compiled unit, e.g. 'gemm<128,128,8>'
(repeatable), so the compiled access model evaluates it even when the file never launches it. Text
that is not a template-id, or that the compiler rejects, is an error naming the argument."""


def check_instantiations(specs: tuple[str, ...]) -> tuple[str, ...]:
    """``--instantiate`` values, each checked (InputError naming a bad one) before any work."""
    from cudalens.compiled.invocation import instantiation_line

    for i, spec in enumerate(specs):
        instantiation_line(spec, i)
    return tuple(specs)


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
    @click.option("--cc", default="9.0", show_default=True, help="Target compute capability.")
    @click.option("--instantiate", "instantiate", multiple=True, metavar="'KERNEL<ARGS>'", help=INSTANTIATE_HELP)
    @fail_on_option
    @triage_options
    @click.option("--no-compile", is_flag=True, help="Source-only analysis (skip nvcc).")
    @click.option("--binary", "binary", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                  help="A built executable, object or library: are its SASS and PTX right for --cc (rule Y3)?")
    @click.option("--run", "run", default=None, metavar="\"KERNEL --grid G --block B --arg ...\"", help=RUN_HELP)
    @click.option("--counters", "counters", is_flag=False, flag_value="run", default=None, metavar="[FILE.csv]",
                  help=COUNTERS_HELP)
    @click.option("--format", "fmt", type=click.Choice(["text", "concise", "github", "json", "html", "sarif"]),
                  default="text", show_default=True,
                  help="Output format (concise: path:line:col: RULE [priority] message; github: workflow annotations).")
    @click.option("-o", "--output", "output", default=None, type=click.Path(dir_okay=False),
                  help="Write the report to this file (default: standard output).")
    @build_context_options
    @no_cache_option
    @click.pass_context
    def analyze_cmd(ctx, files, block, defines, cc, instantiate, fail_on, select, ignore, baseline, write_baseline, min_impact,
                    no_compile, binary, run, counters, fmt, output, include_dirs, nvcc_flags, compile_commands,
                    no_config, trust_flags, no_cache):
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
        from cudalens.access.model import parse_blocks, parse_defines
        from cudalens.pipeline import PROFILE_RUN, analyze, gather_evidence, guided_report

        try:
            blk = parse_blocks(tuple(block))
            defs = parse_defines(list(defines))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if counters and counters.endswith((".cu", ".cuh")):
            raise InputError(f"--counters {counters}: a CSV is expected; put a bare --counters after the files "
                             "or write --counters=run")
        insts = check_instantiations(tuple(instantiate))
        run_spec = _parse_run(ctx, run) if run else None
        if counters == PROFILE_RUN and run_spec is None:
            raise InputError("--counters without a file profiles the --run launch: give --run, or --counters FILE.csv")
        from cudalens.cli._triage import build_options, refuse_clobber_all
        from cudalens.cli._triage import write_baseline as save_baseline
        from cudalens.triage import triage_analysis

        options = build_options(list(files), tuple(select), tuple(ignore), baseline, min_impact)
        refuse_clobber_all(list(files), output, write_baseline)
        from cudalens.cli._build import make_build, make_project
        from cudalens.cli.cache import result_cache
        from cudalens.pipeline.isolated import FileLimits

        project = make_project(list(files), list(files))
        if project is not None:  # kernels in an included .cu (or header) are evaluated with the unit
            given = {os.path.realpath(f) for f in files}
            files = tuple(dict.fromkeys([*files, *(f for u in files for f in project.included_kernel_files(u)
                                                    if f not in given)]))
        build = make_build(files, include_dirs, nvcc_flags, compile_commands, no_config, trust_flags, project)
        raw = analyze(list(files), block=blk, defines=defs, cc=cc, compile=not no_compile, build=build, binary=binary,
                      instantiate=insts, file_limits=FileLimits(), project=project,
                      cache=result_cache(no_cache))
        if write_baseline:
            chosen, _ = triage_analysis(raw, dataclasses.replace(options, baseline=None, min_impact=None))
            save_baseline(write_baseline, chosen.findings, {fa.model.path: fa.model.text for fa in raw.files})
        result, triaged = triage_analysis(raw, options)
        if run_spec is not None:  # the measured launch is built as the analysis was
            from cudalens.pipeline.evidence import _file_of

            origin = _file_of(result, run_spec.kernel).model.path
            run_spec = dataclasses.replace(run_spec, options=build.nvcc_flags(origin))
        evidence = gather_evidence(result, run=run_spec, counters=counters) if (run_spec or counters) else None
        if evidence is not None:
            for note in evidence.notes:
                click.echo(f"cudalens: {note}", err=True)
        merged = guided_report(result, evidence) if (evidence is not None or fmt != "json") else None
        if merged is not None:
            merged["suppressed"] = dict(triaged.suppressed)
        if triaged.suppressed_total:
            click.echo(f"cudalens: {triaged.summary()}", err=True)
        _emit(result, merged, fmt, output, dict(triaged.suppressed))
        findings = merged["findings"] if merged is not None else None
        if fail_on and _fails(result, findings, Priority.parse(fail_on)):
            return 1
        return 0


def _fails(result: Any, merged_findings: list[dict] | None, threshold: Priority) -> bool:
    if merged_findings is None:
        return bool(result.at_or_above(threshold))
    return any(Priority.parse(f["priority"]).rank <= threshold.rank for f in merged_findings)


def _emit(result: Any, merged: dict[str, Any] | None, fmt: str, output: str | None,
          suppressed: dict[str, int] | None = None) -> None:
    if fmt == "json":
        data = merged if merged is not None else {**result.to_dict(), "suppressed": dict(suppressed or {})}
        if output is None:
            echo_json(data)
        else:
            _write(output, json.dumps(data, indent=2, default=_default) + "\n")
        return
    assert merged is not None
    if fmt in ("concise", "github"):
        from cudalens.report.concise import concise_lines, github_lines

        text = "\n".join((concise_lines if fmt == "concise" else github_lines)(_ranked(merged)))
        _write(output, text + "\n") if output else (click.echo(text) if text else None)
        return
    if fmt == "html":
        from cudalens.report.html import render_html

        text = render_html(merged)
        _write(output, text) if output else click.echo(text)
        return
    if fmt == "sarif":
        from cudalens.guided.inputs import finding_from_dict
        from cudalens.report.sarif import to_sarif
        from cudalens.rules.registry import load_all
        from cudalens.rules.validation import VALIDATION_RULES

        rules = {**load_all(), **VALIDATION_RULES}
        log = to_sarif([finding_from_dict(f) for f in merged["findings"]], rules)
        log["runs"][0].setdefault("properties", {})["suppressed"] = dict(merged.get("suppressed") or {})
        text = json.dumps(log, indent=2)
        _write(output, text + "\n") if output else click.echo(text)
        return

    from cudalens.report.terminal import render_analysis, render_guided

    if output is None:
        console = _console()
        render_analysis(result, console, findings=_ranked(merged))
        render_guided(merged, console, notes=False)  # the notes went to stderr
        return
    import io

    buf = io.StringIO()
    console = _console(buf)
    render_analysis(result, console, findings=_ranked(merged))
    render_guided(merged, console)
    _write(output, buf.getvalue())


def _console(file: Any = None) -> Any:
    """A rich console for the report: the terminal's width on a TTY; piped or written to a file,
    no width limit (a value is never cut or wrapped at 80 columns) and no colour codes."""
    import sys

    from rich.console import Console

    class SafeConsole(Console):
        """Text from files and names (terminal escapes, bidirectional overrides) shown inert."""

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
    return SafeConsole(file=stream, width=100_000, soft_wrap=True, force_terminal=False, color_system=None)


def _ranked(merged: dict[str, Any]) -> list[Any]:
    from cudalens.guided.inputs import finding_from_dict

    return [finding_from_dict(f) for f in merged["findings"]]


def _write(path: str, text: str) -> None:
    from cudalens.textio import write_atomic

    try:
        write_atomic(path, text)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None

