"""Per-kernel evidence for a traced application: source, occupancy at the traced launch, counters.

* **Source**: kernel source strings in the program's own Python files (a CuPy ``RawKernel`` /
  ``RawModule`` ``code=`` string, a PyTorch ``load_inline`` source) are found with :mod:`ast`; each
  is written to a ``.cu`` file padded so that its line numbers are those of the Python file, and the
  findings point back at the Python file. CUDA files passed with ``--source`` are analyzed as they
  are. Kernels are matched by base name.
* **Compiled code at the traced launch**: registers, static and dynamic shared memory and local
  memory per thread come from the trace itself (CUPTI records what the launch used); the
  occupancy calculator gives the theoretical occupancy of that configuration.
* **Counters**: Nsight Compute on one launch of each top kernel (``-k`` on its base name, launch
  skip so the first, warm-up launch is not the one profiled), the project's metric set.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cudalens.findings import Finding
from cudalens.rules.context import RuleContext
from cudalens.rules.layers import KernelCounters, TracedKernel
from cudalens.rules.registry import load_all, run_layer
from cudalens.trace.assess import KernelSummary

_KERNEL_DECL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                          r"([A-Za-z_]\w*)\s*[(<]")
_KERNEL_DECL_TEMPLATE = re.compile(r"__global__\s+void\s+([A-Za-z_]\w*)")


@dataclass(frozen=True)
class KernelSource:
    kernel: str
    file: str  # where the user wrote it (a .py file or a .cu file)
    first_line: int  # line of the file where the source text starts
    text: str
    origin: str  # "python string" or "cuda file"


def sources_in_python(path: str) -> list[KernelSource]:
    """Every string constant with a ``__global__`` kernel in ``path``, one entry per kernel it defines."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "__global__" in node.value:
            for name in dict.fromkeys(_KERNEL_DECL.findall(node.value) + _KERNEL_DECL_TEMPLATE.findall(node.value)):
                out.append(KernelSource(name, os.path.abspath(path), node.lineno, node.value, "python string"))
    return out


def sources_in_cuda(path: str) -> list[KernelSource]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return []
    names = dict.fromkeys(_KERNEL_DECL.findall(text) + _KERNEL_DECL_TEMPLATE.findall(text))
    return [KernelSource(n, os.path.abspath(path), 1, text, "cuda file") for n in names]


def find_sources(python_files: Sequence[str], cuda_files: Sequence[str]) -> dict[str, KernelSource]:
    found: dict[str, KernelSource] = {}
    for p in cuda_files:
        for s in sources_in_cuda(p):
            found.setdefault(s.kernel, s)
    for p in python_files:
        for s in sources_in_python(p):
            found.setdefault(s.kernel, s)
    return found


def materialize(src: KernelSource, directory: str) -> str:
    """A .cu file for the analyzer whose line numbers equal the user's file's."""
    if src.origin == "cuda file":
        return src.file
    path = os.path.join(directory, f"{os.path.basename(src.file)}.{src.first_line}.cu")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n" * (src.first_line - 1) + src.text)
    return path


def occupancy_at_trace(k: KernelSummary, cc: str) -> dict[str, Any] | None:
    """Theoretical occupancy of the traced launch configuration (registers and shared memory as launched)."""
    from cudalens.occupancy.calculator import calculate

    threads = k.block[0] * k.block[1] * k.block[2]
    if threads < 1:
        return None
    try:
        r = calculate(cc, threads, k.registers, k.dynamic_shared, static_shared_mem=k.static_shared)
    except Exception:  # noqa: BLE001 - a configuration the calculator rejects: no occupancy fact
        return None
    return {"occupancy": r.occupancy, "active_blocks_per_sm": r.active_blocks_per_sm,
            "active_warps_per_sm": r.active_warps_per_sm, "limiters": sorted(r.limiters),
            "threads_per_block": threads, "registers_per_thread": k.registers,
            "static_shared_bytes": k.static_shared, "dynamic_shared_bytes": k.dynamic_shared,
            "local_bytes_per_thread": k.local_per_thread}


def trace_kernel_findings(k: KernelSummary, occ: dict[str, Any] | None, program: str,
                          sm_count: int | None) -> list[Finding]:
    """What the trace alone establishes about one kernel (occupancy at its launch, a grid too small):
    the detectors of the rules that read the ``trace_kernel`` layer."""
    layer = TracedKernel(program=program, summary=k, occupancy=occ, sm_count=sm_count)
    return run_layer(RuleContext.without_source(program, trace_kernel=layer), "trace_kernel")


def counter_findings(k: KernelSummary, m: Any, program: str) -> list[Finding]:
    """Findings from one kernel's Nsight Compute counters (LegacyMetrics), for kernels without source:
    the detectors of the rules that read the ``counters`` layer."""
    layer = KernelCounters(program=program, summary=k, metrics=m)
    return run_layer(RuleContext.without_source(program, counters=layer), "counters")


def static_findings(src: KernelSource, k: KernelSummary, cc: str, workdir: str,
                    counters: Sequence[Any] | None = None, defines: dict[str, Any] | None = None,
                    build: Any = None) -> tuple[list[Finding], dict[str, Any] | None, list[str]]:
    """The analyzer's findings for one kernel of its source, at the traced block; with counters merged
    (cross-checks) when given. Returns (findings, the kernel's analysis entry, notes)."""
    from cudalens.pipeline.stages import analyze_file

    path = materialize(src, workdir)
    notes: list[str] = []
    try:
        fa = analyze_file(path, block=tuple(k.block), cc=cc, defines=defines or {}, build=build)
    except Exception as exc:  # noqa: BLE001 - the static layer is optional evidence
        return [], None, [f"{k.name}: static analysis failed ({type(exc).__name__}: {str(exc)[:120]})"]
    notes += [f"{k.name}: {n}" for n in fa.notes]
    mine = [f for f in fa.findings if f.kernel == k.name]
    from cudalens.pipeline import Analysis

    report = Analysis((fa,), cc, tuple(k.block)).to_dict()
    entry = next((e for e in report["kernels"] if e["name"] == k.name), None)
    checks: list[dict[str, Any]] = []
    if counters:
        from cudalens.guided.merge import guide

        try:
            records = [rec for rec in fa.kernels if rec.name == k.name]
            guided = guide(records, mine, counters=tuple(counters))
            mine = list(guided.findings)
            checks = [c.to_dict() for c in guided.cross_checks]
        except Exception as exc:  # noqa: BLE001
            notes.append(f"{k.name}: counters not merged ({type(exc).__name__}: {str(exc)[:120]})")
    if src.origin == "python string":
        mine = [dataclasses.replace(f, file=src.file) for f in mine]
        for c in checks:
            c["file"] = src.file
    if entry is not None:
        entry = dict(entry, file=src.file, cross_checks=checks)
    return mine, entry, notes


def place_counter_findings(found: list[Finding], static: list[Finding], entry: dict[str, Any] | None,
                           src: KernelSource) -> list[Finding]:
    """Counter findings of a kernel with source: dropped where a static finding names the same problem
    (the cross-check speaks for it), else placed on the source: a global-memory finding on the first
    global access the model could not call coalesced, the others on the kernel's declaration."""
    have = {f.rule for f in static}
    rules = load_all()
    out = []
    decl = (entry or {}).get("line") or src.first_line
    for f in found:
        spec = rules.get(f.rule)
        if have & {f.rule, *(spec.spoken_for_by if spec else ())}:
            continue
        line = decl
        if spec is not None and spec.measured == "coalescing":
            for a in (entry or {}).get("accesses", []):
                if a.get("space") == "global" and a.get("pattern") not in ("coalesced", "broadcast"):
                    line = a.get("line") or decl
                    break
        out.append(dataclasses.replace(f, file=src.file, line=line))
    return out


def place_on_measured_lines(found: list[Finding], lines: list[dict[str, Any]]) -> list[Finding]:
    """Counter findings of a kernel without analyzed source: a global-memory finding goes to the line whose
    loads or stores fetch the most sectors beyond the ideal (ncu's source page, -lineinfo builds), when
    that file exists here."""
    worst = next((r for r in lines if r["space"] == "global" and r.get("sectors_per_request")
                  and r.get("ideal_sectors_per_request") is not None
                  and r["sectors_per_request"] > r["ideal_sectors_per_request"] + 0.5 and os.path.exists(r["file"])),
                 None)
    if worst is None:
        return found
    rules = load_all()
    return [dataclasses.replace(f, file=worst["file"], line=worst["line"])
            if f.rule in rules and rules[f.rule].measured == "coalescing" else f for f in found]
