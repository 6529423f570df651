"""`cudalens profile -- COMMAND`: from a whole application to ranked kernel advice.

One pass: trace the program (:mod:`cudalens.trace.run`), assess the trace
(:mod:`cudalens.trace.assess`), then per top kernel gather every evidence available
(:mod:`cudalens.trace.kernels`): occupancy at the traced launch, the static models on its source when
found, Nsight Compute counters when asked for (``counters=True``) and allowed. The result is one JSON
document, schema ``cudalens/profile-1`` (``data/profile-1.schema.json``), which every renderer reads.

Errors that stop the profile (one line, exit 2 at the CLI): the command is not found; CUDA could
not be traced (no driver, no GPU, CUPTI unavailable); the program exited with a non-zero status
(its status is in the message); the program launched no kernel.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from cudalens._version import __version__
from cudalens.errors import CudalensError, NoDeviceError
from cudalens.trace.records import Trace
from cudalens.trace.run import TracedRun, is_python_program, run_traced

if TYPE_CHECKING:
    from cudalens.trace import assess

# The analysis modules (assess, kernels and what they import: the compiled-code and access models,
# occupancy) load inside build_report; profile_application imports them while the program runs, so
# their import time does not add to the command's wall time.

SCHEMA = "cudalens/profile-1"
TIMELINE_BINS = 240


class ProgramFailed(CudalensError):
    """The traced program failed or gave nothing to profile; ``exit_status`` is its own."""

    def __init__(self, message: str, exit_status: int | None) -> None:
        super().__init__(message)
        self.exit_status = exit_status


@dataclass(frozen=True)
class Options:
    duration: float | None = None
    launch_limit: int = 0
    counters: bool = False
    top: int = 5
    counters_top: int = 3
    sources: tuple[str, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    build: Any = None  # cudalens.project.BuildContext for the static analysis (-I, flags, compile_commands)
    cc: str | None = None
    keep_trace: str | None = None
    ncu_timeout: float = 300.0


def _status_text(status: int) -> str:
    return f"killed by signal {-status}" if status < 0 else f"exit status {status}"


def check_run(run: TracedRun) -> Trace:
    """The trace of a run that can be profiled, else ProgramFailed / NoDeviceError saying why."""
    status = run.exit_status
    stopped = run.stopped_after_s is not None
    trace = run.trace
    if trace is not None and "error" in trace.info:
        raise NoDeviceError(f"could not trace CUDA in {run.argv[0]}: {trace.info['error']} "
                            f"(the program was not run)")
    if status != 0 and not stopped:
        n = len(trace.kernels) if trace else 0
        raise ProgramFailed(f"the program failed ({_status_text(status)}) after {n} kernel launches were recorded: "
                            "fix it first (its own output is above)", status)
    if trace is None:
        raise ProgramFailed(f"the program never initialized CUDA ({_status_text(status)}): no GPU work to profile "
                            "(no GPU or driver, or a CPU-only run)", status)
    if not trace.kernels:
        raise ProgramFailed(f"the program launched no CUDA kernel ({_status_text(status)}): nothing to profile", status)
    return trace


def device_facts(cc: str | None) -> dict[str, Any]:
    """Name, compute capability, multiprocessors and the PCIe link of device 0 (what can be read)."""
    out: dict[str, Any] = {"name": None, "cc": cc, "sm_count": None, "link": None, "link_gbps": None}
    try:
        from cudalens.hardware.live import query_device

        rep = query_device(0)
        out.update(name=rep.name, cc=cc or rep.cc, sm_count=rep.value("sm_count"),
                   driver=rep.cuda_driver_version)
        link = rep.pcie_max or rep.pcie_current
        if link is not None:
            out.update(link=f"PCIe {link.generation} x{link.width}", link_gbps=link.gb_per_s)
    except Exception as exc:  # noqa: BLE001 - no GPU here (e.g. a saved trace analyzed elsewhere)
        out["note"] = f"device not queried ({type(exc).__name__})"
    if out["cc"] is None:  # as every command resolves it: the option, the GPU's, else the default
        from cudalens.hardware.target import DEFAULT_CC

        out["cc"] = DEFAULT_CC
        out["note"] = (out.get("note", "") + f"; compute capability assumed {DEFAULT_CC} (pass --cc)").lstrip("; ")
    return out


def kernel_counters(argv: Sequence[str], k: assess.KernelSummary, timeout: float) -> tuple[Any, str | None]:
    """Nsight Compute counters (and source page) of one launch of kernel ``k``, or why there are none."""
    from cudalens.profile.ncu import CountersUnavailable
    from cudalens.trace.counters import profile_kernel

    try:
        return profile_kernel(argv, k.symbol, k.launches, timeout), None
    except CountersUnavailable as exc:
        return None, str(exc)
    except CudalensError as exc:
        return None, f"{k.name}: {exc}"


def timeline(trace: Trace, bins: int = TIMELINE_BINS) -> dict[str, Any]:
    """Busy fraction of each time bin, for kernels and for copies/sets (the HTML's timeline strip)."""
    recs = trace.gpu_records
    if not recs:
        return {"bins": 0, "kernel": [], "copy": [], "span_s": 0.0}
    t0, t1 = min(s for s, _ in recs), max(e for _, e in recs)
    width = max((t1 - t0) / bins, 1.0)
    kernel, copy = [0.0] * bins, [0.0] * bins

    def add(acc: list[float], s: int, e: int) -> None:
        i = int((s - t0) / width)
        while i < bins and s < e:
            edge = t0 + (i + 1) * width
            acc[i] += min(e, edge) - s
            s, i = edge, i + 1

    for k in trace.kernels:
        add(kernel, k.start_ns, k.end_ns)
    for c in (*trace.copies, *trace.sets):
        add(copy, c.start_ns, c.end_ns)
    return {"bins": bins, "span_s": (t1 - t0) * 1e-9, "kernel": [round(min(v / width, 1.0), 3) for v in kernel],
            "copy": [round(min(v / width, 1.0), 3) for v in copy]}


def children_notes(trace: Trace, child_traces: Sequence[Trace]) -> list[str]:
    """One line each about the program's child processes: traced apart (native), or not traced (Python)."""
    notes = []
    if child_traces:
        launches = sum(len(t.kernels) for t in child_traces)
        notes.append(f"{len(child_traces)} more process(es) started by the program also used CUDA ({launches} kernel "
                     "launches): they were traced apart and are not in this report's shares and findings")
    started = int(trace.info.get("children", 0) or 0)
    if started:
        notes.append(f"the program started {started} child process(es) ({trace.info.get('child_commands', '?')}); "
                     "child processes of a Python program are not traced: any GPU work they did is missing here")
    return notes


def build_report(argv: Sequence[str], run: TracedRun, trace: Trace, opts: Options,
                 device: dict[str, Any]) -> dict[str, Any]:
    from cudalens.findings import Finding, sort_findings
    from cudalens.trace import assess
    from cudalens.trace import kernels as kern

    program = os.path.abspath(argv[1] if is_python_program(argv) and len(argv) > 1 and not argv[0].endswith(".py")
                              and os.path.isfile(argv[1]) else argv[0])
    cc = device["cc"]
    facts = assess.app_facts(trace, link_gbps=device.get("link_gbps"), link=device.get("link"))
    findings: list[Finding] = assess.findings(trace, facts, program, sm_count=device.get("sm_count"), top=opts.top)
    notes: list[str] = []
    py_files = list(trace.files) + ([program] if program.endswith(".py") else [])
    sources = kern.find_sources(py_files, opts.sources)
    counters_note = None
    counters_mode = "trace"
    entries = []
    workdir = tempfile.mkdtemp(prefix="cudalens-profile-")
    for i, k in enumerate(facts.kernels[: max(opts.top, opts.counters_top)]):
        entry: dict[str, Any] = {"name": k.name, "symbol": k.symbol}
        occ = kern.occupancy_at_trace(k, cc)
        entry["occupancy"] = occ
        launches = None
        if opts.counters and i < opts.counters_top and counters_note is None:
            got, why = kernel_counters(argv, k, opts.ncu_timeout)
            if got and got.launches:
                launches = got.launches
                counters_mode = "counters"
                from cudalens.profile.ncu import legacy_metrics
                from cudalens.trace.counters import line_rows

                entry["counters"] = legacy_metrics(launches).to_dict()
                entry["source_lines"] = line_rows(got.lines, k.symbol)[:20]
                if got.note:
                    notes.append(f"{k.name}: {got.note}")
            elif why:
                if "ERR_NVGPUCTRPERM" in why or "not found" in why:
                    counters_note = why  # the same for every kernel: stop asking
                else:
                    notes.append(why)
        src = sources.get(k.name)
        from_counters = []
        if launches:
            from cudalens.profile.ncu import legacy_metrics

            from_counters = kern.counter_findings(k, legacy_metrics(launches), program)
        if src is not None:
            found, analysis, more = kern.static_findings(src, k, cc, workdir, launches, dict(opts.defines), opts.build)
            notes += more
            findings += found + kern.place_counter_findings(from_counters, found, analysis, src)
            # occupancy and grid size from the trace: advice only where the user can change the kernel
            findings += [dataclasses.replace(f, file=src.file, line=(analysis or {}).get("line") or src.first_line)
                         for f in kern.trace_kernel_findings(k, occ, program, device.get("sm_count"))
                         if f.rule not in {g.rule for g in found}]
            entry["source"] = {"file": src.file, "line": src.first_line, "origin": src.origin}
            entry["analysis"] = analysis
        else:
            entry["source"] = None
            findings += kern.place_on_measured_lines(from_counters, entry.get("source_lines") or [])
        entries.append(entry)
    if opts.counters and counters_note:
        notes.append(f"counters not read, trace only: {counters_note}")
    dropped = int(trace.info.get("launch_limit_dropped", 0) or 0)
    if dropped:
        notes.append(f"--launch-limit {opts.launch_limit}: {dropped} later kernel launches were not recorded")
    if trace.info.get("dropped_records"):
        notes.append(f"CUPTI dropped {trace.info['dropped_records']} records (buffers full)")
    notes += children_notes(trace, run.child_traces)
    if run.stopped_after_s is not None:
        notes.append(f"--duration: the program was stopped after {run.stopped_after_s:.1f} s")
    kernels = []
    by_name = {e["symbol"]: e for e in entries}
    for k in facts.kernels:
        d = k.to_dict()
        d.update({key: v for key, v in by_name.get(k.symbol, {}).items() if key not in ("name", "symbol")})
        kernels.append(d)
    summary = facts.to_dict()
    summary.pop("kernels")
    transfers = summary.pop("transfers")
    return {
        "schema": SCHEMA,
        "cudalens_version": __version__,
        "command": list(argv),
        "program": program,
        "collector": trace.collector,
        "mode": counters_mode,
        "exit_status": run.exit_status,
        "wall_s": run.wall_s,
        "device": device,
        "summary": summary,
        "timeline": timeline(trace),
        "kernels": kernels,
        "transfers": transfers,
        "findings": [f.to_dict() for f in sort_findings(findings)],
        "notes": notes,
    }


def _while_running(cc: str | None) -> dict[str, Any]:
    """What the parent does while the program runs: load the analysis modules, query the device."""
    import cudalens.occupancy  # noqa: F401 - imported now (numpy with it), used by build_report
    from cudalens.trace import kernels  # noqa: F401

    return device_facts(cc)


def profile_application(argv: Sequence[str], opts: Options, *, stdout: IO[str] | None = None) -> dict[str, Any]:
    from concurrent.futures import Future, ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:  # started once the program runs, so it does not delay it
        device: list[Future] = []
        run = run_traced(argv, duration=opts.duration, launch_limit=opts.launch_limit, keep=opts.keep_trace,
                         stdout=stdout, on_start=lambda: device.append(pool.submit(_while_running, opts.cc)))
        trace = check_run(run)
        return build_report(argv, run, trace, opts, device[0].result() if device else device_facts(opts.cc))


def report_from_trace(trace: Trace, argv: Sequence[str], opts: Options, *, exit_status: int = 0,
                      device: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report of a trace saved earlier (``--trace FILE``): no run, no counters."""
    run = TracedRun(tuple(argv), trace.collector, trace, exit_status, 0.0, None, None)
    check_run(run)
    return build_report(argv, run, trace, Options(**{**opts.__dict__, "counters": False}),
                        device or device_facts(opts.cc))
