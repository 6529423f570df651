"""Host-code facts for the transfer, allocation and deployment rules.

Reads host functions (no ``__global__``/``__device__``) from the kept syntax tree: copies with
their direction and stream, launches, pageable and pinned host buffers. Everything is per function;
a buffer declared in another function is "not established" and not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cudalens.source import syntax as syn

COPY_FUNCS = {
    # name: (dst index, src index, size index, kind index, stream index)
    "cudaMemcpy": (0, 1, 2, 3, None),
    "cudaMemcpyAsync": (0, 1, 2, 3, 4),
    "cudaMemcpy2D": (0, 2, None, 6, None),
    "cudaMemcpy2DAsync": (0, 2, None, 6, 7),
}

DEFAULT_STREAMS = {"0", "NULL", "nullptr", "cudaStreamLegacy", "(cudaStream_t)0", "0x0"}
PAGEABLE_ALLOCATORS = {"malloc", "calloc", "realloc", "aligned_alloc"}
#: Device (and pinned host) allocation calls.
ALLOC_FUNCS = {"cudaMalloc", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged", "cudaMallocPitch",
               "cudaMalloc3D", "cudaMallocArray", "cudaMalloc3DArray"}
#: A CUDA runtime or driver API function name.
CUDA_API = re.compile(r"^cu(da)?[A-Z]\w*$")
PINNED_ALLOCATORS = {"cudaMallocHost", "cudaHostAlloc", "cudaHostRegister", "cuMemAllocHost", "cuMemHostAlloc"}


@dataclass(frozen=True)
class Copy:
    """A cudaMemcpy-family call with its operands as nodes (None when the argument is absent)."""

    node: Any
    func: str
    dst: Any
    src: Any
    size: Any
    kind: str  # "HostToDevice" | "DeviceToHost" | "DeviceToDevice" | "HostToHost" | "Default" | ""
    stream: Any

    @property
    def line(self) -> int:
        return syn.line(self.node)

    @property
    def is_async(self) -> bool:
        return self.func.endswith("Async")

    @property
    def on_default_stream(self) -> bool:
        return self.stream is None or syn.norm(self.stream) in DEFAULT_STREAMS

    @property
    def host_operand(self) -> Any:
        if self.kind == "HostToDevice":
            return self.src
        if self.kind == "DeviceToHost":
            return self.dst
        return None

    @property
    def device_operand(self) -> Any:
        if self.kind == "HostToDevice":
            return self.dst
        if self.kind == "DeviceToHost":
            return self.src
        return None


def _arg(args: list[Any], i: int | None) -> Any:
    return args[i] if i is not None and i < len(args) else None


def copies(fn_node: Any) -> list[Copy]:
    """The copies of a function, in source order (worked out once per node: several rules ask)."""
    return list(syn.kept("copies", fn_node, _copies))


def _copies(fn_node: Any) -> tuple[Copy, ...]:
    out = []
    for c in syn.calls(fn_node):
        name = syn.call_name(c)
        if name not in COPY_FUNCS:
            continue
        d, s, z, k, st = COPY_FUNCS[name]
        args = syn.call_args(c)
        kind = syn.text(_arg(args, k)).strip()
        kind = kind.replace("cudaMemcpy", "", 1) if kind.startswith("cudaMemcpy") else ""
        out.append(Copy(c, name, _arg(args, d), _arg(args, s), _arg(args, z), kind, _arg(args, st)))
    return tuple(out)


def bus_copies(fn_node: Any) -> list[Copy]:
    """The copies of a function that cross the host-device bus on the critical path: neither
    device-to-device nor host-to-host, nor an async copy on a named stream (:func:`deliberate_overlap`)."""
    return [c for c in copies(fn_node)
            if c.kind not in {"DeviceToDevice", "HostToHost"} and not deliberate_overlap(c)]


def loop_has_launch(loop: Any) -> bool:
    return bool(syn.launches(loop))


def _called(value: Any) -> str:
    """Name of the allocator behind an initializer: `(float*)malloc(n)` -> malloc, `new T[n]` -> new."""
    v = syn.strip_parens(value)
    while v is not None and v.type == "cast_expression":
        v = syn.strip_parens(v.child_by_field_name("value"))
    if v is None:
        return ""
    if v.type == "new_expression":
        return "new"
    if v.type == "call_expression":
        return syn.call_name(v)
    return ""


@dataclass(frozen=True)
class HostBuffers:
    pageable: dict[str, str]  # name -> how it was allocated ("malloc", "new", "std::vector", "array")
    pinned: set[str]


def host_buffers(fn_node: Any) -> HostBuffers:
    """Host buffers a function allocates, split into pageable and pinned (page-locked); worked out once
    per node (several rules ask), each caller given its own containers."""
    kept = syn.kept("host_buffers", fn_node, _host_buffers)
    return HostBuffers(dict(kept.pageable), set(kept.pinned))


def _host_buffers(fn_node: Any) -> HostBuffers:
    pageable: dict[str, str] = {}
    pinned: set[str] = set()
    for n in syn.nodes_of(fn_node, "declaration", "assignment_expression", "call_expression"):
        if n.type == "declaration":
            ty = syn.text(n.child_by_field_name("type"))
            for d in n.children_by_field_name("declarator"):
                if d.type == "function_declarator" and "vector" in ty:
                    # `std::vector<float> v(n);` parses as a function declaration (the vexing parse)
                    pageable[syn.text(d.child_by_field_name("declarator"))] = "std::vector"
                    continue
                for name, value in syn.declared_names_of(d):
                    how = _called(value)
                    if how in PAGEABLE_ALLOCATORS or how == "new":
                        pageable[name] = how
                    elif "vector" in ty and "thrust" not in ty:
                        pageable[name] = "std::vector"
                    elif syn.is_array_declarator(d):
                        pageable[name] = "array"
        elif n.type == "assignment_expression" and syn.text(n.child_by_field_name("operator")) == "=":
            how = _called(n.child_by_field_name("right"))
            name = syn.base_name(n.child_by_field_name("left"))
            if name and (how in PAGEABLE_ALLOCATORS or how == "new"):
                pageable[name] = how
        elif n.type == "call_expression" and syn.call_name(n) in PINNED_ALLOCATORS:
            args = syn.call_args(n)
            if args:
                pinned.add(syn.base_name(args[0]))
    for name in pinned:
        pageable.pop(name, None)
    return HostBuffers(pageable, pinned)


def deliberate_overlap(c: Copy) -> bool:
    """An async copy on a named stream: the staged copy/compute pattern, not a problem here."""
    return c.is_async and not c.on_default_stream
