"""Second opinion on source findings: does the compiled code show what the source layer suspects?

For each source finding whose kernel was compiled, the rule decides which SASS/resource facts
would prove it; the finding becomes ``status="confirmed"`` (evidence from Layer.COMPILED added)
when they appear, ``"downgraded"`` when they do not (the compiler removed the problem, e.g. folded a
double constant), and stays as it was when there is nothing to compare (kernel not compiled, rule
without a compiled check). Facts are looked for on the finding's source line when the cubin has
line info, else anywhere in the kernel.

=====  ==========================================================================
rule   confirmed when
=====  ==========================================================================
I4     FP64 arithmetic or F2F conversions (float<->double) on the line
L1     a stack frame (local_bytes > 0) and LDL/STL, on the line when available
I12    an integer-division sequence on the line
I6     MUFU instructions, an accurate slow-path call, or FP64/F2F work (the
       large-argument reduction of sinf/cosf) on the line
G4     8- or 16-bit global loads/stores on the line
=====  ==========================================================================
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

from cudalens.findings import Evidence, Finding, Layer

_CHECKS: dict[str, tuple[tuple[str, ...], str]] = {
    "I4": (("fp64", "f2f"), "FP64/F2F instructions"),
    "L1": (("ldl", "stl"), "local memory loads/stores (LDL/STL)"),
    "I12": (("int_div",), "integer division sequences"),
    "I6": (("mufu", "slowpath_call", "fp64", "f2f"), "MUFU, slow-path calls or FP64/F2F reduction work"),
    "G4": (("ldg.8", "ldg.16", "stg.8", "stg.16"), "8/16-bit global loads/stores"),
}


def _kernel_for(finding: Finding, compiled: dict[str, Any]) -> Any | None:
    if finding.kernel is None:
        return None
    if finding.kernel in compiled:
        return compiled[finding.kernel]
    for k in compiled.values():
        if finding.kernel in (k.name, k.mangled):
            return k
    return None


def confirm_finding(finding: Finding, kernel: Any) -> Finding:
    """``finding`` judged against one compiled kernel (see the module docstring)."""
    check = _CHECKS.get(finding.rule)
    if check is None or kernel is None:
        return finding
    classes, words = check
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
    if finding.rule == "L1":
        local = kernel.resources.local_bytes
        evidence.append(Evidence(Layer.COMPILED, "stack frame bytes per thread", local))
        present = local > 0 and (n > 0 or kernel.count(*classes) > 0)
    status = "confirmed" if present else "downgraded"
    return replace(finding, status=status, evidence=(*finding.evidence, *evidence))


def confirm_source_findings(findings: Iterable[Finding], compile_result: Any) -> list[Finding]:
    """Every finding, confirmed or downgraded where the compiled facts can tell (same order)."""
    compiled = getattr(compile_result, "kernels", compile_result) or {}
    return [confirm_finding(f, _kernel_for(f, compiled)) for f in findings]
