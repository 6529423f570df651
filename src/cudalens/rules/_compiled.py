"""Helpers of the rules that read the compiled code (ptxas resources, SASS): G4, G6, I6, I12,
I16, L1-L3, E1, SH6.

A kernel without compiled facts, or a launch whose block size is unknown, yields nothing.
"""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.compiled.launch import LaunchConfig, launch_config, occupancy
from cudalens.compiled.model import CompiledKernel
from cudalens.rules.context import RuleContext

#: E1, SH6: theoretical occupancy below this is flagged.
LOW_OCCUPANCY = 0.5


def compiled_kernels(ctx: RuleContext) -> Iterator[tuple[str, CompiledKernel]]:
    """(name, compiled facts) of every compiled kernel, by name."""
    for name, k in sorted((ctx.compiled or {}).items()):
        if hasattr(k, "resources") and hasattr(k, "sass_counts"):
            yield name, k


def line_or_kernel(ctx: RuleContext, name: str, line: int | None) -> int | None:
    """``line``, else the line of kernel ``name``'s definition."""
    return line if line is not None else ctx.kernel_line(name)


def busiest_line(k: CompiledKernel, *classes: str) -> int | None:
    """The source line with the most SASS instructions of ``classes``."""
    lines = k.lines_with(*classes)
    return max(lines, key=lambda ln: (lines[ln], -ln)) if lines else None


def occupancy_at_launch(ctx: RuleContext, name: str, k: CompiledKernel) -> tuple[LaunchConfig, Any] | None:
    """(launch configuration, the calculator's occupancy) of kernel ``name``; None when unknown."""
    cfg = launch_config(name, ctx.source)
    if cfg is None or cfg.threads_per_block <= 0:
        return None
    occ = occupancy(k, ctx.cc, cfg.threads_per_block, cfg.dynamic_smem)
    return None if occ is None else (cfg, occ)

