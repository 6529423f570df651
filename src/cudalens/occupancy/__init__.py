"""Occupancy: an exact port of CUDA 13.0's cuda_occupancy.h, what-if analysis, sweeps and plots.

    >>> from cudalens.occupancy import calculate
    >>> r = calculate("9.0", threads_per_block=256, registers_per_thread=37)
    >>> r.active_blocks_per_sm, r.occupancy
    (6, 0.75)
"""

from cudalens.occupancy.blocksize import PotentialBlockSize, max_potential_block_size
from cudalens.occupancy.calculator import (
    LIMIT_NAMES,
    OccupancyResult,
    calculate,
    describe_limiters,
)
from cudalens.occupancy.device import OccDevice, device_for, device_from_properties
from cudalens.occupancy.sweep import FullSweep, blocks_grid, full_sweep, occupancy_grid
from cudalens.occupancy.whatif import Step, WhatIf, what_if

__all__ = [
    "LIMIT_NAMES",
    "FullSweep",
    "OccDevice",
    "OccupancyResult",
    "PotentialBlockSize",
    "Step",
    "WhatIf",
    "blocks_grid",
    "calculate",
    "describe_limiters",
    "device_for",
    "device_from_properties",
    "full_sweep",
    "max_potential_block_size",
    "occupancy_grid",
    "what_if",
]
