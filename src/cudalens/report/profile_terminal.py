"""Terminal rendering of an application profile (``cudalens/profile-1``): summary, top kernels,
transfers, then the findings in rank order with their measured cost."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cudalens.report.terminal import _COLORS


def _t(seconds: float | None, *, unknown: str = "-", micro: str = "us") -> str:
    """A duration in s, ms or microseconds (``micro``: how the HTML page spells the unit)."""
    if seconds is None:
        return unknown
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} {micro}"


def render_profile(report: dict[str, Any], console: Console, top: int = 10) -> None:
    s = report["summary"]
    dev = report.get("device") or {}
    console.print(Text(f"cudalens profile: {' '.join(report['command'])}", style="bold"))
    console.print(Text(f"  {dev.get('name') or 'GPU'} (cc {dev.get('cc')}), {report['collector']} trace, "
                       f"mode {report['mode']}; program {report['wall_s']:.2f} s wall", style="dim"))
    console.print(f"  assessed span {_t(s['span_s'])}: GPU busy {s['busy_share']:.1%}, kernels {_t(s['kernel_s'])} "
                  f"in {s['launches']} launches, copies {_t(s['copy_s'])}, sets {_t(s['set_s'])}, "
                  f"idle {_t(s['idle_s'])}")
    console.print(Text(f"  window: {s.get('window', '')}; whole trace {_t(s.get('trace_span_s'))}", style="dim"))
    for r in s.get("ranges") or []:
        console.print(f"  NVTX range '{r['name']}': {r['count']} x, {_t(r['total_s'])} in all, {_t(r['mean_s'])} each")
    t = Table(title="top kernels (share of kernel time)", show_edge=False, box=None, padding=(0, 1))
    for col in ("kernel", "share", "time", "launches", "mean", "grid x block", "regs", "occupancy", "2x ->", "source"):
        t.add_column(col, justify="left" if col in ("kernel", "grid x block", "source") else "right")
    for k in report["kernels"][:top]:
        occ = (k.get("occupancy") or {}).get("occupancy")
        src = k.get("source") or {}
        t.add_row(k["name"][:40], f"{k['share']:.1%}", _t(k["total_s"]), str(k["launches"]), _t(k["mean_s"]),
                  f"{'x'.join(map(str, k['grid']))} x {'x'.join(map(str, k['block']))}", str(k["registers"]),
                  "-" if occ is None else f"{occ:.0%}", f"{k['amdahl_2x']:.2f}x",
                  f"{src['file'].rsplit('/', 1)[-1]}:{src['line']}" if src else "-")
    console.print(t)
    if report["transfers"]:
        tt = Table(title="transfers", show_edge=False, box=None, padding=(0, 1))
        for col in ("kind", "host memory", "count", "bytes", "time", "GB/s", "sync", "small"):
            tt.add_column(col, justify="left" if col in ("kind", "host memory") else "right")
        for x in report["transfers"]:
            bw = x.get("achieved_gbps")
            tt.add_row(x["kind"], x.get("host_memory") or "-", str(x["count"]), f"{x['bytes']:,}", _t(x["total_s"]),
                       "-" if bw is None else f"{bw:.2f}", str(x["synchronous"]), str(x["small"]))
        console.print(tt)
        if s.get("link_gbps"):
            console.print(Text(f"  link: {s['link']}, {s['link_gbps']:.1f} GB/s per direction (theoretical)",
                               style="dim"))
    console.print(Text("\nfindings (rank order)", style="bold"))
    if not report["findings"]:
        console.print("  none")
    for f in report["findings"]:
        line = Text("  ")
        line.append(f"{f['priority']:<10}", style=_COLORS.get(f["priority"], ""))
        where = f"{f['file'].rsplit('/', 1)[-1]}:{f['line']}" if f.get("line") else (f.get("kernel") or "application")
        cost = f" [{f['impact']:.1%} {f['impact_text']}]" if f.get("impact") is not None else ""
        line.append(f" {f['rule']:<4} {where}: {f['message']}{cost}")
        console.print(line)
        console.print(Text(f"             fix: {f['fix']}", style="green"))
    for note in report.get("notes") or []:
        console.print(Text(f"note: {note}", style="dim"))
