"""Helpers shared by the source-pattern rules: device, host and kernel functions; barriers."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.source import syntax as syn
from cudalens.source.model import Kernel, SourceModel

#: Block-wide barriers.
BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}


def device_functions(source: SourceModel) -> Iterator[syn.Function]:
    """Kernels, __device__ and __host__ __device__ functions of the file."""
    for fn in syn.functions(source.tree):
        if fn.runs_on_device:
            yield fn


def host_functions(source: SourceModel) -> Iterator[syn.Function]:
    """Functions that run only on the host (no __global__/__device__ qualifier)."""
    for fn in syn.functions(source.tree):
        if fn.space == "host":
            yield fn


def kernel_nodes(source: SourceModel) -> Iterator[tuple[Kernel, Any]]:
    """(model Kernel, its function_definition node) for every kernel the front end found."""
    for k in source.kernels:
        node = syn.function_node(k.node)
        if node is not None:
            yield k, node


def threads(dims: tuple[int, int, int] | None) -> int | None:
    return None if dims is None else dims[0] * dims[1] * dims[2]


def deliberate_small_launch(site: Any, source: Any) -> bool:
    """A launch whose size is not a configuration choice to judge (E2, E3, E4): one thread in all
    (``<<<1, 1>>>``, deliberately serial work such as a scalar update), or a kernel whose body is
    empty (a marker kernel for a timeline)."""
    if threads(site.grid_dims) == 1 and threads(site.block_dims) == 1:
        return True
    k = next((k for k in getattr(source, "kernels", ()) if k.name == site.kernel), None)
    node = syn.function_node(getattr(k, "node", None)) if k is not None else None
    body = node.child_by_field_name("body") if node is not None else None
    return body is not None and not body.named_children


def block_barriers(node: Any) -> list[Any]:
    """The block-wide barrier calls under ``node``."""
    return [c for c in syn.calls(node) if syn.call_name(c) in BARRIERS]
