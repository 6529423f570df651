"""M2: Do not allocate all device memory."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


def _mentions(node: Any, names: set[str]) -> bool:
    return any(syn.text(n) in names for n in syn.nodes_of(node, "identifier"))


@rule("M2", name="allocation-sized-from-free-memory", layers="S")
def allocation_sized_from_free_memory(ctx: RuleContext) -> Iterator[Finding]:
    """Device allocation sized from the free or total memory reported by `cudaMemGetInfo`.

    What it does:
        Flags `cudaMalloc`-family calls whose size is computed from the `free` or `total` values
        returned by `cudaMemGetInfo` in the same function (directly or through variables derived
        from them).

    Why it matters:
        Grabbing all (or a fixed share of all) device memory up front starves everything else that
        needs device memory: other processes and libraries on the same GPU, the CUDA runtime's own
        allocations, and later allocations of the program itself. Allocate what the problem needs,
        and let a memory pool grow on demand where sizes vary.

    Example:
        ```cuda
        size_t free, total; cudaMemGetInfo(&free, &total);
        cudaMalloc(&arena, free);
        ```

    Fix:
        ```cuda
        cudaMalloc(&arena, n * sizeof(float));   // what the problem needs
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        tainted: set[str] = set()
        for c in syn.calls(fn.node):
            if syn.call_name(c) == "cudaMemGetInfo":
                tainted.update(filter(None, (syn.base_name(a) for a in syn.call_args(c))))
        if not tainted:
            continue
        for n in syn.nodes_of(
            fn.node, "declaration", "assignment_expression"
        ):  # one pass in source order: derived sizes
            if n.type == "declaration":
                for name, value in syn.declared_names(n):
                    if value is not None and _mentions(value, tainted):
                        tainted.add(name)
            elif n.type == "assignment_expression" and _mentions(n.child_by_field_name("right"), tainted):
                left = syn.base_name(n.child_by_field_name("left"))
                if left:
                    tainted.add(left)
        for c in syn.calls(fn.node):
            name = syn.call_name(c)
            args = syn.call_args(c)
            if name not in host.ALLOC_FUNCS or len(args) < 2:
                continue
            if any(_mentions(a, tainted) for a in args[1:]):
                yield ctx.finding(
                    syn.line(c),
                    f"`{name}` is sized from the memory reported by cudaMemGetInfo"
                    f" ({', '.join(sorted(tainted & {syn.text(i) for a in args[1:] for i in syn.walk(a)}))}):"
                    " it takes device memory others need",
                    "allocate what the problem needs; use a growing pool (cudaMallocAsync) for varying sizes",
                    facts=(("size", ", ".join(syn.text(a) for a in args[1:])),),
                )
