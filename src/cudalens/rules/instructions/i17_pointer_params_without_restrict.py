"""I17: Restricted pointers."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import kernel_nodes
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


def _written_pointers(body: Any) -> set[str]:
    """Names of pointers the body stores through (`p[i] = ...`, `*p = ...`, `p[i]++`, atomics)."""
    out: set[str] = set()
    for n in syn.nodes_of(body, "assignment_expression", "update_expression", "call_expression"):
        target = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        elif n.type == "call_expression" and syn.call_name(n).startswith("atomic"):
            args = syn.call_args(n)
            target = args[0] if args else None
        target = syn.strip_parens(target)
        if target is None:
            continue
        if target.type in {"subscript_expression", "pointer_expression"} or (n.type == "call_expression"):
            name = syn.base_name(target)
            if name:
                out.add(name)
    return out


@rule("I17", name="pointer-params-without-restrict", layers="S", advisory=True)
def pointer_params_without_restrict(ctx: RuleContext) -> Iterator[Finding]:
    """Kernel pointer parameters that may alias.

    What it does:
        Flags a kernel with two or more pointer parameters, at least one of them written through,
        where some pointer parameters lack `__restrict__`. Kernels with a single pointer, or that
        write through none, are left alone.

    Why it matters:
        Without `__restrict__` the compiler must assume that a store through one pointer can change
        what another pointer reads, so it reloads values after every store and cannot keep them in
        registers or move loads earlier; `const __restrict__` inputs may also go through the
        read-only data cache. The promise must be true: the pointers must not overlap. More
        registers may be used, which can lower occupancy.

    Example:
        ```cuda
        __global__ void axpy(float a, const float *x, float *y, int n);
        ```

    Fix:
        ```cuda
        __global__ void axpy(float a, const float *__restrict__ x, float *__restrict__ y, int n);
        ```
    """
    src = ctx.source
    for k, node in kernel_nodes(src):
        ptrs = [p for p in k.params if p.is_pointer]
        if len(ptrs) < 2:
            continue
        plain = [p for p in ptrs if not p.is_restrict]
        if not plain:
            continue
        written = _written_pointers(node.child_by_field_name("body")) & {p.name for p in ptrs}
        if not written:
            continue
        names = ", ".join(p.name for p in plain)
        yield ctx.finding(
            k.line,
            f"kernel `{k.name}` writes through {', '.join(sorted(written))} while pointer parameters"
            f" {names} lack `__restrict__`: the compiler must assume they alias",
            "mark the pointer parameters `__restrict__` (and inputs `const`) if they never overlap",
            kernel=k.name,
            facts=(("unrestricted", tuple(p.name for p in plain)), ("written", tuple(sorted(written)))),
        )
