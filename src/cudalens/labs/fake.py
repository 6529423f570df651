"""A runner without a GPU, for tests and dry runs.

Every timed operation asks a *cost function* ``cost(op, **details) -> milliseconds``; the
default answers 1 ms for everything. Tests pass a cost function that models a GPU on which the
guide's claim holds (or does not) and check that the lab's table and verdict follow.
``op`` is one of: "kernel", "copies", "staged", "zero_copy", "alloc", "streams", "window".
Every call is logged in ``calls`` so tests can check what a lab asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cudalens.hardware.device import DeviceFacts
from cudalens.labs.runner import KernelInfo, Timing, kernel_source

H100_LIKE = DeviceFacts(
    name="Fake H100", cc="9.0", sm_count=132, l2_bytes=50 * 2**20,
    max_persisting_l2_bytes=int(37.5 * 2**20), max_threads_per_sm=2048,
    max_smem_per_block_optin=232448, integrated=False, can_map_host=True, async_engines=3,
    theoretical_bandwidth_gbs=3352.0,
)


@dataclass(frozen=True)
class FakeKernel:
    file: str
    name: str
    defines: tuple[str, ...] = ()
    fast_math: bool = False
    max_registers: int | None = None


def unit_cost(op: str, **details: Any) -> float:
    return 1.0


@dataclass
class FakeRunner:
    cost: Callable[..., float] = unit_cost
    info: DeviceFacts = H100_LIKE
    samples: int = 3
    registers: Callable[[FakeKernel], KernelInfo] = lambda k: KernelInfo(32, 0, 0)
    calls: list[tuple[str, dict]] = field(default_factory=list)
    _next: int = 0x7F0000000000

    def _t(self, op: str, **details: Any) -> Timing:
        self.calls.append((op, details))
        ms = float(self.cost(op, **details))
        return Timing(ms, (ms,) * self.samples, 1)

    def kernel(self, file: str, name: str, defines: Sequence[str] = (), fast_math: bool = False,
               max_registers: int | None = None) -> FakeKernel:
        src = kernel_source(file)  # the file must exist and define the kernel
        if f" {name}(" not in src:
            raise KeyError(f"{file} has no kernel {name}")
        return FakeKernel(file, name, tuple(defines), fast_math, max_registers)

    def kernel_info(self, kernel: FakeKernel) -> KernelInfo:
        return self.registers(kernel)

    def blocks_per_sm(self, kernel: FakeKernel, block: int, dynamic_smem: int) -> int:
        """Threads and shared memory limits only (1 KB reserved per block, 228 KB per SM)."""
        by_threads = (self.info.max_threads_per_sm or 2048) // block
        by_smem = (233472 // (dynamic_smem + 1024)) if dynamic_smem else 32
        return max(0, min(32, by_threads, by_smem))

    def set_max_dynamic_smem(self, kernel: FakeKernel, nbytes: int) -> None:
        self.calls.append(("set_max_dynamic_smem", {"kernel": kernel.name, "bytes": nbytes}))

    def alloc(self, nbytes: int) -> np.uint64:
        ptr = self._next
        self._next += (int(nbytes) + 255) // 256 * 256 + 256
        return np.uint64(ptr)

    def time_kernel(self, kernel, grid, block, args, shared_mem=0) -> Timing:
        return self._t("kernel", kernel=kernel, name=kernel.name, grid=grid, block=block,
                       args=tuple(args), shared_mem=shared_mem)

    def time_copies(self, direction, nbytes, pinned, chunks=1) -> Timing:
        return self._t("copies", direction=direction, nbytes=nbytes, pinned=pinned, chunks=chunks)

    def time_staged(self, kernel, nbytes, n_streams, iters, block) -> Timing:
        return self._t("staged", nbytes=nbytes, n_streams=n_streams, iters=iters)

    def time_zero_copy(self, kernel, nbytes, mapped, block) -> Timing:
        return self._t("zero_copy", nbytes=nbytes, mapped=mapped)

    def time_alloc_loop(self, mode, nbytes, iterations) -> Timing:
        return self._t("alloc", mode=mode, nbytes=nbytes, iterations=iterations)

    def time_streams(self, kernel, n_kernels, n_streams, grid, block, iters) -> Timing:
        return self._t("streams", n_kernels=n_kernels, n_streams=n_streams, grid=grid, iters=iters)

    def time_window(self, kernel, grid, block, args, window, setaside) -> Timing:
        return self._t("window", args=tuple(args), window=window, setaside=setaside)

    def release(self) -> None:
        self.calls.append(("release", {}))

    def close(self) -> None:
        pass
