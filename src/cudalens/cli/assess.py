"""Commands `speedup`, `assess` and `offload`: before porting, is it worth it? (catalog A1-A4)."""

from __future__ import annotations

import math

import click
from rich.console import Console
from rich.table import Table

from cudalens.assess import hotspots as hs
from cudalens.assess import offload as ol
from cudalens.assess import scaling
from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError
from cudalens.report.console import report_console


def _console() -> Console:
    """Terminal output; when piped, wide enough that tables do not wrap their cells."""
    return report_console()


def _parse_fraction(text: str) -> float:
    """A fraction as 0.75, 3/4 or 75%."""
    t = text.strip()
    try:
        if t.endswith("%"):
            value = float(t[:-1]) / 100.0
        elif "/" in t:
            num, den = t.split("/", 1)
            value = float(num) / float(den)
        else:
            value = float(t)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"parallel fraction must be a number such as 0.75, 3/4 or 75%, got {text!r}") from None
    return scaling.check_fraction(value)


def _x(value: float) -> str:
    return "unbounded" if math.isinf(value) else f"{value:.3f}x"


def _seconds(value: float) -> str:
    """A time with an SI prefix and its unit: 1.25 ms, 3.0 s."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return "0 s" if value == 0 else f"{value / 1e-12:.3g} ps"


# ------------------------------------------------------------------------------------------ speedup


@click.command("speedup")
@click.option("--parallel-fraction", "fraction", required=True, help="P in [0, 1]: 0.75, 3/4 or 75%.")
@click.option("--processors", "-n", type=int, required=True, help="Number of processors N (>= 1).")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), help="Write a plot (.png or .svg).")
@format_option
def speedup_cmd(fraction: str, processors: int, plot_file: str | None, fmt: str) -> None:
    """Amdahl (strong scaling) and Gustafson (weak scaling) speedup bounds (A2, A3)."""
    p = _parse_fraction(fraction)
    n = int(scaling.check_processors(processors))
    rows = scaling.scaling_table(p, n)
    s_n, limit, g_n = scaling.amdahl(p, n), scaling.amdahl_limit(p), scaling.gustafson(p, n)
    written = None
    if plot_file:
        from cudalens.assess.plots import plot_scaling

        written = str(plot_scaling(rows, p, plot_file))
    if fmt == "json":
        echo_json(
            {
                "parallel_fraction": p,
                "processors": n,
                "amdahl_speedup_x": s_n,
                "amdahl_limit_x": None if math.isinf(limit) else limit,
                "gustafson_speedup_x": g_n,
                "table": [r.to_dict() for r in rows],
                "plot": written,
            }
        )
        return
    con = _console()
    con.print(f"Parallel fraction P = {p:g}, N = {n} processors")
    con.print(f"Amdahl (fixed problem size):   S = 1/((1-P)+P/N) = {_x(s_n)}; as N grows, at most 1/(1-P) = {_x(limit)}")
    con.print(f"Gustafson (size grows with N): S = N+(1-P)(1-N) = {_x(g_n)}")
    table = Table(title="Speedup bounds by processor count")
    table.add_column("processors N", justify="right")
    table.add_column("Amdahl speedup (x)", justify="right")
    table.add_column("Amdahl efficiency (%)", justify="right")
    table.add_column("Gustafson speedup (x)", justify="right")
    for r in rows:
        mark = " <" if r.processors == n else ""
        table.add_row(f"{r.processors}{mark}", f"{r.amdahl:.3f}", f"{100 * r.amdahl_efficiency:.1f}", f"{r.gustafson:.3f}")
    con.print(table)
    if written:
        con.print(f"plot written to {written}")


# ------------------------------------------------------------------------------------------- assess


@click.command(
    "assess",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--pstats", "pstats_file", type=click.Path(), help="Read a saved cProfile output instead of running.")
@click.option("--gprof", "gprof_file", type=click.Path(), help="Read gprof text output (its 'Flat profile:').")
@click.option("--top", "-k", "top", type=int, default=10, show_default=True, help="How many hotspots to list.")
@click.option("--processors", "-n", type=int, default=1024, show_default=True, help="N for the Amdahl bound.")
@click.option("--timeout", "timeout_s", type=float, default=None, help="Stop the program after this many seconds.")
@click.option("--show-output", is_flag=True, help="Echo the program's captured stdout and stderr (to stderr).")
@format_option
def assess_cmd(command, pstats_file, gprof_file, top, processors, timeout_s, show_output, fmt) -> None:
    """Profile a program and bound what parallelizing its hotspots can give (A1, A2).

    \b
    cudalens assess -- python prog.py ARGS...
    cudalens assess --pstats prog.pstats
    cudalens assess --gprof gprof-output.txt

    The program runs in a subprocess with its output captured; a nonzero exit status is
    reported (and the profile up to that point still shown), it does not fail this command.
    Hotspots are ranked by self time; a hotspot's share of the total is the parallel fraction P
    used for its Amdahl bound.
    """
    sources = sum(bool(x) for x in (command, pstats_file, gprof_file))
    if sources != 1:
        raise InputError("give exactly one of: a command after --, --pstats FILE, --gprof FILE")
    if top < 1:
        raise InputError(f"--top must be at least 1, got {top}")
    scaling.check_processors(processors)
    run = None
    if command:
        if timeout_s is not None and timeout_s <= 0:
            raise InputError(f"--timeout must be a positive number of seconds, got {timeout_s:g}")
        run = hs.profile_python(list(command), timeout_s=timeout_s)
        profile = run.profile
    elif pstats_file:
        profile = hs.from_pstats(pstats_file)
    else:
        profile = hs.read_gprof(gprof_file)
    each, together = hs.bounds(profile, top, processors)
    listed = profile.top(top)

    if run is not None and show_output:
        click.echo(run.stdout, err=True, nl=False)
        click.echo(run.stderr, err=True, nl=False)
    if fmt == "json":
        echo_json(
            {
                "source": profile.source,
                "total_self_s": profile.total_s,
                "functions_profiled": len(profile.hotspots),
                "program": None
                if run is None
                else {"command": list(run.command), "exit_code": run.exit_code, "stdout": run.stdout, "stderr": run.stderr},
                "hotspots": [dict(h.to_dict(), bound=b.to_dict()) for h, b in zip(listed, each)],
                "top_together": together.to_dict(),
            }
        )
        return
    con = _console()
    if run is not None:
        status = "exited normally" if run.exit_code == 0 else f"EXITED WITH CODE {run.exit_code}"
        out_lines = len(run.stdout.splitlines()) + len(run.stderr.splitlines())
        con.print(f"program {status}; {out_lines} output lines captured (--show-output to see them)")
        if run.exit_code != 0 and run.stderr.strip():
            con.print(f"  last stderr line: {run.stderr.strip().splitlines()[-1]}")
    con.print(f"{profile.source} profile: {len(profile.hotspots)} functions, {_seconds(profile.total_s)} of self time in all")
    table = Table(title=f"Hotspots by self time (Amdahl bound if parallelized alone; N = {processors})")
    for name, just in (
        ("#", "right"), ("function", "left"), ("file:line", "left"), ("calls", "right"),
        ("self (s)", "right"), ("cumulative (s)", "right"), ("share (%)", "right"),
        (f"max speedup N={processors} (x)", "right"), ("max speedup N=inf (x)", "right"),
    ):
        table.add_column(name, justify=just)  # type: ignore[arg-type]
    for i, (h, b) in enumerate(zip(listed, each), 1):
        table.add_row(
            str(i), h.function, h.location, "" if h.calls is None else str(h.calls), f"{h.self_s:.4f}",
            "" if h.cumulative_s is None else f"{h.cumulative_s:.4f}", f"{100 * h.share:.1f}",
            f"{b.speedup_at_n:.3f}", "unbounded" if math.isinf(b.speedup_limit) else f"{b.speedup_limit:.3f}",
        )
    con.print(table)
    con.print(
        f"Top {len(listed)} together: P = {100 * together.share:.1f}% of self time -> at most "
        f"{_x(together.speedup_at_n)} on N = {processors}, {_x(together.speedup_limit)} with unlimited processors"
    )


# ------------------------------------------------------------------------------------------ offload


@click.command("offload")
@click.option("--ops", required=True, help="Operations as a formula in n, e.g. 'n**3' or '2*n**3'.")
@click.option("--elements", required=True, help="Elements moved host<->device (both ways), e.g. '3*n**2'.")
@click.option("--bytes-per-element", type=float, default=4.0, show_default=True, help="Bytes per element.")
@click.option("--host-gflops", type=float, default=ol.DEFAULT_HOST_OPS_PER_S / 1e9, show_default=True,
              help="Host throughput, 10^9 ops/s.")
@click.option("--device-gflops", type=float, default=ol.DEFAULT_DEVICE_OPS_PER_S / 1e9, show_default=True,
              help="Device throughput, 10^9 ops/s.")
@click.option("--pcie-gen", type=int, default=ol.DEFAULT_PCIE_GEN, show_default=True, help="PCIe generation 1-6.")
@click.option("--pcie-lanes", type=int, default=ol.DEFAULT_PCIE_LANES, show_default=True, help="PCIe link width.")
@click.option("--pcie-gbps", type=float, default=None, help="Measured link throughput, GB/s (10^9 B/s); overrides gen/lanes.")
@click.option("--overhead-us", type=float, default=0.0, show_default=True, help="Fixed cost per offload, microseconds.")
@click.option("--sizes", default=None, help="Comma-separated n for the table (default 8,16,...,32768).")
@click.option("--n-max", type=int, default=ol.DEFAULT_N_MAX, show_default=True, help="Largest n the crossover search tries.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), help="Write a plot (.png or .svg).")
@format_option
def offload_cmd(ops, elements, bytes_per_element, host_gflops, device_gflops, pcie_gen, pcie_lanes, pcie_gbps,
                overhead_us, sizes, n_max, plot_file, fmt) -> None:
    """Host vs device + transfers for an operation, and the size above which the GPU wins (A4)."""
    if pcie_gbps is not None:
        if not (math.isfinite(pcie_gbps) and pcie_gbps > 0):
            raise InputError(f"--pcie-gbps must be a positive number, got {pcie_gbps:g}")
        link, link_text = pcie_gbps * 1e9, f"{pcie_gbps:g} GB/s (given)"
    else:
        link = ol.pcie_bytes_per_s(pcie_gen, pcie_lanes)
        link_text = f"{link / 1e9:.2f} GB/s (PCIe gen {pcie_gen} x{pcie_lanes}, theoretical, per direction)"
    model = ol.OffloadModel.from_text(
        ops, elements, bytes_per_element, host_ops_per_s=host_gflops * 1e9,
        device_ops_per_s=device_gflops * 1e9, link_bytes_per_s=link, overhead_s=overhead_us * 1e-6,
    )
    ns = _sizes(sizes)
    points = [model.point(n) for n in ns]
    cross = ol.crossover(model, 1, n_max)
    need = model.required_ops_per_byte
    written = None
    if plot_file:
        from cudalens.assess.plots import plot_offload

        written = str(plot_offload(points, f"ops {model.ops.text}, elements {model.elements.text}", plot_file))
    if fmt == "json":
        echo_json(
            {
                "ops": model.ops.text,
                "elements": model.elements.text,
                "bytes_per_element": bytes_per_element,
                "host_ops_per_s": model.host_ops_per_s,
                "device_ops_per_s": model.device_ops_per_s,
                "link_bytes_per_s": model.link_bytes_per_s,
                "overhead_s": model.overhead_s,
                "required_ops_per_byte": None if math.isinf(need) else need,
                "crossover": cross.to_dict(),
                "table": [pt.to_dict() for pt in points],
                "plot": written,
            }
        )
        return
    con = _console()
    con.print(f"ops(n) = {model.ops.text}; elements moved(n) = {model.elements.text} x {bytes_per_element:g} B")
    con.print(f"host {host_gflops:g} GFLOP/s (10^9 ops/s), device {device_gflops:g} GFLOP/s, link {link_text}"
              + (f", overhead {overhead_us:g} us" if overhead_us else ""))
    if math.isinf(need):
        con.print("the device is not faster than the host per operation: offloading never pays")
    else:
        con.print(f"the GPU needs more than {need:.3g} ops per transferred byte (ignoring fixed overhead)")
    if cross.n is None:
        best = max(model.point(cross.n_max).ops_per_byte, max((pt.ops_per_byte for pt in points), default=0))
        con.print(f"crossover: never for n <= {cross.n_max}: work per byte reaches only {best:.3g} ops/byte "
                  "here; keep it on the host, or keep the data on the device across operations (A5)")
    else:
        tail = "" if cross.wins_at_n_max else f" (but the host wins again by n = {cross.n_max})"
        con.print(f"crossover: the GPU wins for n >= {cross.n}{tail}")
    table = Table(title="Host vs device + transfers")
    for name in ("n", "moved (MB)", "host", "GPU compute", "transfers", "GPU total",
                 "ops/byte", "speedup (x)", "winner"):
        table.add_column(name, justify="left" if name == "winner" else "right")
    for pt in points:
        table.add_row(
            str(int(pt.n)), f"{pt.transfer_bytes / 1e6:.4g}", _seconds(pt.host_s),
            _seconds(pt.device_compute_s), _seconds(pt.transfer_s), _seconds(pt.device_total_s),
            "inf" if math.isinf(pt.ops_per_byte) else f"{pt.ops_per_byte:.3g}",
            "inf" if math.isinf(pt.speedup) else f"{pt.speedup:.3g}", "device" if pt.device_wins else "host",
        )
    con.print(table)
    if written:
        con.print(f"plot written to {written}")


def _sizes(text: str | None) -> list[int]:
    if text is None:
        return ol.default_sizes()
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = int(float(part))
        except ValueError:
            raise InputError(f"--sizes: {part!r} is not a number") from None
        if value < 1:
            raise InputError(f"--sizes: problem sizes must be >= 1, got {part!r}")
        out.append(value)
    if not out:
        raise InputError("--sizes: give at least one size, e.g. 64,256,1024")
    return out


def register(group: click.Group) -> None:
    group.add_command(speedup_cmd)
    group.add_command(assess_cmd)
    group.add_command(offload_cmd)
