"""Run a program under CUPTI activity tracing and return its :class:`~cudalens.trace.records.Trace`.

How a program is traced (chosen by its command line):

* **Python programs** (``python train.py``, ``python -m pkg``, ``train.py``): the program runs in a
  child process of its own interpreter through :mod:`cudalens.trace._pyrun`, which enables CUPTI
  activity with ``cupti-python`` before the program's first CUDA call, then runs it with
  :mod:`runpy` as ``__main__``. The child also lists the program's own source files (for kernel
  source strings such as a CuPy ``RawKernel``'s).
* **Native programs** (anything else): the CUDA driver loads cudalens' injection library
  (``CUDA_INJECTION64_PATH``, built from ``inject.c`` at first use, :mod:`cudalens.trace.inject`),
  which enables the same activity kinds and writes the same records at exit. Nsight Systems is not
  used: it is often absent (and on the H100 machines this was built on it could not make a report).

Both collectors record kernels (name, grid, block, registers, shared memory, start and end),
memory copies and sets (direction, bytes, pageable or pinned, async flag, stream), the runtime API
calls that synchronize, allocate, free, copy or set, explicit synchronizations, and NVTX ranges
(``NVTX_INJECTION64_PATH`` points NVTX at CUPTI). ``launch_limit`` keeps the first N kernel
records; ``duration`` stops the program (SIGTERM, then SIGKILL 10 s later) after that many seconds.

Child processes: under the injection library (native programs) a child that initializes CUDA too
inherits the injection and writes its own records beside the trace (``TRACE.PID``); they are read
as ``child_traces`` and reported in one line, not mixed into the program's own assessment. A Python
program's child processes are not traced: the collector counts the processes it starts (an audit
hook on ``subprocess``, ``os.system``, ``os.exec*``, ``os.spawn*``, ``os.posix_spawn``, ``os.fork``) and
the report says in one line that their GPU work is missing.

Limits: a program that ends through ``os._exit`` or a signal that cannot be caught loses the records
still buffered. The command is an argument list and never passes through a shell.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from cudalens.errors import InputError
from cudalens.trace import inject
from cudalens.trace.records import Trace, parse_file

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
#: interpreter options that take a value (python -W ignore script.py)
_PY_OPTS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}


@dataclass(frozen=True)
class TracedRun:
    argv: tuple[str, ...]
    mode: str  # "python" or "injection"
    trace: Trace | None  # None when the collector never wrote (CUDA never initialized, no driver)
    exit_status: int  # the program's own; negative: killed by that signal
    wall_s: float
    stopped_after_s: float | None  # set when --duration ended the program
    raw_path: str | None
    child_traces: tuple[Trace, ...] = ()  # child processes traced beside the program (injection library)


def child_trace_files(out_path: str) -> list[str]:
    """The records of the program's child processes that initialized CUDA (``OUT.PID``, see inject.c)."""
    folder, base = os.path.split(out_path)
    pattern = re.compile(re.escape(base) + r"\.\d+$")
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if pattern.match(n))


def _child_traces(out_path: str) -> tuple[Trace, ...]:
    out = []
    for path in child_trace_files(out_path):
        try:
            if os.path.getsize(path):
                out.append(parse_file(path))
        except (OSError, InputError):
            continue  # a child killed while writing: its records are lost, the program's are not
    return tuple(out)


def is_python_program(argv: Sequence[str]) -> bool:
    return bool(argv) and (bool(_PYTHON.match(os.path.basename(argv[0]))) or argv[0].endswith(".py"))


def _split_python(argv: Sequence[str]) -> tuple[str, list[str], list[str]]:
    """(interpreter, interpreter options, program) for a Python command line."""
    if argv[0].endswith(".py"):
        return sys.executable, [], list(argv)
    interp, rest = argv[0], list(argv[1:])
    opts: list[str] = []
    while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c", "-"):
        opt = rest.pop(0)
        opts.append(opt)
        if opt in _PY_OPTS_WITH_VALUE and rest:
            opts.append(rest.pop(0))
    if not rest:
        raise InputError(f"{' '.join(argv)}: no Python script, -m MODULE or -c CODE to trace")
    if rest[0] == "-":
        raise InputError("a program read from standard input cannot be traced; pass a script file")
    if rest[0] not in ("-m", "-c") and not os.path.isfile(rest[0]):
        raise InputError(f"{rest[0]}: no such Python script")
    return interp, opts, rest


def _package_root() -> str:
    """The folder holding the cudalens package (src/ in a checkout)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def command_for(argv: Sequence[str], out_path: str, launch_limit: int) -> tuple[str, list[str], dict[str, str]]:
    """(mode, the command to run, environment additions) for tracing ``argv``."""
    if not argv:
        raise InputError("no command given: cudalens profile -- COMMAND [ARGS]")
    env: dict[str, str] = {}
    lib = inject.nvtx_injection()
    if lib:
        env["NVTX_INJECTION64_PATH"] = lib
    if is_python_program(argv):
        interp, opts, prog = _split_python(argv)
        if shutil.which(interp) is None and not os.path.isfile(interp):
            raise InputError(f"{interp}: no such program")
        root = _package_root()
        env["PYTHONPATH"] = root + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
        cmd = [interp, *opts, "-m", "cudalens.trace._pyrun", out_path, str(launch_limit), "--", *prog]
        return "python", cmd, env
    exe = argv[0]
    if shutil.which(exe) is None and not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise InputError(f"{exe}: no such program (or not executable)")
    env.update({"CUDA_INJECTION64_PATH": inject.build(), "CUDALENS_TRACE_OUT": out_path,
                "CUDALENS_TRACE_LAUNCH_LIMIT": str(launch_limit)})
    return "injection", list(argv), env


def run_traced(argv: Sequence[str], *, duration: float | None = None, launch_limit: int = 0,
               keep: str | None = None, stdout: IO[str] | None = None,
               on_start: Callable[[], object] | None = None) -> TracedRun:
    """Run ``argv`` traced; the program's output goes to ``stdout`` (default: inherited).

    ``keep``: a path to keep the raw trace at (else a temporary file, removed after parsing).
    ``on_start``: called once the program has started (work for the parent to overlap with the run).
    """
    if duration is not None and duration <= 0:
        raise InputError(f"--duration must be positive, got {duration}")
    if launch_limit < 0:
        raise InputError(f"--launch-limit must be >= 0, got {launch_limit}")
    tmpdir = None
    if keep:
        out_path = os.path.abspath(keep)
    else:
        tmpdir = tempfile.mkdtemp(prefix="cudalens-trace-")
        out_path = os.path.join(tmpdir, "trace.tsv")
    try:
        for old in [out_path, *child_trace_files(out_path)]:
            if os.path.exists(old):
                os.remove(old)
        mode, cmd, extra = command_for(argv, out_path, launch_limit)
        env = {**os.environ, **extra}
        t0 = time.perf_counter()
        stopped = None
        try:
            proc = subprocess.Popen(cmd, env=env, stdout=stdout)
        except OSError as exc:
            raise InputError(f"{argv[0]}: cannot run ({exc.strerror})") from None
        if on_start is not None:
            on_start()
        try:
            status = proc.wait(timeout=duration)
        except subprocess.TimeoutExpired:
            stopped = time.perf_counter() - t0
            proc.send_signal(signal.SIGTERM)
            try:
                status = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                status = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            proc.wait()
            raise
        wall = time.perf_counter() - t0
        trace = parse_file(out_path) if os.path.exists(out_path) and os.path.getsize(out_path) else None
        return TracedRun(tuple(argv), mode, trace, status, wall, stopped, out_path if keep else None,
                         _child_traces(out_path))
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
