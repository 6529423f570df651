"""Evidence beyond the static analysis: one measured launch and Nsight Compute counters.

:func:`gather_evidence` measures one launch (``RunSpec``) in an isolated child process and/or reads
Nsight Compute counters (a CSV file, or ncu run on that same launch); :class:`cudalens.pipeline.report.Report`
merges whatever was obtained with the analysis (:func:`cudalens.guided.merge.guide`). Evidence that cannot be had
(no GPU, no ncu, no permission) becomes a note, never an error: the static report is still produced.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from cudalens.errors import CudalensError, InputError
from cudalens.pipeline.analysis import Analysis, FileAnalysis
from cudalens.pipeline.defines import compiler_defines


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
    options: tuple[str, ...] = ()  # the build context's compiler flags (-I, -D, --nvcc-flag, compile_commands)

    @property
    def base_name(self) -> str:
        """The kernel's plain name, as the source model and ncu name it: ``vk::copy<8>`` -> ``copy``."""
        from cudalens.compiled.names import base_name_from_demangled

        return base_name_from_demangled(self.kernel)

    def request(self, source: str, origin: str, defines: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The request of :mod:`cudalens.measure.worker` for this launch of ``source``."""
        macros: dict[str, Any] = {k: (None if v is None else str(v)) for k, v in (defines or {}).items()}
        macros.update(dict(self.defines))
        return {
            "source": source, "origin": origin, "kernel": self.kernel, "grid": list(self.grid),
            "block": list(self.block), "shared_mem": self.shared_mem, "args": list(self.args), "mode": self.mode,
            "batch": self.batch, "defines": macros, "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written, "flops": self.flops, "policy": self.policy, "device": self.device,
            "options": list(self.options),
        }


@dataclass(frozen=True)
class Evidence:
    """What the hardware told us: a measurement, counters, and a note for each piece not obtained."""

    measurement: Any | None = None  # cudalens.measure.result.BenchResult
    counters: tuple[Any, ...] | None = None  # cudalens.profile.ncu.LaunchCounters
    counters_source: str | None = None  # the CSV file, or "ncu" when profiled here
    notes: tuple[str, ...] = ()
    lines: Any | None = None  # cudalens.pipeline.line_checks.LineEvidence: predictions vs their lines' counters


#: ``counters=`` value of :func:`gather_evidence` that profiles the ``run`` launch with ncu.
PROFILE_RUN = "run"


def _file_of(analysis: Analysis, kernel: str) -> FileAnalysis:
    """The analyzed file defining ``kernel`` (a plain or C++ name: ``ns::k<float, 128>``)."""
    from cudalens.compiled.names import base_name_from_demangled

    base = base_name_from_demangled(kernel)
    for fa in analysis.files:
        if any(k.name == base for k in fa.model.kernels):
            return fa
    known = sorted({k.name for fa in analysis.files for k in fa.model.kernels})
    raise InputError(f"--run: no kernel {kernel!r} in the analyzed files (kernels: {', '.join(known) or 'none'})")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def gather_evidence(analysis: Analysis, *, run: RunSpec | None = None, counters: str | Sequence[str] | None = None,
                    ncu_timeout_s: float = 300.0) -> Evidence:
    """Measure ``run`` (isolated, with its timeout) and read counters, noting what could not be had.

    ``counters``: None, a path to a CSV saved by ``ncu --csv --page raw`` or by ``ncu --csv --page
    source --print-source cuda,sass`` (per-instruction counters of a ``-lineinfo`` build: every
    compiled-model prediction is checked against its own line's instructions; read here, an
    unreadable file is the user's error and raises InputError), several paths (source pages, and
    ``ncu --csv --page details`` pages naming the launch each kernel's counters measured, which the
    line check then compares with the evaluation under that launch), or :data:`PROFILE_RUN` to profile
    the ``run`` launch under ncu (``-k regex:^KERNEL$ --launch-count 1``): its kernel counters and
    its source page. No GPU, no ncu, no permission or a failing kernel are not errors: each
    becomes one line in ``notes``.
    """
    if counters == PROFILE_RUN and run is None:
        raise InputError("--counters without a file profiles the --run launch: give --run, or --counters FILE.csv")
    notes: list[str] = []
    measurement = None
    launches = None
    source_name = None
    request = None
    lines = None
    files = _counter_files(counters)
    named = ", ".join(files) if files else None
    if not files and counters != PROFILE_RUN:
        counters = None  # an empty list of files: no counters
    page, profiled, raw = _pages(files) if files else (None, {}, [])
    if run is not None:
        fa = _file_of(analysis, run.kernel)
        request = run.request(fa.model.text, fa.model.path, compiler_defines(fa.model, analysis.defines))
        measurement, note = _measure(request, run.timeout_s)
        if note:
            notes.append(note)
    if counters == PROFILE_RUN:
        assert run is not None and request is not None
        launches, lines, profile_notes = _profile(analysis, request, run, max(ncu_timeout_s, run.timeout_s))
        source_name = "ncu"
        notes.extend(profile_notes)
    elif counters is not None and page is not None:
        from cudalens.pipeline.line_checks import check_analysis

        lines = check_analysis(analysis, page, source=named or "", launches=profiled)
        source_name = named
        notes.extend(lines.notes)
    elif counters is not None and files and not raw:
        source_name = named
        notes.append(f"counters: {named} name the profiled launches (details page) but hold no source page "
                     "(ncu --csv --page source --print-source cuda,sass): no line to compare")
    elif counters is not None:
        from cudalens.profile.ncu import parse_csv_file

        launches = parse_csv_file(raw[0] if raw else files[0])
        source_name = named
        names = {lc.base_name for lc in launches}
        analyzed = {k.name for fa in analysis.files for k in fa.model.kernels}
        if not names & analyzed:
            notes.append(f"counters: {named} holds no launch of an analyzed kernel "
                         f"(it has {', '.join(sorted(names)) or 'none'})")
    return Evidence(measurement, tuple(launches) if launches is not None else None, source_name, tuple(notes), lines)


def _counter_files(counters: str | Sequence[str] | None) -> tuple[str, ...]:
    """The CSV files ``counters`` names (none for ``None`` or :data:`PROFILE_RUN`)."""
    if counters is None or counters == PROFILE_RUN:
        return ()
    return (counters,) if isinstance(counters, str) else tuple(counters)


def _pages(paths: tuple[str, ...]) -> tuple[str | None, dict[str, Any], list[str]]:
    """(the ncu source pages among ``paths`` joined, None when there is none; the launch each
    profiled kernel measured, from the details pages among them, by kernel name; the other files,
    read as raw pages). A file may hold a source and a details page (InputError: unreadable)."""
    from cudalens.pipeline.line_checks import is_source_page
    from cudalens.profile.ncu_launch import by_kernel, parse_launches

    pages, raw = [], []
    launches: list[Any] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            raise InputError(f"--counters {path}: cannot read ({exc.strerror})") from None
        found = parse_launches(text)
        launches.extend(found)
        if is_source_page(text):
            pages.append(text)
        elif not found:
            raw.append(path)
    return ("\n".join(pages) if pages else None), by_kernel(tuple(launches)), raw


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
_DRIVER = ("import sys; sys.path.insert(0, {src!r}); from cudalens.pipeline.measured import launch_main; "
           "sys.exit(launch_main(sys.argv[1:]))")


def driver_argv(request_path: str) -> list[str]:
    """The command line that launches the request's kernel exactly once (what ncu profiles)."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return [sys.executable, "-c", _DRIVER.format(src=src), request_path]


def _profile(analysis: Analysis, request: dict[str, Any], run: RunSpec,
             timeout_s: float) -> tuple[tuple[Any, ...] | None, Any | None, list[str]]:
    """One ncu run of the run's launch (a ``-lineinfo`` build, which changes no code): its kernel
    counters, and its source page checked per line. Each piece not obtained is a note."""
    from cudalens.pipeline.line_checks import check_analysis, is_source_page
    from cudalens.profile.ncu import CountersUnavailable, parse_csv, profile_pages

    kernel = run.base_name  # ncu and the counters name the kernel by its plain name
    with tempfile.TemporaryDirectory(prefix="cudalens_ncu_") as tmp:
        req_path = os.path.join(tmp, "request.json")
        with open(req_path, "w", encoding="utf-8") as fh:
            json.dump({**request, "lineinfo": True}, fh)
        try:
            pages = profile_pages(driver_argv(req_path), kernel=kernel, timeout=timeout_s)
        except CountersUnavailable as exc:
            return None, None, [f"counters skipped: {_one_line(exc)}"]
    notes: list[str] = []
    launches: tuple[Any, ...] | None = None
    try:
        launches = parse_csv(pages.raw, source="ncu output")
        if not any(lc.base_name == kernel for lc in launches):
            launches, notes = None, [f"counters skipped: ncu profiled no launch of {kernel}"]
    except InputError as exc:
        notes.append(f"counters skipped: {_one_line(exc)}")
    if not is_source_page(pages.source):
        return launches, None, [*notes, "line counters skipped: ncu exported no source page"]
    try:
        lines = check_analysis(analysis, pages.source, run=run, source="ncu")
    except InputError as exc:
        return launches, None, [*notes, f"line counters skipped: {_one_line(exc)}"]
    return launches, lines, [*notes, *lines.notes]


def launch_source(request: Mapping[str, Any]) -> str:
    """The source the profiled launch compiles: for a source-page profile (``lineinfo``) headed by a
    ``#line`` naming the analyzed file, so its line info (and ncu's source view) name that file with
    the same line numbers. A path a C string cannot hold plainly keeps the build's own name."""
    source = str(request["source"])
    origin = os.path.abspath(str(request.get("origin") or ""))
    if request.get("lineinfo") and request.get("origin") and os.path.isfile(origin) and \
            not any(c in origin for c in '"\\\n\r'):
        return f'#line 1 "{origin}"\n' + source
    return source


def launch_once(request: Mapping[str, Any]) -> None:
    """Compile the request's kernel with NVRTC and launch it exactly once on fresh arguments.

    The arguments are built from the ``cudalens bench`` specs (seeded as the harness does); no
    timing, no L2 flush, no other kernel: under ncu this is the one launch profiled.
    """
    import numpy as np

    from cudalens.hardware import cuda_driver as cu
    from cudalens.measure.argspec import materialize, parse_args

    rng = np.random.default_rng(0)
    host = [materialize(s, rng) for s in parse_args(list(request.get("args") or ()))]
    source = launch_source(request)
    options = [str(o) for o in request.get("options") or ()]
    if request.get("lineinfo"):  # profiled for the source page: SASS mapped to the analyzed file's lines
        options.append("-lineinfo")
    kernel = str(request["kernel"])
    with cu.device_context(int(request.get("device", 0))) as ctx:
        from cudalens.measure.harness import _load, _split_options
        from cudalens.measure.kernels import compile_named

        # the kernel by its C++ name, built as `cudalens bench` builds it (InputError when not found)
        build = _split_options(options, request.get("defines") or None, None)
        compiled = compile_named(source, kernel, ctx.cc, build=build, origin=str(request.get("origin") or "<string>"))
        kern = _load(cu, compiled, kernel)
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
