"""The join stage: each kernel's source facts and compiled facts as one record.

:func:`join` pairs every kernel of the source model with its compiled kernel (when the file was
compiled) and decides, once, what the two say together: which branches the compiler predicated,
which branch instructions the model cannot see, the width at which the compiler issued shared
loads, the resources and SASS counts, the theoretical occupancy at the launch, and, where the
source access model has no figure, the compiled access model's (evidence.compiled_figures: the
records' kernels carry them, so the rules read them). Reports, the guided analysis and the JSON
read these records; none of them recomputes a fact.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from cudalens.compiled.launch import launch_config, occupancy, occupancy_block, register_steps
from cudalens.compiled.model import CompiledKernel
from cudalens.source.model import Access, Kernel, SourceModel


@dataclass(frozen=True)
class CompiledLoad:
    """A shared load the compiler issued wider than the source element (LDS.64/128)."""

    load_bytes: int
    wavefronts_per_request: float | None
    requests_per_access: float


@dataclass(frozen=True)
class KernelRecord:
    """One kernel: its source model and, when compiled, what the compiled code adds."""

    kernel: Kernel
    compiled: CompiledKernel | None = None
    compiled_loads: tuple[CompiledLoad | None, ...] = ()  # per access of ``kernel.accesses``
    predicated: tuple[bool, ...] | None = None  # per branch of ``kernel.branches``; None: no line info
    unmodelled_branch_lines: tuple[int, ...] | None = None
    resources: Mapping[str, Any] | None = None
    sass: Mapping[str, int] | None = None
    occupancy: Mapping[str, Any] | None = None  # at the launch: see occupancy_at_launch
    # the warp access model on the compiled PTX, one entry per instantiation (evidence.compiled_access);
    # empty when the file did not compile: the source model's accesses are then the only layer
    compiled_access: tuple[Any, ...] = ()

    @property
    def name(self) -> str:
        return self.kernel.name

    def to_dict(self) -> dict[str, Any]:
        """The kernel's entry of the ``cudalens/analysis-1`` JSON."""
        k = self.kernel
        accesses = [_access_dict(a) for a in k.accesses]
        _write_loads(accesses, self.compiled_loads)
        branches = [b.to_dict() for b in k.branches]
        for d, predicated in zip(branches, self.predicated or ()):
            d["predicated"] = predicated
        entry: dict[str, Any] = {"name": k.name, "file": k.file, "line": k.line,
                                 "block": list(k.block_dims) if k.block_dims else None,
                                 "launch": k.launch.to_dict() if k.launch is not None else None,
                                 # every distinct launch the project makes (the representative first)
                                 "launches": [r.to_dict() for r in k.launches],
                                 "accesses": accesses, "branches": branches}
        if self.compiled is not None:
            if self.unmodelled_branch_lines is not None:
                entry["unmodelled_branch_lines"] = list(self.unmodelled_branch_lines)
            entry["resources"] = dict(self.resources) if self.resources is not None else None
            entry["sass"] = dict(self.sass) if self.sass is not None else None
            entry["occupancy"] = self.occupancy
        entry["access_layer"] = "compiled-ptx" if self.compiled_access else "source"
        if self.compiled_access:
            from cudalens.evidence.compiled_access import evaluation_dicts

            entry["compiled_access"] = evaluation_dicts(self.compiled_access)
        return entry


def _access_dict(a: Access) -> dict[str, Any]:
    d = a.to_dict()
    d["figures_from"] = a.figures_from
    d["assumptions"] = list(a.assumptions)
    if a.reuse is not None:
        d["reuse"] = a.reuse
    return d


def _safe(fn: Any) -> Any:
    try:
        return fn()
    except Exception:  # noqa: BLE001 - a fact that cannot be established is null in the record
        return None


def join_kernel(k: Kernel, ck: CompiledKernel | None, model: SourceModel, cc: str,
                evals: tuple[Any, ...] = ()) -> KernelRecord:
    """The record of kernel ``k`` (and its compiled kernel ``ck``, when there is one); ``evals``:
    the compiled access model's evaluations of its instantiations, which fill the source model's
    missing figures (:func:`cudalens.evidence.fill.fill_kernel`)."""
    if evals:
        from cudalens.evidence.fill import fill_kernel

        k = fill_kernel(k, evals)
    if ck is None:
        return KernelRecord(k, compiled_access=evals)
    facts = branch_facts(k, ck)
    return KernelRecord(k, ck, compiled_loads(k.accesses, ck), facts[0] if facts else None, facts[1] if facts else None,
                        _safe(ck.resources_dict), _safe(lambda: dict(ck.sass_counts)),
                        _safe(lambda: occupancy_at_launch(ck, k, model, cc)), evals)


def join(model: SourceModel, compiled: Mapping[str, CompiledKernel] | None, cc: str,
         evals: Mapping[str, tuple[Any, ...]] | None = None) -> tuple[KernelRecord, ...]:
    """A record per kernel of ``model``, joined with ``compiled`` (kernel name -> compiled facts)
    and ``evals`` (kernel name -> the compiled access model's evaluations)."""
    return tuple(join_kernel(k, (compiled or {}).get(k.name), model, cc, tuple((evals or {}).get(k.name, ())))
                 for k in model.kernels)


def joined_model(model: SourceModel, records: tuple[KernelRecord, ...]) -> SourceModel:
    """``model`` with the records' kernels (their accesses carry the compiled figures): what rules read."""
    kernels = tuple(r.kernel for r in records)
    return model if kernels == model.kernels else dataclasses.replace(model, kernels=kernels)


def compiled_shared_loads(accesses: Sequence[Access], ck: CompiledKernel) -> list[tuple[Access, float | None, float]]:
    """(access, wavefronts per request as compiled, requests per execution of the source access).

    Where the SASS on a shared load's line holds wider loads than the source element (LDS.64,
    LDS.128) and the access advances one element per loop iteration, the compiler merged
    consecutive iterations: one request of the wider width serves ``width / element`` iterations,
    at the wavefront cost the model gives for that width (``Access.vectorized_wavefronts``).
    Every other access keeps its source figures with one request per execution.
    """
    by_line = getattr(ck, "sass_by_line", None) or {}
    out = []
    for a in accesses:
        wavefronts, weight = a.wavefronts_per_request, 1.0
        if a.space == "shared" and a.op == "load" and a.vectorized_wavefronts and a.bytes_per_thread:
            widths = [int(c.split(".")[1]) // 8 for c in by_line.get(a.line, {}) if c.startswith("lds.")]
            width = max(widths, default=0)
            if width in a.vectorized_wavefronts:
                wavefronts, weight = a.vectorized_wavefronts[width], a.bytes_per_thread / width
        out.append((a, wavefronts, weight))
    return out


def compiled_loads(accesses: Sequence[Access], ck: CompiledKernel) -> tuple[CompiledLoad | None, ...]:
    """Per access: the :class:`CompiledLoad` of a shared load the compiler vectorized, else None."""
    return tuple(CompiledLoad(int(round((a.bytes_per_thread or 0) / weight)), wavefronts, weight)
                 if weight != 1.0 else None for a, wavefronts, weight in compiled_shared_loads(accesses, ck))


def _write_loads(access_dicts: list[dict[str, Any]], loads: Sequence[CompiledLoad | None]) -> None:
    for d, load in zip(access_dicts, loads):
        if load is not None:
            d["compiled_load_bytes"] = load.load_bytes
            d["compiled_wavefronts_per_request"] = load.wavefronts_per_request
            d["compiled_requests_per_access"] = load.requests_per_access


def annotate_compiled_loads(access_dicts: list[dict[str, Any]], accesses: Sequence[Access], ck: CompiledKernel) -> None:
    """Add the compiled figures to the JSON form of each shared load the compiler vectorized
    (``access_dicts`` in the order of ``accesses``)."""
    _write_loads(access_dicts, compiled_loads(accesses, ck))


def branch_facts(k: Kernel, ck: CompiledKernel) -> tuple[tuple[bool, ...], tuple[int, ...]] | None:
    """What the compiled code says about the kernel's branches (needs line info in the SASS).

    Returns (``predicated`` per source branch, ``unmodelled_branch_lines``), or None without line
    info. Each source branch gets ``predicated``: no branch instruction carries its line, so the compiler
    predicated it (BPG 12.2) and it cannot lower branch efficiency even if its condition splits a
    warp. ``unmodelled_branch_lines``: lines of the kernel's own body with branch instructions that
    are neither a modelled branch nor a loop, typically math-library code inlined at a call
    (``powf``, ``sinf`` slow paths) whose divergence the source model cannot see. Branch
    instructions from inlined ``__device__`` functions of the file (lines outside the kernel) are
    not judged. A modelled branch whose line also calls the math library counts as unmodelled:
    the branch instructions on that line are no longer the model's alone.
    """
    by_line = ck.sass_by_line or {}
    if not by_line:
        return None
    lines = {line for line, counts in by_line.items() if counts.get("branch")}
    predicated = tuple(b.line not in lines for b in k.branches)
    # a modelled branch or loop whose line also calls the math library shares that line's branch
    # instructions with the library's own (e.g. ``if (c) v = sinf(x);``): they are not the model's
    shared = {c.line for c in k.calls if _math_library_call(c.name)}
    known = ({b.line for b in k.branches} | {lp.line for lp in k.loops}) - shared
    return predicated, tuple(sorted(ln for ln in lines if k.line <= ln <= k.end_line and ln not in known))


def add_branch_sass(entry: dict[str, Any], k: Kernel, ck: CompiledKernel) -> None:
    """Write :func:`branch_facts` into a kernel's JSON form (``entry["branches"]`` in the order of
    ``k.branches``; ``entry["unmodelled_branch_lines"]``)."""
    facts = branch_facts(k, ck)
    if facts is None:
        return
    for b, predicated in zip(entry["branches"], facts[0]):
        b["predicated"] = predicated
    entry["unmodelled_branch_lines"] = list(facts[1])


#: CUDA math-library functions (double names; the float ones add "f") whose inlined code may
#: branch: range reductions and slow paths for large, small or special arguments.
_MATH_LIBRARY = frozenset({
    "sin", "cos", "tan", "sincos", "sinpi", "cospi", "sincospi", "asin", "acos", "atan", "atan2",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "pow", "exp", "exp2", "exp10", "expm1",
    "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "rcbrt", "hypot", "erf", "erfc",
    "erfinv", "erfcinv", "lgamma", "tgamma", "fmod", "remainder", "remquo", "j0", "j1", "y0", "y1",
})


def _math_library_call(name: str) -> bool:
    base = name[:-1] if name.endswith("f") and name[:-1] in _MATH_LIBRARY else name
    return base in _MATH_LIBRARY


def occupancy_at_launch(ck: CompiledKernel, k: Kernel, model: SourceModel, cc: str) -> dict[str, Any] | None:
    """Theoretical occupancy of compiled kernel ``ck`` at its launch: the block of the launch site
    (or ``__launch_bounds__``) with its literal dynamic shared memory, else the block the access
    model used (``--block``, default 256), with the register what-if around the current count."""
    cfg = launch_config(k.name, model)
    threads = cfg.threads_per_block if cfg and cfg.threads_per_block else None
    origin = cfg.origin if cfg is not None and threads else (
        k.launch.describe() if k.launch is not None else "block used by the access model")
    if threads is None and k.block_dims:
        threads = k.block_dims[0] * k.block_dims[1] * k.block_dims[2]
    if not threads:
        return None
    smem = cfg.dynamic_smem if cfg and threads == cfg.threads_per_block else 0
    result = occupancy(ck, cc, threads, smem)
    if result is None:
        return None
    entry = occupancy_block(result)
    entry.update({"dynamic_shared_bytes": smem, "block_from": origin, "reason": result.reason})
    step = register_steps(ck, cc, threads, smem)
    if step is not None:
        entry["register_steps"] = {"registers": step.registers, "blocks": step.blocks,
                                   "fewer_registers": step.fewer_registers, "blocks_with_fewer": step.blocks_with_fewer,
                                   "more_registers": step.more_registers, "blocks_with_more": step.blocks_with_more}
    return entry
