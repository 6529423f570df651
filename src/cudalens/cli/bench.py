"""`cudalens bench`: time one CUDA C++ kernel (in an isolated child process) and store the run."""

from __future__ import annotations

import os

import click

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError
from cudalens.measure.harness import TIMERS

ARG_HELP = """Kernel argument, one per parameter, in order. Arrays: DTYPE[N][:INIT][@ROLE],
e.g. float32[1048576]:rand, float32[2^20]:zeros@out; INIT is zeros|ones|rand|arange|empty|<number>
(default rand); ROLE is in|out|inout (default out for zeros/empty, else in) and sets the byte count.
Scalars: DTYPE=VALUE, e.g. int32=1048576. DTYPE: int8..int64, uint8..uint64, float16|32|64."""


def register(group: click.Group) -> None:
    @group.command("bench")
    @click.argument("source", type=click.Path(dir_okay=False))
    @click.option("--kernel", "kernel", required=True, help='Kernel name (declared extern "C").')
    @click.option("--grid", required=True, help="Grid size in blocks: G or G,G or G,G,G.")
    @click.option("--block", required=True, help="Block size in threads: B or B,B or B,B,B.")
    @click.option("--arg", "args", multiple=True, help=ARG_HELP)
    @click.option("--shared-mem", default=0, show_default=True, help="Dynamic shared memory per block (bytes).")
    @click.option("-D", "--define", "defines", multiple=True, help="Preprocessor macro NAME or NAME=VALUE.")
    @click.option("--cold/--hot", default=True, show_default=True,
                  help="cold: flush L2 (2x its size) before every launch; hot: batches of back-to-back launches.")
    @click.option("--batch", type=int, default=None, help="Launches per sample in hot mode (default: adaptive).")
    @click.option("--timer", type=click.Choice(TIMERS), default="events", show_default=True,
                  help="events: CUDA events around the launch, less the event floor (an empty event pair, "
                       "measured at the start: ~1 us on an H100); events-raw: the event interval as it is; "
                       "cupti: the kernel's own start/end from CUPTI activity records (on an H100 0.5-1.2 us "
                       "below ncu for kernels under 10 us, and tracing slowed DRAM-bound kernels by ~7 %); "
                       "auto: CUPTI when available, else events.")
    @click.option("--bytes-read", type=int, default=None, help="Bytes read per launch (default: from --arg roles).")
    @click.option("--bytes-written", type=int, default=None, help="Bytes written per launch (default: from --arg roles).")
    @click.option("--flops", type=float, default=0.0, help="Floating-point operations per launch.")
    @click.option("--noise", default="0.5%", show_default=True, help="Stop when stdev/mean of the samples is below this.")
    @click.option("--min-samples", default=10, show_default=True)
    @click.option("--min-time", default=0.5, show_default=True, help="Minimum sampling time (s).")
    @click.option("--max-time", default=10.0, show_default=True, help="Stop sampling after this many seconds.")
    @click.option("--timeout", default=120.0, show_default=True, help="Kill the measurement after this many seconds.")
    @click.option("--device", default=0, show_default=True, help="CUDA device index.")
    @click.option("--db", default=None, help="History database (default ~/.cudalens/history.db).")
    @click.option("--no-save", is_flag=True, help="Do not store the run in the history database.")
    @format_option
    def bench_cmd(source, kernel, grid, block, args, shared_mem, defines, cold, batch, timer, bytes_read,
                  bytes_written, flops, noise, min_samples, min_time, max_time, timeout, device, db,
                  no_save, fmt):
        """Time KERNEL from SOURCE (a .cu file); adaptive sampling, all samples kept.

        The measurement runs in a child process: a kernel that faults or hangs is reported
        (exit status 2) without taking cudalens down. Needs an NVIDIA GPU.

        Example: cudalens bench copy.cu --kernel copy --grid 4096 --block 256
        --arg float32[1048576]:rand --arg float32[1048576]:zeros --arg int32=1048576
        """
        from cudalens.measure.argspec import parse_args, parse_dims  # noqa: PLC0415
        from cudalens.measure.isolate import run_isolated  # noqa: PLC0415
        from cudalens.measure.result import BenchResult  # noqa: PLC0415
        from cudalens.measure.sampling import SamplingPolicy  # noqa: PLC0415
        from cudalens.measure.stats import parse_percent  # noqa: PLC0415

        if not os.path.isfile(source):
            raise InputError(f"{source}: no such CUDA source file")
        with open(source, encoding="utf-8") as fh:
            text = fh.read()
        specs = parse_args(args)  # InputError names the bad --arg
        g, b = parse_dims(grid, "grid"), parse_dims(block, "block")
        try:
            policy = SamplingPolicy(noise_target=parse_percent(noise), min_samples=min_samples,
                                    min_time_s=min_time, max_time_s=max_time,
                                    max_samples=max(10_000, min_samples))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        define_map = {}
        for d in defines:
            name, _, value = d.partition("=")
            define_map[name] = value if value else None
        request = {
            "source": text, "origin": source, "kernel": kernel, "grid": list(g), "block": list(b),
            "shared_mem": shared_mem, "args": [s.text for s in specs], "mode": "cold" if cold else "hot",
            "batch": batch, "defines": define_map, "bytes_read": bytes_read, "bytes_written": bytes_written,
            "flops": flops, "policy": policy.to_dict(), "device": device, "timer": timer,
        }
        result = BenchResult.from_dict(run_isolated(request, timeout_s=timeout))
        run_id = None
        if not no_save:
            from cudalens.measure.history import save  # noqa: PLC0415

            run_id = save(result, db)
        if fmt == "json":
            data = result.to_dict()
            data["run_id"] = run_id
            echo_json(data)
            return
        _render(result, run_id)


def _fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds:.3f} s"


def _render(result, run_id) -> None:
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    s = result.summary
    con = Console()
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
    con.print(t)
    for w in list(thr.get("warnings", [])) + list(result.notes):
        con.print(f"[yellow]warning:[/yellow] {w}")
