"""`cudalens device`: the hardware table row of a compute capability, or a live device report."""

from __future__ import annotations

from dataclasses import asdict, fields

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from cudalens.cli._common import echo_json, format_option
from cudalens.hardware import live as live_mod
from cudalens.hardware.table import CCLimits, limits
from cudalens.hardware.throughput import OPERATIONS, Throughputs, peaks, throughputs
from cudalens.report.console import report_console

_UNITS = {  # unit of each CCLimits field (sizes are bytes)
    "max_threads_per_sm": "threads", "max_warps_per_sm": "warps", "max_blocks_per_sm": "blocks",
    "regs_per_sm": "32-bit registers", "max_regs_per_block": "32-bit registers",
    "max_regs_per_thread_guide": "registers", "max_regs_per_thread_header": "registers",
    "reg_alloc_unit": "registers per warp", "sub_partitions": "schedulers",
    "smem_per_sm": "B", "max_smem_per_block_default": "B", "max_smem_per_block_optin": "B",
    "reserved_smem_per_block": "B", "smem_alloc_granularity": "B",
    "smem_carveout_options_text": "KB options", "barrier_slots_per_sm": "slots",
    "warp_size": "threads",
}


def _fmt(value, unit: str = "") -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (tuple, list)):
        return ", ".join(map(str, value)) if value else "none"
    if unit == "kHz" and isinstance(value, int):
        return f"{value / 1000:,.0f} MHz"
    if isinstance(value, float):
        value = f"{value:,.1f}"
    elif isinstance(value, int):
        value = f"{value:,}"
    return f"{value} {unit}".strip()


def _si(per_s: float | None, unit: str) -> str:
    if per_s is None:
        return "null"
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if per_s >= factor:
            return f"{per_s / factor:,.2f} {prefix}{unit}"
    return f"{per_s:,.0f} {unit}"


def throughput_table(tp: Throughputs, peak_list=None) -> Table:
    """Per-SM results per clock (and device peaks when given) as a rich table."""
    table = Table(title=f"Arithmetic throughput, CC {tp.cc} (results per clock cycle per SM)")
    table.add_column("operation")
    table.add_column("results/clk/SM", justify="right")
    if peak_list:
        table.add_column("device peak", justify="right")
    table.add_column("note")
    by_key = {p.key: p for p in (peak_list or ())}
    for op in OPERATIONS:
        r = tp.rate(op.key)
        row = [op.description, _fmt(r.value)]
        if peak_list:
            p = by_key[op.key]
            row.append(_si(p.per_s, p.unit))
        row.append(r.note)
        table.add_row(*row)
    table.caption = f"Source: {tp.source}"
    return table


def limits_table(lim: CCLimits) -> Table:
    table = Table(title=f"Hardware table row, CC {lim.cc}")
    table.add_column("limit")
    table.add_column("value", justify="right")
    for f in fields(lim):
        if f.name in ("sources", "flags"):
            continue
        table.add_row(f.name, _fmt(getattr(lim, f.name), _UNITS.get(f.name, "")))
    table.caption = f"sources: {lim.sources}\nflags: {lim.flags or 'none'}"
    return table


def report_renderable(report: live_mod.DeviceReport) -> Group:
    """A deviceQuery-style view of a DeviceReport (every row says its source)."""
    head = Text(
        f"Device {report.index}: {report.name or 'null'}  CC {report.cc or 'null'}  "
        f"total memory {_fmt(report.total_memory_bytes, 'B')}"
        + (f" ({report.total_memory_bytes / 1024**3:.1f} GiB)" if report.total_memory_bytes else "")
        + f"  CUDA driver API {report.cuda_driver_version or 'null'}",
        style="bold",
    )
    table = Table(title="Device report")
    for col in ("item", "value", "source", "note"):
        table.add_column(col, justify="right" if col == "value" else "left", overflow="fold")
    for r in (*report.attributes, *report.nvml):
        table.add_row(r.label, _fmt(r.value, r.unit), r.source, r.note)

    bw = Table(title="Theoretical bandwidth")
    for col in ("path", "GB/s (10^9 B/s)", "formula"):
        bw.add_column(col)
    mb = report.memory_bandwidth
    bw.add_row("device memory (BPG 8.2.1)", f"{mb.gb_per_s:,.1f}" if mb else "null",
               mb.formula if mb else "memory clock or bus width unknown")
    for label, link in (("PCIe link now", report.pcie_current), ("PCIe link max", report.pcie_max)):
        bw.add_row(label, f"{link.gb_per_s:,.2f} per direction" if link else "null",
                   (link.formula + (f"; {link.note}" if link.note else "")) if link else
                   "PCIe generation/width unknown (NVML)")

    parts = [head, table, bw]
    if report.cc and report.peaks:
        parts.append(throughput_table(throughputs(report.cc), report.peaks))
    for note in report.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    return Group(*parts)


def _print(renderable) -> None:
    report_console().print(renderable)


def _finite(ctx, param, value):
    import math

    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def register(group: click.Group) -> None:
    @group.command("device")
    @click.option("--cc", default=None, help="Show the table row of this compute capability "
                  "(e.g. 9.0) instead of querying a GPU.")
    @click.option("--device", "index", type=int, default=0, show_default=True,
                  help="CUDA device index to query.")
    @click.option("--sms", type=click.IntRange(min=1), default=None,
                  help="With --cc: SM count, to compute device peak rates.")
    @click.option("--clock-mhz", type=click.FloatRange(min=0, min_open=True), default=None, callback=_finite,
                  help="With --cc: SM clock in MHz, to compute device peak rates.")
    @format_option
    def device(cc, index, sms, clock_mhz, fmt):
        """Hardware limits and throughputs of a CC, or a live report of a GPU.

        Without --cc: read the GPU through CUDA attribute queries and NVML, and print the
        theoretical memory and PCIe bandwidth. Needs an NVIDIA driver.
        """
        if cc is not None:
            lim = limits(cc)
            tp = throughputs(lim.cc)
            peak_list = peaks(lim.cc, sms, clock_mhz * 1e6) if sms and clock_mhz else None
            if fmt == "json":
                echo_json({"cc": lim.cc, "limits": asdict(lim), "throughputs": tp.to_dict(),
                           "peaks": [asdict(p) for p in peak_list] if peak_list else None,
                           "units": {"limits": _UNITS, "throughputs": "results per clock per SM",
                                     "peaks": "FLOP/s for FMA rows (x2), results/s otherwise"}})
                return
            _print(Group(limits_table(lim), throughput_table(tp, peak_list)))
            return
        if sms or clock_mhz:
            raise click.UsageError("--sms and --clock-mhz go with --cc")
        report = live_mod.query_device(index)
        if fmt == "json":
            echo_json(report)
            return
        _print(report_renderable(report))
