"""The three charts of CUDA's occupancy spreadsheet, with the current launch marked.

Occupancy against threads per block, against registers per thread and against dynamic shared
memory per block, each varying one input and holding the other two at the current values.
:func:`curves` computes the data (pure); :func:`plot_occupancy` draws it with matplotlib (Agg).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cudalens.errors import InputError
from cudalens.occupancy.calculator import OccupancyResult, calculate
from cudalens.occupancy.device import OccDevice, device_for
from cudalens.occupancy.sweep import occupancy_grid


@dataclass(frozen=True)
class Curve:
    """Occupancy (0..1) along one input, with the current point."""

    label: str  # x-axis label, with the unit
    x: np.ndarray
    occupancy: np.ndarray
    current_x: int
    current_occupancy: float


def curves(
    cc: "str | OccDevice",
    threads_per_block: int,
    registers_per_thread: int,
    shared_mem_per_block: int = 0,
    **kwargs,
) -> tuple[OccupancyResult, tuple[Curve, Curve, Curve]]:
    """The current result and the three curves (block size, registers, shared memory)."""
    dev = device_for(cc)
    cur = calculate(dev, threads_per_block, registers_per_thread, shared_mem_per_block, **kwargs)
    threads = np.arange(dev.warp_size, dev.max_threads_per_block + 1, dev.warp_size)
    regs = np.arange(1, dev.max_regs_per_thread + 1)
    top = max(dev.smem_per_block_optin - cur.static_shared_mem, cur.shared_mem_per_block, 0)
    step = dev.smem_alloc_granularity
    smem = np.union1d(np.arange(0, top + 1, step), [cur.shared_mem_per_block])
    t, r, s = cur.threads_per_block, cur.registers_per_thread, cur.shared_mem_per_block
    by_threads = occupancy_grid(dev, threads, r, s, **kwargs)
    by_regs = occupancy_grid(dev, t, regs, s, **kwargs)
    by_smem = occupancy_grid(dev, t, r, smem, **kwargs)
    occ = cur.occupancy
    return cur, (
        Curve("threads per block", threads, by_threads, t, occ),
        Curve("registers per thread", regs, by_regs, r, occ),
        Curve("dynamic shared memory per block (KiB)", smem, by_smem, s, occ),
    )


def plot_occupancy(path: "str | Path", cc: "str | OccDevice", threads_per_block: int,
                   registers_per_thread: int, shared_mem_per_block: int = 0, **kwargs) -> Path:
    """Draw the three charts into ``path`` (PNG, SVG or PDF by suffix); returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cur, data = curves(cc, threads_per_block, registers_per_thread, shared_mem_per_block, **kwargs)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, curve in zip(axes, data):
        scale = 1024.0 if "KiB" in curve.label else 1.0
        x = curve.x / scale
        ax.step(x, curve.occupancy * 100, where="post", color="tab:blue")
        ax.plot([curve.current_x / scale], [curve.current_occupancy * 100], "o", color="tab:red",
                markersize=8, label="current")
        ax.set_xlabel(curve.label)
        ax.set_ylabel("occupancy (%)")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right")
    fig.suptitle(
        f"CC {cur.cc}: {cur.threads_per_block} threads, {cur.registers_per_thread} registers/thread, "
        f"{cur.shared_mem_per_block} B dynamic shared memory -> {cur.occupancy:.1%} occupancy"
    )
    fig.tight_layout()
    out = Path(path)
    kinds = fig.canvas.get_supported_filetypes()
    if out.suffix.lower().lstrip(".") not in kinds:
        plt.close(fig)
        raise InputError(f"--plot {out}: cannot write a {out.suffix or 'suffix-less'} file; "
                         f"name one of {', '.join(sorted(kinds))}")
    try:
        fig.savefig(out)
    except OSError as exc:
        raise InputError(f"--plot {out}: cannot write ({exc.strerror or 'error'})") from None
    finally:
        plt.close(fig)
    return out
