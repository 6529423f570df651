"""Second opinion on source findings: does the compiled code show what the source layer suspects?

For each source finding whose kernel was compiled, the rule declares which SASS/resource facts
would prove it (``confirmed_by=Confirmation(...)`` in the rule's file); the finding becomes
``status="confirmed"`` (evidence from Layer.COMPILED added) when they appear, ``"downgraded"`` when they do not (the compiler removed the problem, e.g. folded a
double constant), and stays as it was when there is nothing to compare (kernel not compiled, rule
without a compiled check). Facts are looked for on the finding's source line when the cubin has
line info, else anywhere in the kernel. Today I4 (FP64/F2F), L1 (a stack frame and LDL/STL), I12
(an integer-division sequence), I6 (MUFU, slow-path calls, FP64/F2F) and G4 (8/16-bit global
accesses) declare one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping

from cudalens.compiled.model import CompiledKernel, CompileResult
from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules.registry import load_all


def _kernel_for(finding: Finding, compiled: Mapping[str, CompiledKernel]) -> CompiledKernel | None:
    if finding.kernel is None:
        return None
    if finding.kernel in compiled:
        return compiled[finding.kernel]
    for k in compiled.values():
        if finding.kernel in (k.name, k.mangled):
            return k
    return None


def confirm_finding(finding: Finding, kernel: CompiledKernel | None) -> Finding:
    """``finding`` judged against one compiled kernel (see the module docstring)."""
    spec = load_all().get(finding.rule)
    check = spec.confirmed_by if spec is not None else None
    if check is None or kernel is None:
        return finding
    classes, words = check.classes, check.words
    has_lines = bool(kernel.sass_by_line)
    if has_lines and finding.line is not None:
        counts = kernel.sass_by_line.get(finding.line, {})
        n = sum(counts.get(c, 0) for c in classes)
        where = f"line {finding.line}"
    else:
        n = kernel.count(*classes)
        where = "the kernel"
    evidence = [Evidence(Layer.COMPILED, f"{words} on {where}", n)]
    present = n > 0
    if check.stack_frame:
        local = kernel.resources.local_bytes
        evidence.append(Evidence(Layer.COMPILED, "stack frame bytes per thread", local))
        present = local > 0 and (n > 0 or kernel.count(*classes) > 0)
    status = "confirmed" if present else "downgraded"
    return replace(finding, status=status, evidence=(*finding.evidence, *evidence))


def confirm_source_findings(findings: Iterable[Finding],
                            compiled: CompileResult | Mapping[str, CompiledKernel]) -> list[Finding]:
    """Every finding, confirmed or downgraded where the compiled facts can tell (same order)."""
    if isinstance(compiled, CompileResult):
        compiled = compiled.kernels
    return [confirm_finding(f, _kernel_for(f, compiled)) for f in findings]
