"""The `cudalens analyze` pipeline: parse -> access model -> (compile) -> rules -> sorted findings.

Pure library code: it returns an :class:`Analysis` and never prints. The compiled layer is used
when ``cudalens.compiled`` is importable and a toolchain is present; if it is missing or fails,
the analysis continues source-only and says so in ``notes``.

``--define NAME=VALUE`` serves two readers. The access model takes it as the value of a kernel
parameter, template parameter or macro; the compilers (nvcc here, NVRTC for a measured launch)
take it as ``-DNAME=VALUE``. A parameter name made into a macro rewrites every use of that word,
in CUDA's own headers too (``-Dn=64`` breaks the math headers), so :func:`compiler_defines`
passes a name to the compiler only when the file uses it as a macro (``#define``, ``#undef``,
``#ifdef``, ``#ifndef``, ``#if``/``#elif``) or when it is not the name of a kernel parameter or
template parameter of that file.

Beyond the static analysis, :func:`gather_evidence` measures one launch (``RunSpec``) in an
isolated child process and/or reads Nsight Compute counters (a CSV file, or ncu run on that same
launch); :func:`guided_report` merges whatever was obtained with
:func:`cudalens.guided.merge.merge_guided`. Evidence that cannot be had (no GPU, no ncu, no
permission) becomes a note, never an error: the static report is still produced.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from cudalens.access.model import analyze_model
from cudalens.errors import CudalensError, InputError
from cudalens.findings import Finding, Priority, sort_findings
from cudalens.source.model import SourceModel
from cudalens.source.parse import parse_file

SCHEMA = "cudalens/analysis-1"


@dataclass(frozen=True)
class FileAnalysis:
    """Everything established for one file."""

    model: SourceModel
    compiled: Any | None  # cudalens.compiled.CompileResult, when compiled
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Analysis:
    files: tuple[FileAnalysis, ...]
    cc: str = "9.0"
    block: tuple[int, int, int] | None = None
    defines: dict[str, Any] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return sort_findings([f for fa in self.files for f in fa.findings])

    def at_or_above(self, priority: Priority) -> list[Finding]:
        return [f for f in self.findings if f.priority.rank <= priority.rank]

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``cudalens/analysis-1`` (keys may be added, never removed)."""
        kernels = []
        for fa in self.files:
            compiled = fa.compiled.kernels if fa.compiled is not None else {}
            for k in fa.model.kernels:
                entry: dict[str, Any] = {
                    "name": k.name,
                    "file": k.file,
                    "line": k.line,
                    "block": list(k.block_dims) if k.block_dims else None,
                    "accesses": [_access_dict(a) for a in k.accesses],
                    "branches": [b.to_dict() for b in k.branches],
                }
                ck = compiled.get(k.name)
                if ck is not None:
                    add_branch_sass(entry, k, ck)
                    annotate_compiled_loads(entry["accesses"], k.accesses, ck)
                    entry["resources"] = _safe(lambda: ck.resources_dict())
                    entry["sass"] = _safe(lambda: dict(ck.sass_counts))
                    entry["occupancy"] = _safe(lambda: occupancy_at_launch(ck, k, fa.model, self.cc))
                kernels.append(entry)
        return {
            "schema": SCHEMA,
            "cc": self.cc,
            "block": list(self.block) if self.block else None,
            "defines": {k: v for k, v in self.defines.items()},
            "files": [{"path": fa.model.path, "problems": list(fa.model.problems), "notes": list(fa.notes),
                       "compiled": fa.compiled is not None} for fa in self.files],
            "kernels": kernels,
            "findings": [_finding_dict(f) for f in self.findings],
        }


def compiled_shared_loads(accesses: Any, ck: Any) -> list[tuple[Any, float | None, float]]:
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


def annotate_compiled_loads(access_dicts: list[dict[str, Any]], accesses: Any, ck: Any) -> None:
    """Add the compiled figures to the JSON form of each shared load the compiler vectorized
    (``access_dicts`` in the order of ``accesses``)."""
    for d, (a, wavefronts, weight) in zip(access_dicts, compiled_shared_loads(accesses, ck)):
        if weight != 1.0:
            d["compiled_load_bytes"] = int(round(a.bytes_per_thread / weight))
            d["compiled_wavefronts_per_request"] = wavefronts
            d["compiled_requests_per_access"] = weight


def add_branch_sass(entry: dict[str, Any], k: Any, ck: Any) -> None:
    """What the compiled code says about the kernel's branches (needs line info in the SASS).

    Each source branch gets ``predicated``: no branch instruction carries its line, so the compiler
    predicated it (BPG 12.2) and it cannot lower branch efficiency even if its condition splits a
    warp. ``unmodelled_branch_lines``: lines of the kernel's own body with branch instructions that
    are neither a modelled branch nor a loop, typically math-library code inlined at a call
    (``powf``, ``sinf`` slow paths) whose divergence the source model cannot see. Branch
    instructions from inlined ``__device__`` functions of the file (lines outside the kernel) are
    not judged. A modelled branch whose line also calls the math library counts as unmodelled:
    the branch instructions on that line are no longer the model's alone.
    """
    by_line = getattr(ck, "sass_by_line", None) or {}
    if not by_line:
        return
    lines = {line for line, counts in by_line.items() if counts.get("branch")}
    for b in entry["branches"]:
        b["predicated"] = b["line"] not in lines
    # a modelled branch or loop whose line also calls the math library shares that line's branch
    # instructions with the library's own (e.g. ``if (c) v = sinf(x);``): they are not the model's
    shared = {c.line for c in getattr(k, "calls", ()) if _math_library_call(c.name)}
    known = ({b.line for b in k.branches} | {lp.line for lp in k.loops}) - shared
    entry["unmodelled_branch_lines"] = sorted(l for l in lines if k.line <= l <= k.end_line and l not in known)


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


def occupancy_at_launch(ck: Any, k: Any, model: SourceModel, cc: str) -> dict[str, Any] | None:
    """Theoretical occupancy of compiled kernel ``ck`` at its launch: the block of the launch site
    (or ``__launch_bounds__``) with its literal dynamic shared memory, else the block the access
    model used (``--block``, default 256), with the register what-if around the current count."""
    from cudalens.compiled.launch import launch_config, occupancy, occupancy_block, register_steps

    cfg = launch_config(k.name, model)
    threads = cfg.threads_per_block if cfg and cfg.threads_per_block else None
    origin = cfg.origin if threads else "block used by the access model"
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


def _safe(fn: Any) -> Any:
    try:
        return fn()
    except Exception:  # noqa: BLE001
        return None


def _access_dict(a: Any) -> dict[str, Any]:
    d = a.to_dict()
    d["assumptions"] = list(a.assumptions)
    if a.reuse is not None:
        d["reuse"] = a.reuse
    return d


def _finding_dict(f: Finding) -> dict[str, Any]:
    d = f.to_dict()
    # the contract's keys first, in its order, then the additions
    head = {k: d[k] for k in ("rule", "priority", "section", "kernel", "file", "line", "message", "fix")}
    head.update({k: v for k, v in d.items() if k not in head})
    return head


def _compile(path: str, cc: str, defines: Mapping[str, Any]) -> tuple[Any | None, list[str]]:
    try:
        from cudalens.compiled import compile_file
    except Exception as exc:  # noqa: BLE001 - the compiled layer is optional
        return None, [f"compiled layer unavailable ({type(exc).__name__}); source-only analysis"]
    try:
        result = compile_file(path, cc, {k: str(v) for k, v in defines.items()})  # already filtered
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - ToolchainError, CompileError: continue source-only
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, [f"not compiled ({type(exc).__name__}: {msg}); source-only analysis"]
    return result, []


def analyze_file(path: str | Path, *, block: tuple[int, int, int] | None = None,
                 defines: Mapping[str, Any] | None = None, cc: str = "9.0", compile: bool = True) -> FileAnalysis:
    from cudalens.hardware.table import limits
    from cudalens.rules.context import AnalysisContext
    from cudalens.rules.registry import run_rules

    cc = limits(cc).cc  # an unknown compute capability is an InputError naming the known ones
    defines = dict(defines or {})
    model = analyze_model(parse_file(path), block=block, defines=defines)
    notes: list[str] = []
    compiled = None
    if compile:
        compiled, notes = _compile(str(path), cc, compiler_defines(model, defines))
    launch = {}
    for site in model.launch_sites:
        launch.setdefault(site.kernel, {"block": site.block_dims, "grid": site.grid_dims, "smem": site.shared_mem,
                                        "line": site.line})
    ctx = AnalysisContext(source=model, cc=cc, compiled=dict(compiled.kernels) if compiled is not None else None,
                          launch=launch)
    findings, problems = run_rules(ctx)
    if compiled is not None:
        try:
            from cudalens.compiled import confirm_source_findings

            findings = list(confirm_source_findings(findings, compiled))
        except Exception as exc:  # noqa: BLE001
            notes.append(f"could not confirm findings against the compiled code ({type(exc).__name__})")
    notes.extend(problems)
    from cudalens.triage.impact import estimate

    findings = estimate(findings, model)  # runs per thread, and priorities the guide leaves to the cost
    model = dataclasses.replace(model, problems=model.problems)
    return FileAnalysis(model, compiled, tuple(sort_findings(findings)), tuple(notes))


def analyze(paths: list[str], *, block: tuple[int, int, int] | None = None, defines: Mapping[str, Any] | None = None,
            cc: str = "9.0", compile: bool = True) -> Analysis:
    """Analyze every file; a non-CUDA file raises InputError naming it."""
    if not paths:
        raise InputError("no file given")
    files = tuple(analyze_file(p, block=block, defines=defines, cc=cc, compile=compile) for p in paths)
    return Analysis(files, cc, block, dict(defines or {}))


# ---------------------------------------------------------------------------- defines for compilers

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(define|undef|ifdef|ifndef|if|elif)\b(.*)$", re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def macro_names(text: str) -> set[str]:
    """Names the file uses as preprocessor macros: #define'd, #undef'd, or tested by #if/#ifdef/..."""
    names: set[str] = set()
    for m in _DIRECTIVE.finditer(text):
        kind, rest = m.group(1), m.group(2).split("//", 1)[0].split("/*", 1)[0]
        idents = _IDENT.findall(rest)
        if kind in ("define", "undef", "ifdef", "ifndef"):
            names.update(idents[:1])
        else:
            names.update(i for i in idents if i != "defined")
    return names


def compiler_defines(model: SourceModel, defines: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``defines`` that may be handed to a compiler as ``-DNAME=VALUE``.

    Kept: names the file uses as macros (:func:`macro_names`, plus the front end's own list), and
    names that are neither a kernel parameter nor a template parameter of a kernel in the file.
    Dropped: parameter names that are not macros; for those the value is a hint for the access
    model only (``-Dn=64`` would rewrite every ``n`` of CUDA's headers).
    """
    macros = macro_names(model.text) | set(model.defines)
    params = {p.name for k in model.kernels for p in k.params}
    params |= {t for k in model.kernels for t in k.template_params}
    return {k: v for k, v in defines.items() if k in macros or k not in params}


# ---------------------------------------------------------------------------- evidence: run and counters


@dataclass(frozen=True)
class RunSpec:
    """One launch to measure (and, optionally, to profile): the fields of ``cudalens bench``.

    ``defines`` are extra macros for this launch only (NAME -> VALUE or None); the analysis'
    own defines are added by :func:`gather_evidence` under the :func:`compiler_defines` rule.
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[str, ...] = ()
    shared_mem: int = 0
    mode: str = "cold"
    batch: int | None = None
    defines: tuple[tuple[str, str | None], ...] = ()
    bytes_read: int | None = None
    bytes_written: int | None = None
    flops: float = 0.0
    policy: dict[str, Any] | None = None  # SamplingPolicy fields; None: the harness' defaults
    timeout_s: float = 120.0
    device: int = 0

    def request(self, source: str, origin: str, defines: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The request of :mod:`cudalens.measure.worker` for this launch of ``source``."""
        macros: dict[str, Any] = {k: (None if v is None else str(v)) for k, v in (defines or {}).items()}
        macros.update(dict(self.defines))
        return {
            "source": source, "origin": origin, "kernel": self.kernel, "grid": list(self.grid),
            "block": list(self.block), "shared_mem": self.shared_mem, "args": list(self.args), "mode": self.mode,
            "batch": self.batch, "defines": macros, "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written, "flops": self.flops, "policy": self.policy, "device": self.device,
        }


@dataclass(frozen=True)
class Evidence:
    """What the hardware told us: a measurement, counters, and a note for each piece not obtained."""

    measurement: Any | None = None  # cudalens.measure.result.BenchResult
    counters: tuple[Any, ...] | None = None  # cudalens.profile.ncu.LaunchCounters
    counters_source: str | None = None  # the CSV file, or "ncu" when profiled here
    notes: tuple[str, ...] = ()


#: ``counters=`` value of :func:`gather_evidence` that profiles the ``run`` launch with ncu.
PROFILE_RUN = "run"


def _file_of(analysis: Analysis, kernel: str) -> FileAnalysis:
    for fa in analysis.files:
        if any(k.name == kernel for k in fa.model.kernels):
            return fa
    known = sorted({k.name for fa in analysis.files for k in fa.model.kernels})
    raise InputError(f"--run: no kernel {kernel!r} in the analyzed files (kernels: {', '.join(known) or 'none'})")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def gather_evidence(analysis: Analysis, *, run: RunSpec | None = None, counters: str | None = None,
                    ncu_timeout_s: float = 300.0) -> Evidence:
    """Measure ``run`` (isolated, with its timeout) and read counters, noting what could not be had.

    ``counters``: None, a path to a CSV saved by ``ncu --csv --page raw`` (read here; an unreadable
    file is the user's error and raises InputError), or :data:`PROFILE_RUN` to profile the ``run``
    launch once under ncu (``-k regex:^KERNEL$ --launch-count 1``). No GPU, no ncu, no permission
    or a failing kernel are not errors: each becomes one line in ``notes``.
    """
    if counters == PROFILE_RUN and run is None:
        raise InputError("--counters without a file profiles the --run launch: give --run, or --counters FILE.csv")
    notes: list[str] = []
    measurement = None
    launches = None
    source_name = None
    request = None
    if run is not None:
        fa = _file_of(analysis, run.kernel)
        request = run.request(fa.model.text, fa.model.path, compiler_defines(fa.model, analysis.defines))
        measurement, note = _measure(request, run.timeout_s)
        if note:
            notes.append(note)
    if counters == PROFILE_RUN:
        assert run is not None and request is not None
        launches, note = _profile(request, run.kernel, max(ncu_timeout_s, run.timeout_s))
        source_name = "ncu"
        if note:
            notes.append(note)
    elif counters is not None:
        from cudalens.profile.ncu import parse_csv_file

        launches = parse_csv_file(counters)
        source_name = counters
        names = {lc.base_name for lc in launches}
        analyzed = {k.name for fa in analysis.files for k in fa.model.kernels}
        if not names & analyzed:
            notes.append(f"counters: {counters} holds no launch of an analyzed kernel "
                         f"(it has {', '.join(sorted(names)) or 'none'})")
    return Evidence(measurement, tuple(launches) if launches is not None else None, source_name, tuple(notes))


def _measure(request: dict[str, Any], timeout_s: float) -> tuple[Any | None, str | None]:
    from cudalens.errors import NoDeviceError
    from cudalens.measure.isolate import run_isolated
    from cudalens.measure.result import BenchResult

    try:
        return BenchResult.from_dict(run_isolated(request, timeout_s=timeout_s)), None
    except NoDeviceError as exc:
        return None, f"measurement skipped: {_one_line(exc)}"
    except CudalensError as exc:
        return None, f"measurement failed ({type(exc).__name__}): {_one_line(exc)}"


#: The program ncu profiles: this interpreter, launching the kernel once (see :func:`launch_main`).
_DRIVER = ("import sys; sys.path.insert(0, {src!r}); from cudalens.analyze import launch_main; "
           "sys.exit(launch_main(sys.argv[1:]))")


def driver_argv(request_path: str) -> list[str]:
    """The command line that launches the request's kernel exactly once (what ncu profiles)."""
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [sys.executable, "-c", _DRIVER.format(src=src), request_path]


def _profile(request: dict[str, Any], kernel: str, timeout_s: float) -> tuple[tuple[Any, ...] | None, str | None]:
    from cudalens.profile.ncu import CountersUnavailable, parse_csv, run_ncu

    with tempfile.TemporaryDirectory(prefix="cudalens_ncu_") as tmp:
        req_path = os.path.join(tmp, "request.json")
        with open(req_path, "w", encoding="utf-8") as fh:
            json.dump(request, fh)
        try:
            text = run_ncu(driver_argv(req_path), kernel=kernel, launch_count=1, timeout=timeout_s)
        except CountersUnavailable as exc:
            return None, f"counters skipped: {_one_line(exc)}"
    try:
        launches = parse_csv(text, source="ncu output")
    except InputError as exc:
        return None, f"counters skipped: {_one_line(exc)}"
    if not any(lc.base_name == kernel for lc in launches):
        return None, f"counters skipped: ncu profiled no launch of {kernel}"
    return launches, None


def launch_once(request: Mapping[str, Any]) -> None:
    """Compile the request's kernel with NVRTC and launch it exactly once on fresh arguments.

    The arguments are built from the ``cudalens bench`` specs (seeded as the harness does); no
    timing, no L2 flush, no other kernel: under ncu this is the one launch profiled.
    """
    import numpy as np

    from cudalens.measure import cuda_util as cu
    from cudalens.measure.argspec import materialize, parse_args

    rng = np.random.default_rng(0)
    host = [materialize(s, rng) for s in parse_args(list(request.get("args") or ()))]
    opts = [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in (request.get("defines") or {}).items()]
    kernel = str(request["kernel"])
    with cu.device_context(int(request.get("device", 0))) as ctx:
        try:
            kern = cu.compile_kernel(str(request["source"]), kernel, ctx.cc, options=opts)
        except cu.CudaCallError as exc:
            if "NOT_FOUND" in str(exc):
                raise InputError(f"kernel {kernel!r} not found; declare it extern \"C\"") from None
            raise
        resources: list[Any] = []
        try:
            packed: list[tuple[Any, str]] = []
            for v in host:
                if isinstance(v, np.ndarray):
                    buf = cu.DeviceBuffer(max(v.nbytes, 1))
                    resources.append(buf)
                    if v.nbytes:
                        cu.check(cu._driver().cuMemcpyHtoD(buf.ptr, v.ctypes.data, v.nbytes), "cuMemcpyHtoD")
                    packed.append((buf.ptr, "u8"))
                else:
                    packed.append((v, v.dtype.str))
            stream = cu.Stream()
            resources.append(stream)
            cu.launch(kern, tuple(request["grid"]), tuple(request["block"]), packed, stream,
                      int(request.get("shared_mem", 0)))
            stream.synchronize()
        finally:
            for res in [*reversed(resources), kern]:
                try:
                    res.close() if hasattr(res, "close") else res.unload()
                except Exception:  # noqa: BLE001 - after a fault the context is dead; keep the first error
                    pass


def launch_main(argv: Sequence[str]) -> int:
    """Entry of the profiled child: ``launch_main([REQUEST.json])``; 0 on success, 3 on an error."""
    if len(argv) != 1:
        sys.stderr.write("usage: launch_main REQUEST.json\n")
        return 2
    try:
        with open(argv[0], encoding="utf-8") as fh:
            launch_once(json.load(fh))
    except Exception as exc:  # noqa: BLE001 - the parent (ncu's caller) reads the last stderr line
        sys.stderr.write(f"cudalens launch failed ({type(exc).__name__}): {_one_line(exc)}\n")
        return 3
    return 0


def guided_report(analysis: Analysis, evidence: Evidence | None = None) -> dict[str, Any]:
    """The analysis JSON merged with the evidence (:func:`cudalens.guided.merge.merge_guided`).

    Keys are only added to ``cudalens/analysis-1``: those of merge_guided, plus ``measurement``
    (the BenchResult dict or None), ``counters_source`` and ``evidence_notes``.
    """
    from cudalens.guided.merge import merge_guided

    ev = evidence or Evidence()
    out = merge_guided(analysis.to_dict(), counters=ev.counters or None, measurement=ev.measurement)
    out["measurement"] = ev.measurement.to_dict() if ev.measurement is not None else None
    out["counters_source"] = ev.counters_source
    out["evidence_notes"] = list(ev.notes)
    return out
