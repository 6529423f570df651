"""Command `occupancy`: resident blocks, warps and occupancy per SM, the limiter and the what-if.

Rule L2/L3/SH6 of the catalog, as a calculator: exact to CUDA 13.0's cuda_occupancy.h.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from cudalens.cli._common import cc_option, echo_json, format_option
from cudalens.occupancy import LIMIT_NAMES
from cudalens.occupancy.calculator import CACHE_CONFIGS
from cudalens.report.console import report_console


def _console() -> Console:
    return report_console()


def _blocks(value: int | None) -> str:
    return "no limit" if value is None else str(value)


@click.command("occupancy")
@cc_option
@click.option("--threads", required=True, metavar="N", help="Threads per block.")
@click.option("--registers", required=True, metavar="N", help="Registers per thread.")
@click.option("--shared-mem", default="0", show_default=True, metavar="BYTES",
              help="Dynamic shared memory per block (bytes); the kernel is taken as opted in to "
                   "the device's largest per-block size.")
@click.option("--static-shared-mem", default="0", show_default=True, metavar="BYTES",
              help="Static (__shared__) memory per block (bytes).")
@click.option("--carveout", default=None, metavar="PERCENT",
              help="Preferred shared-memory carveout, 0..100 percent (default: no preference).")
@click.option("--cache-config", type=click.Choice(CACHE_CONFIGS), default="none",
              show_default=True, help="Cache preference, used when no carveout is given.")
@click.option("--barriers", default="1", show_default=True, metavar="N",
              help="Block barriers the kernel uses (CC >= 9.0 counts them).")
@click.option("--sms", default=None, metavar="N",
              help="SMs on the GPU, for the suggested minimum grid size.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="Write the three occupancy charts (.png, .svg or .pdf).")
@format_option
def occupancy_cmd(cc, threads, registers, shared_mem, static_shared_mem, carveout, cache_config,
                  barriers, sms, plot_file, fmt):
    """Occupancy of a launch: blocks, warps, limiter(s) and where it steps up or down."""
    from cudalens.api import occupancy

    occ = occupancy(threads, registers, cc=cc, shared_mem=shared_mem, static_shared_mem=static_shared_mem,
                    carveout=carveout, cache_config=cache_config, barriers=barriers, sms=sms)
    r, w = occ.result, occ.what_if
    if plot_file:
        from cudalens.occupancy import device_for
        from cudalens.occupancy.plot import plot_occupancy

        plot_occupancy(plot_file, device_for(occ.cc), r.threads_per_block, r.registers_per_thread,
                       r.shared_mem_per_block, static_shared_mem=static_shared_mem, carveout=carveout,
                       cache_config=cache_config, block_barriers=barriers)
    if fmt == "json":
        echo_json({**occ.to_dict(), "plot": plot_file})
        return

    con = _console()
    head = Table(title=f"Occupancy, CC {occ.cc} ({occ.source})", show_header=False)
    head.add_column("what")
    head.add_column("value", justify="right")
    head.add_row("threads per block", str(r.threads_per_block))
    head.add_row("registers per thread", str(r.registers_per_thread))
    head.add_row("shared memory per block (static + dynamic)",
                 f"{r.static_shared_mem} B + {r.shared_mem_per_block} B")
    head.add_row("allocated per block",
                 f"{r.registers_per_block} registers, {r.shared_mem_allocated_per_block} B shared")
    head.add_row("active blocks per SM", str(r.active_blocks_per_sm))
    head.add_row("active warps per SM", f"{r.active_warps_per_sm} of {r.max_warps_per_sm} warps")
    head.add_row("occupancy", f"{r.occupancy:.1%}")
    head.add_row("limiter(s)", ", ".join(n for n in LIMIT_NAMES if n in r.limiters) or "-")
    con.print(head)

    limits = Table(title="Blocks per SM each resource allows")
    limits.add_column("limit")
    limits.add_column("blocks per SM", justify="right")
    limits.add_column("binds", justify="center")
    for name in LIMIT_NAMES:
        limits.add_row(name.replace("_", " "), _blocks(r.block_limit(name)),
                       "yes" if name in r.limiters else "")
    con.print(limits)

    con.print("What if:")
    for sentence in w.sentences():
        con.print(f"  - {sentence}")
    grid = (f"{occ.min_grid_size} blocks" if sms is not None else
            f"{occ.min_grid_size} blocks per SM (pass --sms for the whole GPU)")
    con.print(f"Max potential block size: {occ.best_block_size} threads; minimum grid {grid}.")
    if plot_file:
        con.print(f"Charts written to {plot_file}")


def register(group: click.Group) -> None:
    group.add_command(occupancy_cmd)
