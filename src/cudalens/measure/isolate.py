"""Run a measurement in a child process, so a faulting or hanging kernel cannot take the tool down.

A kernel that dereferences a bad pointer leaves its CUDA context unusable; one that spins forever
never returns. Either would end or freeze the calling process, so ``cudalens bench`` runs the
measurement in a child (``python -m cudalens.measure.worker REQUEST RESULT``) in its own process
group and supervises it:

* the child writes a JSON result file: ``{"ok": true, "result": ...}`` or ``{"ok": false,
  "error_type": ..., "message": ...}`` (a CUDA error such as CUDA_ERROR_ILLEGAL_ADDRESS lands here);
* if the child exits without a result (killed by a signal, crashed in the driver), that is reported
  with its exit status and the end of its stderr;
* if it runs past the timeout, the whole process group gets SIGKILL and the report says
  "timed out after N s".

:func:`supervise` knows nothing about CUDA; tests drive it with fake workers that sleep or crash.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Sequence

from cudalens.errors import CudalensError, InputError, NoDeviceError, ToolchainError


class KernelFault(CudalensError):
    """The measured kernel failed on the GPU (illegal address, launch failure, ...)."""


class BenchTimeout(CudalensError):
    """The measurement did not finish in time (a hanging kernel, most likely); the child was killed."""


@dataclass(frozen=True)
class Outcome:
    """What happened to a supervised child. ``status``: ok | error | crashed | timeout."""

    status: str
    payload: dict[str, Any] | None
    message: str
    returncode: int | None
    elapsed_s: float
    stderr_tail: str = ""


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def supervise(argv: Sequence[str], result_path: str, timeout_s: float, *, env: dict[str, str] | None = None) -> Outcome:
    """Run ``argv`` in a new process group; read ``result_path`` (JSON) when it exits.

    On timeout the group is killed with SIGKILL. Never raises for anything the child does.
    """
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env)
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait()
            return Outcome("timeout", None, f"timed out after {timeout_s:g} s; the worker was killed",
                           None, time.monotonic() - t0)
        err.seek(0)
        tail = err.read()[-4000:].decode(errors="replace").strip()
    elapsed = time.monotonic() - t0
    payload = None
    if os.path.exists(result_path) and os.path.getsize(result_path) > 0:
        try:
            with open(result_path, encoding="utf-8") as fh:
                payload = json.load(fh)
        except (OSError, ValueError):
            payload = None
    if payload is None:
        how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        last = tail.splitlines()[-1] if tail else "no message"
        return Outcome("crashed", None, f"the worker ended without a result ({how}): {last}", rc, elapsed, tail)
    if payload.get("ok"):
        return Outcome("ok", payload, "", rc, elapsed, tail)
    return Outcome("error", payload, str(payload.get("message", "unknown error")), rc, elapsed, tail)


_ERRORS = {"NoDeviceError": NoDeviceError, "InputError": InputError, "ToolchainError": ToolchainError}


def run_isolated(request: dict[str, Any], timeout_s: float = 120.0) -> dict[str, Any]:
    """Run a bench request (see :mod:`cudalens.measure.worker`) in a child; return the result dict.

    Raises the user's error type (NoDeviceError, InputError, ToolchainError), :class:`KernelFault`
    for a CUDA error, :class:`BenchTimeout` after ``timeout_s`` seconds.
    """
    with tempfile.TemporaryDirectory(prefix="cudalens_bench_") as tmp:
        req_path = os.path.join(tmp, "request.json")
        res_path = os.path.join(tmp, "result.json")
        with open(req_path, "w", encoding="utf-8") as fh:
            json.dump(request, fh)
        env = dict(os.environ)
        src_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        out = supervise([sys.executable, "-m", "cudalens.measure.worker", req_path, res_path],
                        res_path, timeout_s, env=env)
    if out.status == "ok":
        return out.payload["result"]  # type: ignore[index]
    kernel = request.get("kernel", "kernel")
    if out.status == "timeout":
        raise BenchTimeout(f"{kernel}: {out.message} (a hanging kernel?)")
    if out.status == "crashed":
        raise KernelFault(f"{kernel}: {out.message}")
    err_type = (out.payload or {}).get("error_type", "")
    cls = _ERRORS.get(err_type)
    if cls is not None:
        raise cls(out.message)
    raise KernelFault(f"{kernel}: {out.message}")
