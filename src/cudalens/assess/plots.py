"""Plots for the assess commands (matplotlib, Agg backend; PNG or SVG chosen by the suffix)."""

from __future__ import annotations

import os
from pathlib import Path

from cudalens.assess.offload import OffloadPoint
from cudalens.assess.scaling import ScalingRow, amdahl_limit
from cudalens.errors import InputError

_FORMATS = {".png": "png", ".svg": "svg"}


def _check_path(path: str | os.PathLike) -> tuple[Path, str]:
    p = Path(path)
    fmt = _FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise InputError(f"{p}: plot file must end in .png or .svg")
    if not p.parent.exists():
        raise InputError(f"{p.parent}: no such folder for the plot")
    return p, fmt


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, plt.subplots(figsize=(7, 4.5))


def plot_scaling(rows: list[ScalingRow], p: float, path: str | os.PathLike) -> Path:
    """Amdahl and Gustafson speedup against processors (log2 axes), with Amdahl's limit."""
    out, fmt = _check_path(path)
    plt, (fig, ax) = _figure()
    n = [r.processors for r in rows]
    ax.plot(n, [r.amdahl for r in rows], marker="o", label="Amdahl (fixed size)")
    ax.plot(n, [r.gustafson for r in rows], marker="s", label="Gustafson (scaled size)")
    ax.plot(n, n, linestyle=":", color="grey", label="ideal (S = N)")
    limit = amdahl_limit(p)
    if limit != float("inf"):
        ax.axhline(limit, linestyle="--", color="C0", alpha=0.6, label=f"Amdahl limit {limit:.3g}x")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("processors N")
    ax.set_ylabel("speedup (x)")
    ax.set_title(f"Speedup bounds, parallel fraction P = {p:g}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, format=fmt)
    plt.close(fig)
    return out


def plot_offload(points: list[OffloadPoint], title: str, path: str | os.PathLike) -> Path:
    """Host time and device time (compute + transfers) against problem size, log-log."""
    out, fmt = _check_path(path)
    plt, (fig, ax) = _figure()
    n = [pt.n for pt in points]
    ax.plot(n, [pt.host_s for pt in points], marker="o", label="host")
    ax.plot(n, [pt.device_total_s for pt in points], marker="s", label="device: compute + transfers")
    ax.plot(n, [pt.transfer_s for pt in points], linestyle=":", label="transfers alone")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("problem size n")
    ax.set_ylabel("time (s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, format=fmt)
    plt.close(fig)
    return out
