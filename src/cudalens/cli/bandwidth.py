"""`cudalens bandwidth`: host<->device and device<->device bandwidth against the theoretical peaks."""

from __future__ import annotations

import click
from rich.console import Console, Group
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError
from cudalens.measure import bandwidth as bw
from cudalens.report.console import report_console


def _pct(value: float | None) -> str:
    return "null" if value is None else f"{value:.1f} %"


def result_renderable(result: bw.BandwidthResult) -> Group:
    """All samples, then a summary (best size per test) last."""
    head = Text(
        f"Device {result.device_index}: {result.device_name or 'null'}  CC {result.cc or 'null'}\n"
        f"theoretical DRAM {result.memory_theoretical_gb_per_s or 0:,.1f} GB/s"
        if result.memory_theoretical_gb_per_s else
        f"Device {result.device_index}: {result.device_name or 'null'}  theoretical DRAM unknown",
        style="bold",
    )
    link = (f"theoretical {result.pcie_link}: {result.pcie_theoretical_gb_per_s:,.2f} GB/s per "
            "direction" if result.pcie_theoretical_gb_per_s else "theoretical PCIe unknown")
    all_rows = Table(title="All measurements (median of repeats)")
    for col, just in (("test", "left"), ("size", "right"), ("copies/sample", "right"),
                      ("samples", "right"), ("median time", "right"), ("GB/s", "right"),
                      ("% of theoretical", "right")):
        all_rows.add_column(col, justify=just)
    for s in result.samples:
        all_rows.add_row(s.test, bw.size_text(s.nbytes), str(s.copies_per_sample),
                         str(len(s.times_ms)), f"{s.median_ms * 1e3:,.2f} us",
                         f"{s.gb_per_s:,.2f}", _pct(s.percent_of_reference))
    summary = Table(title="Summary: best size per test")
    for col in ("test", "method", "size", "GB/s", "% of theoretical", "reference"):
        summary.add_column(col, justify="right" if col in ("GB/s", "size") else "left")
    for t in bw.TESTS:
        best = result.best(t.key)
        if best is None:
            continue
        ref = "PCIe, per direction" if t.reference == "pcie" else "DRAM (read + written bytes)"
        summary.add_row(t.key, t.method, bw.size_text(best.nbytes), f"{best.gb_per_s:,.2f}",
                        _pct(best.percent_of_reference), ref)
    parts = [head, Text(link), all_rows]
    if result.kernel:
        k = result.kernel
        parts.append(Text(f"copy kernel: {k.get('grid')} blocks x {k.get('block')} threads "
                          f"({k.get('blocks_per_sm')} per SM x {k.get('sms')} SMs), compiled "
                          f"with {k.get('compiler')}, output verified: {k.get('verified')}"))
    parts += [Text(result.counting, style="dim"), summary]
    return Group(*parts)


def register(group: click.Group) -> None:
    @group.command("bandwidth")
    @click.option("--device", "index", type=int, default=0, show_default=True,
                  help="CUDA device index.")
    @click.option("--sizes", default=None,
                  help="Comma-separated sizes, e.g. 4KiB,1MiB,1GiB (KB/MB/GB = 10^3.., "
                       "KiB/MiB/GiB = 2^10..). Default: 1 KiB to 1 GiB in steps of 4x.")
    @click.option("--quick", is_flag=True, help="Three sizes (64 KiB, 4 MiB, 64 MiB), 5 repeats.")
    @click.option("--tests", default=",".join(bw.TEST_KEYS), show_default=True,
                  help="Comma-separated tests to run.")
    @click.option("--repeats", type=click.IntRange(min=1), default=10, show_default=True,
                  help="Timed samples per test and size (fewer for slow large copies, >= 3).")
    @click.option("--warmup", type=click.IntRange(min=0), default=2, show_default=True,
                  help="Untimed copies before timing.")
    @format_option
    def bandwidth(index, sizes, quick, tests, repeats, warmup, fmt):
        """Measure host<->device (pageable, pinned) and device<->device bandwidth.

        GB/s = 10^9 B/s. Device copies count bytes read + bytes written and are compared with
        the theoretical DRAM bandwidth; host copies with the theoretical PCIe bandwidth.
        """
        if quick and sizes:
            raise InputError("--quick and --sizes exclude each other")
        size_list = bw.parse_sizes(sizes) if sizes else (bw.quick_sizes() if quick else None)
        if quick:
            repeats = min(repeats, 5)
        test_list = tuple(bw.spec(t.strip()).key for t in tests.split(",") if t.strip())

        from cudalens.hardware.live import query_device  # noqa: PLC0415

        report = query_device(index)  # NoDeviceError before any progress bar is drawn
        console = Console(stderr=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            task = progress.add_task("bandwidth", total=None)

            def on_progress(done: int, total: int, label: str) -> None:
                progress.update(task, completed=done, total=total, description=label)

            result = bw.run_bandwidth(index, size_list, test_list, repeats=repeats, warmup=warmup,
                                      report=report, progress=on_progress)
        if fmt == "json":
            echo_json(result)
            return
        report_console().print(result_renderable(result))
