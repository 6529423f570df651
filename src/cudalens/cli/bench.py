"""`cudalens bench`: time one CUDA C++ kernel (in an isolated child process) and store the run."""

from __future__ import annotations

import os

import click

from cudalens.cli._build import build_options, make_build
from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError, NoDeviceError
from cudalens.measure.harness import TIMERS
from cudalens.report.console import report_console

ARG_HELP = """Kernel argument, one per parameter, in order. Arrays: DTYPE[N][:INIT][@ROLE],
e.g. float32[1048576]:rand, float32[2^20]:zeros@out; INIT is zeros|ones|rand|arange|empty|<number>
(default rand); ROLE is in|out|inout (default out for zeros/empty, else in) and sets the byte count.
Scalars: DTYPE=VALUE, e.g. int32=1048576. DTYPE: int8..int64, uint8..uint64, float16|32|64."""


def register(group: click.Group) -> None:
    @group.command("bench")
    @click.argument("source", type=click.Path(dir_okay=False))
    @click.option("--kernel", "kernel", required=True,
                  help="Kernel name: extern \"C\" or any C++ name, e.g. 'ns::reduce<float, 256>' (may use {AXIS}).")
    @click.option("--grid", required=True, help="Grid size in blocks: G or G,G or G,G,G (with axes: '{n}/{block}').")
    @click.option("--block", required=True, help="Block size in threads: B or B,B or B,B,B (may use {AXIS}).")
    @build_options
    @click.option("--axis", "axes", multiple=True,
                  help="Sweep axis NAME=V1,V2 or NAME=START:STOP:STEP (xK multiplies), e.g. n=2^20:2^26:x4; "
                       "{NAME} is replaced in --kernel/--arg/--grid/--block and -DNAME=value is defined.")
    @click.option("-o", "--output", "output", default=None, metavar="PREFIX",
                  help="Write PREFIX.json (all results), and for sweeps PREFIX.csv and PREFIX.md.")
    @click.option("--rotate", default=1, show_default=True, type=click.IntRange(min=1), help="Independent argument sets cycled through.")
    @click.option("--no-recheck", is_flag=True, help="Do not poison and re-check the outputs after timing.")
    @click.option("--no-persisting-reset", is_flag=True, help="Cold mode: do not reset persisting L2 lines.")
    @click.option("--no-sol", is_flag=True, help="Do not mark results below the DRAM speed of light suspect.")
    @click.option("--no-side-work", is_flag=True, help="Do not check for work on other streams.")
    @click.option("--arg", "args", multiple=True, help=ARG_HELP)
    @click.option("--shared-mem", default=0, show_default=True, type=click.IntRange(min=0), help="Dynamic shared memory per block (bytes).")
    @click.option("-D", "--define", "defines", multiple=True, help="Preprocessor macro NAME or NAME=VALUE.")
    @click.option("--cold/--hot", default=True, show_default=True,
                  help="cold: flush L2 (2x its size) before every launch; hot: batches of back-to-back launches.")
    @click.option("--batch", type=click.IntRange(min=1), default=None, help="Launches per sample in hot mode (default: adaptive).")
    @click.option("--timer", type=click.Choice(TIMERS), default="events", show_default=True,
                  help="events: CUDA events around the launch, less the event floor (an empty event pair, "
                       "measured at the start: ~1 us on an H100); events-raw: the event interval as it is; "
                       "cupti: the kernel's own start/end from CUPTI activity records (on an H100 0.5-1.2 us "
                       "below ncu for kernels under 10 us, and tracing slowed DRAM-bound kernels by ~7 %); "
                       "auto: CUPTI when available, else events.")
    @click.option("--bytes-read", type=click.IntRange(min=0), default=None, help="Bytes read per launch (default: from --arg roles).")
    @click.option("--bytes-written", type=click.IntRange(min=0), default=None, help="Bytes written per launch (default: from --arg roles).")
    @click.option("--flops", type=click.FloatRange(min=0), default=0.0, help="Floating-point operations per launch.")
    @click.option("--noise", default="0.5%", show_default=True, help="Stop when stdev/mean of the samples is below this.")
    @click.option("--min-samples", default=10, show_default=True, type=click.IntRange(min=1))
    @click.option("--min-time", default=0.5, show_default=True, type=click.FloatRange(min=0), help="Minimum sampling time (s).")
    @click.option("--max-time", default=10.0, show_default=True, type=click.FloatRange(min=0, min_open=True), help="Stop sampling after this many seconds.")
    @click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(min=0, min_open=True), help="Kill the measurement after this many seconds.")
    @click.option("--device", default=0, show_default=True, type=click.IntRange(min=0), help="CUDA device index.")
    @click.option("--db", default=None, help="History database (default ~/.cudalens/history.db).")
    @click.option("--no-save", is_flag=True, help="Do not store the run in the history database.")
    @format_option
    def bench_cmd(source, kernel, grid, block, include_dirs, nvcc_flags, compile_commands, no_config, trust_flags, axes, output, rotate, no_recheck,
                  no_persisting_reset, no_sol, no_side_work, args, shared_mem, defines, cold, batch, timer,
                  bytes_read, bytes_written, flops, noise, min_samples, min_time, max_time, timeout, device,
                  db, no_save, fmt):
        """Time KERNEL from SOURCE (a .cu file); adaptive sampling, all samples kept.

        The measurement runs in a child process: a kernel that faults or hangs is reported
        (exit status 2) without taking cudalens down. Needs an NVIDIA GPU.

        Example: cudalens bench copy.cu --kernel copy --grid 4096 --block 256
        --arg float32[1048576]:rand --arg float32[1048576]:zeros --arg int32=1048576
        """
        from cudalens.api.run import launch_request  # noqa: PLC0415
        from cudalens.measure import axes as ax  # noqa: PLC0415
        from cudalens.measure.isolate import run_isolated  # noqa: PLC0415
        from cudalens.measure.result import BenchResult  # noqa: PLC0415

        if not os.path.isfile(source):
            raise InputError(f"{source}: no such CUDA source file")
        build = make_build([source], include_dirs, nvcc_flags, compile_commands, no_config, trust_flags)
        build_flags = list(build.nvcc_flags(source))
        cells = ax.grid(ax.parse_axes(axes)) if axes else [{}]
        plans = []
        for cell in cells:  # every cell is validated before anything runs
            define_map = {}
            for d in defines:
                dname, _, value = d.partition("=")
                define_map[dname] = value if value else None
            define_map.update(cell)
            plans.append((cell, launch_request(
                source, kernel=ax.substitute(kernel, cell, "--kernel"), grid=ax.dims_expr(grid, cell, "grid"),
                block=ax.dims_expr(block, cell, "block"), args=list(args), values=cell,
                shared_mem=shared_mem, defines=define_map, cold=cold, batch=batch, timer=timer, bytes_read=bytes_read,
                bytes_written=bytes_written, flops=flops, noise=noise, min_samples=min_samples, min_time=min_time,
                max_time=max_time, device=device, rotate=rotate, recheck=not no_recheck,
                reset_persisting=not no_persisting_reset, speed_of_light=not no_sol, detect_side_work=not no_side_work,
                options=build_flags)))
        results, rows = [], []
        for cell, request in plans:
            try:
                result = BenchResult.from_dict(run_isolated(request, timeout_s=timeout))
            except (InputError, NoDeviceError):
                raise
            except Exception as exc:  # noqa: BLE001 - a sweep reports a failing cell and goes on
                if not axes:
                    raise
                rows.append(ax.row(cell, None, str(exc)))
                results.append({"cell": cell, "error": str(exc)})
                continue
            run_id = None
            if not no_save:
                from cudalens.measure.history import save  # noqa: PLC0415

                run_id = save(result, db)
            data = result.to_dict()
            data["run_id"] = run_id
            if axes:
                data["cell"] = cell
            results.append(data)
            rows.append(ax.row(cell, data))
            if fmt != "json":
                _render(result, run_id)
        if output:
            _write_outputs(output, results, rows if axes else [])
        if fmt == "json":
            echo_json(results if axes else results[0])
        elif axes:
            click.echo(ax.to_markdown(rows), nl=False)


def _write_outputs(prefix: str, results: list, rows: list) -> None:
    import json  # noqa: PLC0415

    from cudalens.measure import axes as ax  # noqa: PLC0415

    try:
        with open(prefix + ".json", "w", encoding="utf-8") as fh:
            json.dump(results if rows else results[0], fh, indent=1)
        if rows:
            with open(prefix + ".csv", "w", encoding="utf-8") as fh:
                fh.write(ax.to_csv(rows))
            with open(prefix + ".md", "w", encoding="utf-8") as fh:
                fh.write(ax.to_markdown(rows))
    except OSError as exc:
        raise InputError(f"--output {prefix}: {exc.strerror}") from None


def _fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds:.3f} s"


def _render(result, run_id) -> None:
    from rich.table import Table  # noqa: PLC0415

    s = result.summary
    con = report_console()
    t = Table(title=f"{result.kernel} on {result.device.name} ({result.mode})", show_header=True)
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("median", _fmt_time(s.median))
    t.add_row(f"{int(s.ci_level * 100)} % CI of median", f"{_fmt_time(s.ci_low)} .. {_fmt_time(s.ci_high)}")
    t.add_row("min / max", f"{_fmt_time(s.min)} / {_fmt_time(s.max)}")
    t.add_row("rel. stdev", f"{s.rel_stdev * 100:.2f} %")
    t.add_row("IQR", _fmt_time(s.iqr))
    t.add_row("samples kept / taken", f"{s.n} / {len(result.samples)} (stop: {result.stop_reason})")
    t.add_row("launches per sample", str(result.config.get("batch", 1)))
    thr = result.throughput or {}
    if thr.get("bandwidth_gbs") is not None:
        t.add_row("effective bandwidth", f"{thr['bandwidth_gbs']:.1f} GB/s")
        if thr.get("pct_theoretical_bandwidth") is not None:
            t.add_row("of theoretical DRAM bandwidth", f"{thr['pct_theoretical_bandwidth']:.1f} %")
    if thr.get("gflops") is not None:
        t.add_row("FLOP rate", f"{thr['gflops']:.1f} GFLOP/s")
    if run_id is not None:
        t.add_row("history run id", str(run_id))
    cert = result.certificate or {}
    if cert:
        ck = cert.get("checks", {})
        passed = [k for k, v in ck.items() if v.get("checked") and v.get("ok")]
        t.add_row("certificate", f"{cert.get('verdict')}; checks passed: {', '.join(passed) or 'none'}")
        clk = cert.get("clocks", {})
        if clk.get("sm_mhz_first") is not None:
            t.add_row("SM / mem clock (first, last)", f"{clk['sm_mhz_first']:.0f}/{clk.get('mem_mhz_first') or 0:.0f}, "
                      f"{clk.get('sm_mhz_last') or 0:.0f}/{clk.get('mem_mhz_last') or 0:.0f} MHz")
    con.print(t)
    for reason in cert.get("reasons", []):
        con.print(f"[red]suspect:[/red] {reason}")
    from cudalens.measure.certificate import checks_not_made  # noqa: PLC0415

    for what in checks_not_made(cert):
        con.print(f"note: {what}", soft_wrap=True)
    for w in list(thr.get("warnings", [])) + list(result.notes):
        con.print(f"[yellow]warning:[/yellow] {w}")
