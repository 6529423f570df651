"""Command `occupancy`: resident blocks, warps and occupancy per SM, the limiter and the what-if.

Rule L2/L3/SH6 of the catalog, as a calculator: exact to CUDA 13.0's cuda_occupancy.h.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError
from cudalens.occupancy import LIMIT_NAMES, device_for, what_if
from cudalens.occupancy.blocksize import max_potential_block_size
from cudalens.occupancy.calculator import CACHE_CONFIGS, as_count


def _console() -> Console:
    con = Console(soft_wrap=True, highlight=False)
    if not con.is_terminal:
        con = Console(soft_wrap=True, highlight=False, width=140)
    return con


def _blocks(value: int | None) -> str:
    return "no limit" if value is None else str(value)


@click.command("occupancy")
@click.option("--cc", required=True, metavar="MAJOR.MINOR", help="Compute capability, e.g. 9.0.")
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
    dev = device_for(cc)
    _check_limits(dev, threads, registers, shared_mem, static_shared_mem)
    common = dict(static_shared_mem=static_shared_mem, carveout=carveout,
                  cache_config=cache_config, block_barriers=barriers)
    w = what_if(dev, threads, registers, shared_mem, **common)
    r = w.current
    num_sms = as_count("SM count", sms, minimum=1) if sms is not None else None
    best = max_potential_block_size(dev, r.registers_per_thread, r.shared_mem_per_block,
                                    num_sms=num_sms, **common)
    if plot_file:
        from cudalens.occupancy.plot import plot_occupancy

        plot_occupancy(plot_file, dev, r.threads_per_block, r.registers_per_thread,
                       r.shared_mem_per_block, **common)

    if fmt == "json":
        echo_json({
            "cc": dev.cc,
            "source": dev.source,
            "result": r.to_dict(),
            "what_if": w.to_dict(),
            "max_potential_block_size": {
                "block_size": best.block_size,
                "min_grid_size": best.min_grid_size,
                "min_grid_size_unit": "blocks" if num_sms else "blocks per SM",
            },
            "plot": plot_file,
        })
        return

    con = _console()
    head = Table(title=f"Occupancy, CC {dev.cc} ({dev.source})", show_header=False)
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
    grid = (f"{best.min_grid_size} blocks" if num_sms else
            f"{best.min_grid_size} blocks per SM (pass --sms for the whole GPU)")
    con.print(f"Max potential block size: {best.block_size} threads; minimum grid {grid}.")
    if plot_file:
        con.print(f"Charts written to {plot_file}")


def _check_limits(dev, threads, registers, shared_mem, static_shared_mem) -> None:
    """Reject, before any computation, a launch no GPU of ``dev``'s compute capability accepts,
    naming the limit (the what-if tables would otherwise be built around an impossible block)."""
    checks = (
        ("--threads", as_count("--threads", threads, minimum=1), dev.max_threads_per_block,
         "threads per block"),
        ("--registers", as_count("--registers", registers, minimum=0), dev.max_regs_per_thread,
         "registers per thread"),
        ("--shared-mem", as_count("--shared-mem", shared_mem), dev.smem_per_block_optin,
         "bytes of dynamic shared memory per block (the opt-in maximum)"),
        ("--static-shared-mem", as_count("--static-shared-mem", static_shared_mem), dev.smem_per_block,
         "bytes of static shared memory per block"),
    )
    for option, value, limit, what in checks:
        if value > limit:
            raise InputError(f"{option} {value}: more than the {limit} {what} of CC {dev.cc}")


def register(group: click.Group) -> None:
    group.add_command(occupancy_cmd)
