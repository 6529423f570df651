"""The compiled access layer of an analysis: the PTX of every instantiated kernel of a file that
compiles, evaluated by the warp access model on the compiled code (cudalens.access.ptx_eval).

The source model stays the fallback: a file that does not compile (or a kernel the PTX does not
have) keeps only its source-level verdicts, and every kernel's JSON says which layer produced its
access figures (``access_layer``: ``compiled-ptx`` or ``source``).

Launch used per kernel: the one the project's launch table resolved (``Kernel.launch``, see
:mod:`cudalens.project.resolve`): its block and grid (else 2 blocks along x); scalar parameters
from ``--define`` (by name) or the values the launch passes, the others tried at the plausible values.
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any, Mapping

from cudalens.access.ptx_eval import KernelEvaluation
from cudalens.compiled.names import base_name_from_mangled
from cudalens.errors import what_failed
from cudalens.evidence.model_workers import Job, evaluate_jobs
from cudalens.source.model import Kernel, SourceModel


def _launch(k: Kernel) -> tuple[tuple[int, int, int], tuple[int, int, int], dict[int, Any]]:
    """Block, grid and scalar parameter values (by position) of the launch ``k`` was resolved to
    (``Kernel.launch``, set by the access model from the project's launch table)."""
    from cudalens.project.resolve import DEFAULT_BLOCK, DEFAULT_GRID, MAX_BLOCK_THREADS, number

    launch = k.launch
    blk = launch.block if launch is not None and isinstance(launch.block, tuple) else DEFAULT_BLOCK
    grid = launch.grid if launch is not None and isinstance(launch.grid, tuple) else DEFAULT_GRID
    if not (all(d >= 1 for d in blk) and blk[0] * blk[1] * blk[2] <= MAX_BLOCK_THREADS):
        blk = DEFAULT_BLOCK  # a launch that fails on every GPU (dim3(1024, 1024, 64)): not a block to model
    if not (all(d >= 1 for d in grid) and grid[0] < 2**31 and grid[1] <= 65535 and grid[2] <= 65535):
        grid = DEFAULT_GRID  # likewise a grid no GPU launches
    passed = dict(launch.params) if launch is not None else {}
    params: dict[int, Any] = {}
    for i, p in enumerate(k.params):
        if p.is_pointer or not p.name:
            continue
        v = number(passed.get(p.name))
        if isinstance(v, (int, float)):
            params[i] = v
    return blk, grid, params


def compiled_access(path: str, model: SourceModel, cc: str, defines: Mapping[str, Any],
                    flags: tuple[str, ...] = (),
                    sass_lds: Mapping[str, Mapping[int, Mapping[int, int]]] | None = None,
                    ptx: str = "", worker: Executor | None = None) -> tuple[dict[str, tuple[KernelEvaluation, ...]], list[str]]:
    """Kernel name -> the evaluations of its instantiations, and notes (why a layer is missing).

    ``ptx``: the PTX kept from the compile that made the cubin (CompileResult.ptx), so the model
    reads exactly what ptxas assembled; without it the file is compiled to PTX here. Only the
    kernels the file defines are parsed and evaluated (a unit using Thrust holds dozens of library
    kernels). ``worker``: a second process (:func:`model_worker`) that evaluates part of them."""
    from cudalens.compiled.ptx import PtxSource, compile_ptx

    by_name = {k.name: k for k in model.kernels}
    try:  # the kernels are parsed as they are evaluated (model_workers)
        source = PtxSource(ptx or compile_ptx(path, cc, {k: str(v) for k, v in defines.items()}, flags).ptx)
    except Exception as exc:  # noqa: BLE001 - the source model is the fallback
        return {}, [f"compiled access model unavailable ({what_failed(exc)}); source access model used"]
    jobs: list[Job] = []
    owner: dict[str, str] = {}
    for name in source.entry_names:
        k = by_name.get(base_name_from_mangled(name))
        if k is None:
            continue
        blk, grid, params = _launch(k)
        jobs.append((name, blk, grid, params, (sass_lds or {}).get(name)))
        owner[name] = k.name
    results = evaluate_jobs(source, jobs, worker)
    out: dict[str, list[KernelEvaluation]] = {}
    notes: list[str] = []
    for name, _blk, _grid, _params, _sass in jobs:
        r = results[name]
        if isinstance(r, KernelEvaluation):
            out.setdefault(owner[name], []).append(r)
        else:  # one kernel's failure keeps the others
            notes.append(f"compiled access model failed on {name} ({r}); source model used")
    return {name: tuple(v) for name, v in out.items()}, notes


def evaluation_dicts(evals: tuple[KernelEvaluation, ...]) -> list[dict[str, Any]]:
    """JSON form: one entry per instantiation with its launch and per-line predictions."""
    return [{"kernel": e.kernel, "block": list(e.block), "grid": list(e.grid), "blocks_evaluated": e.blocks_evaluated,
             "complete": e.complete, "notes": list(e.notes), "loops": list(e.loops),
             "predictions": [p.to_dict() for p in e.predictions]} for e in evals]


def sass_shared_widths(compiled: Any) -> dict[str, dict[int, dict[int, int]]]:
    """Per mangled kernel: line -> {bytes per lane: LDS instructions}, from the compiled SASS."""
    out: dict[str, dict[int, dict[int, int]]] = {}
    for ck in (compiled.kernels.values() if compiled is not None else ()):
        per: dict[int, dict[int, int]] = {}
        for ins in ck.instructions:
            if ins.klass and ins.klass.startswith("lds.") and ins.line is not None:
                w = int(ins.klass.split(".")[1]) // 8
                per.setdefault(ins.line, {}).setdefault(w, 0)
                per[ins.line][w] += 1
        out[ck.mangled] = per
    return out
