"""Helpers shared by the source-pattern rules: building findings, listing device/host functions."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules import _syntax as syn
from cudalens.rules.registry import RULES


def finding(
    rule_id: str,
    source: Any,
    line: int | None,
    message: str,
    fix: str,
    *,
    kernel: str | None = None,
    facts: tuple[tuple[str, Any], ...] = (),
    impact: float | None = None,
    impact_text: str | None = None,
) -> Finding:
    """A source-layer finding of a registered rule (priority and section come from the registry)."""
    spec = RULES[rule_id]
    return Finding(
        rule=rule_id,
        priority=spec.priority,
        section=spec.section,
        kernel=kernel,
        file=getattr(source, "path", ""),
        line=line,
        message=message,
        fix=fix,
        impact=impact,
        impact_text=impact_text,
        evidence=tuple(Evidence(Layer.SOURCE, f, v) for f, v in facts),
    )


def device_functions(source: Any) -> Iterator[syn.Function]:
    """Kernels, __device__ and __host__ __device__ functions of the file."""
    for fn in syn.functions(getattr(source, "tree", None)):
        if fn.runs_on_device:
            yield fn


def host_functions(source: Any) -> Iterator[syn.Function]:
    """Functions that run only on the host (no __global__/__device__ qualifier)."""
    for fn in syn.functions(getattr(source, "tree", None)):
        if fn.space == "host":
            yield fn


def kernel_nodes(source: Any) -> Iterator[tuple[Any, Any]]:
    """(model Kernel, its function_definition node) for every kernel the front end found."""
    for k in getattr(source, "kernels", ()):
        node = syn.function_node(getattr(k, "node", None))
        if node is not None:
            yield k, node
