"""Host hotspots: where a program spends its time (catalog A1; BPG 3.1.1).

Before porting anything to the GPU, the guide asks for a profile of the existing program: the
functions that take most of the run time are the candidates, and their share of the total is the
parallel fraction ``P`` that bounds the payoff (Amdahl, :mod:`cudalens.assess.scaling`).

Three sources of a profile, all turned into the same :class:`Profile` record:

* :func:`profile_python` runs a Python program under :mod:`cProfile` **in a subprocess** (a
  crash of the program never takes cudalens down), captures its output and exit status;
* :func:`from_pstats` reads a profile saved by ``cProfile``/``profile`` (``-o FILE``);
* :func:`parse_gprof` reads the "Flat profile:" table of GNU gprof's text output.

Hotspots are ranked by **self time** (time in the function's own code, excluding callees): that is
the time parallelizing that function's body could remove, so its share is the ``P`` to use.
"""

from __future__ import annotations

import os
import pstats
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace

from cudalens.assess.scaling import amdahl, amdahl_limit
from cudalens.errors import InputError


@dataclass(frozen=True)
class Hotspot:
    """One function of a profile. Times in seconds; ``share`` is self time / total, in [0, 1].

    ``cumulative_s`` includes callees (None when the source does not give it); ``file`` and
    ``line`` are None for native profiles without debug information.
    """

    function: str
    file: str | None
    line: int | None
    calls: int | None
    self_s: float
    cumulative_s: float | None
    share: float

    @property
    def location(self) -> str:
        if self.file is None:
            return "?"
        return self.file if self.line is None else f"{self.file}:{self.line}"

    def to_dict(self) -> dict:
        return {
            "function": self.function,
            "file": self.file,
            "line": self.line,
            "calls": self.calls,
            "self_s": self.self_s,
            "cumulative_s": self.cumulative_s,
            "share": self.share,
        }


@dataclass(frozen=True)
class Profile:
    """All functions of a profile, ranked by self time (largest first)."""

    source: str  # "cProfile", "pstats" or "gprof"
    total_s: float  # sum of self times, seconds
    hotspots: tuple[Hotspot, ...]

    def top(self, k: int) -> tuple[Hotspot, ...]:
        if k < 1:
            raise InputError(f"--top must be at least 1, got {k}")
        return self.hotspots[:k]


def _ranked(source: str, entries: list[Hotspot]) -> Profile:
    total = sum(h.self_s for h in entries)
    with_share = [replace(h, share=(h.self_s / total if total > 0 else 0.0)) for h in entries]
    with_share.sort(key=lambda h: (-h.self_s, -(h.cumulative_s or 0.0), h.function))
    return Profile(source, total, tuple(with_share))


# ---------------------------------------------------------------------------------------------
# Amdahl bounds for hotspots


@dataclass(frozen=True)
class HotspotBound:
    """Amdahl's bound if the given share of the run time were parallelized (speedups in x)."""

    label: str
    share: float  # the parallel fraction P, in [0, 1]
    processors: int
    speedup_at_n: float
    speedup_limit: float  # N -> infinity; math.inf when share == 1

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "parallel_fraction": self.share,
            "processors": self.processors,
            "amdahl_speedup_x": self.speedup_at_n,
            "amdahl_limit_x": None if self.speedup_limit == float("inf") else self.speedup_limit,
        }


def bound(label: str, share: float, processors: int) -> HotspotBound:
    """Amdahl bounds for parallel fraction ``share`` on ``processors`` and on unlimited ones."""
    share = min(max(share, 0.0), 1.0)  # guard float round-off of summed shares
    return HotspotBound(label, share, processors, amdahl(share, processors), amdahl_limit(share))


def bounds(profile: Profile, k: int, processors: int) -> tuple[list[HotspotBound], HotspotBound]:
    """One bound per top-k hotspot alone, and one for the top k together (shares summed)."""
    top = profile.top(k)
    each = [bound(h.function, h.share, processors) for h in top]
    together = bound(f"top {len(top)} together", sum(h.share for h in top), processors)
    return each, together


# ---------------------------------------------------------------------------------------------
# cProfile / pstats


def from_pstats(path: str | os.PathLike) -> Profile:
    """Read a saved cProfile/profile output file (the ``-o FILE`` of ``python -m cProfile``)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such profile file")
    try:
        stats = pstats.Stats(path)
    except Exception as exc:  # noqa: BLE001 - pstats raises many types on a foreign file
        raise InputError(f"{path}: not a Python profile (pstats) file ({type(exc).__name__})") from None
    return _from_stats(stats, "pstats")


def _from_stats(stats: pstats.Stats, source: str) -> Profile:
    entries = []
    for (filename, line, name), (_primitive, total_calls, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        builtin = filename == "~" and line == 0
        entries.append(
            Hotspot(
                function=name,
                file=None if builtin else filename,
                line=None if builtin else line,
                calls=total_calls,
                self_s=tt,
                cumulative_s=ct,
                share=0.0,
            )
        )
    if not entries:
        raise InputError("the profile is empty (the program did not run any Python code?)")
    return _ranked(source, entries)


# The runner executes inside the profiled interpreter, which may not have cudalens installed, so it
# is passed as ``-c`` text. It profiles only the target, keeps its exit status and always writes
# the profile, even when the program raises or calls sys.exit.
_RUNNER = r"""
import cProfile, os, pkgutil, runpy, sys  # imported before profiling starts
out, mode, target = sys.argv[1], sys.argv[2], sys.argv[3]
sys.argv = [target] + sys.argv[4:]
sys.path[0] = os.path.dirname(os.path.abspath(target)) if mode == "path" else os.getcwd()
prof = cProfile.Profile()
code = 0
try:
    prof.enable()
    try:
        if mode == "path":
            runpy.run_path(target, run_name="__main__")
        else:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
    finally:
        prof.disable()
except SystemExit as exc:
    if exc.code is None:
        code = 0
    elif isinstance(exc.code, int):
        code = exc.code
    else:
        print(exc.code, file=sys.stderr)
        code = 1
except BaseException:
    import traceback
    traceback.print_exc()
    code = 1
finally:
    prof.dump_stats(out)
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
"""

_INTERPRETER = re.compile(r"^(python|pypy)[0-9.]*(\.exe)?$")
_FLAGS_WITH_VALUE = {"-W", "-X", "-Q"}


@dataclass(frozen=True)
class ProfiledRun:
    """A program run under the profiler: its profile, exit status and captured output."""

    command: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    profile: Profile


def split_command(argv: list[str]) -> tuple[list[str], str, str, list[str]]:
    """Split ``python [flags] prog.py ARGS`` (or ``python -m mod ARGS`` or ``prog.py ARGS``).

    Returns (interpreter and its flags, "path" or "module", target, program arguments).
    """
    if not argv:
        raise InputError("nothing to profile: give a command after --, e.g. `cudalens assess -- python prog.py`")
    first = argv[0]
    if first.endswith(".py"):
        return [sys.executable], "path", first, list(argv[1:])
    if not _INTERPRETER.match(os.path.basename(first)):
        raise InputError(
            f"{first!r} is not a Python interpreter or a .py file; for native programs profile with "
            "gprof and pass its output with --gprof FILE"
        )
    interp = [first]
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] not in ("-m", "-c", "-"):
        interp.append(argv[i])
        if argv[i] in _FLAGS_WITH_VALUE and i + 1 < len(argv):
            interp.append(argv[i + 1])
            i += 1
        i += 1
    if i >= len(argv):
        raise InputError(f"no program to profile in {' '.join(argv)!r}")
    if argv[i] == "-m":
        if i + 1 >= len(argv):
            raise InputError("-m needs a module name")
        return interp, "module", argv[i + 1], list(argv[i + 2 :])
    if argv[i] in ("-c", "-"):
        raise InputError(f"{argv[i]!r} is not supported; put the code in a file and profile that")
    return interp, "path", argv[i], list(argv[i + 1 :])


def profile_python(argv: list[str], timeout_s: float | None = None, cwd: str | None = None) -> ProfiledRun:
    """Run a Python program under cProfile in a subprocess and collect its profile.

    A nonzero exit is not an error here: the profile up to the crash is still useful, and the
    exit status travels in the result for the caller to report.
    """
    interp, mode, target, args = split_command(list(argv))
    if mode == "path" and not os.path.isfile(os.path.join(cwd or ".", target)):
        raise InputError(f"{target}: no such file")
    with tempfile.TemporaryDirectory(prefix="cudalens-assess-") as tmp:
        out = os.path.join(tmp, "profile.pstats")
        command = [*interp, "-c", _RUNNER, out, mode, target, *args]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout_s, cwd=cwd, stdin=subprocess.DEVNULL
            )
        except FileNotFoundError:
            raise InputError(f"{interp[0]}: interpreter not found") from None
        except subprocess.TimeoutExpired:
            raise InputError(f"the program ran longer than the {timeout_s:g} s timeout") from None
        if not os.path.isfile(out):
            tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise InputError(f"the program wrote no profile (exit code {done.returncode}): {tail}")
        profile = _from_stats(pstats.Stats(out), "cProfile")
    return ProfiledRun(tuple(argv), done.returncode, done.stdout, done.stderr, profile)


# ---------------------------------------------------------------------------------------------
# gprof flat profile

_PER_CALL_UNIT = re.compile(r"\b(Ts|ks|s|ms|us|ns)/call\b")
_ROW = re.compile(
    r"^\s*(?P<pct>\d+(?:\.\d+)?)\s+(?P<cum>\d+(?:\.\d+)?)\s+(?P<self>\d+(?:\.\d+)?)\s+"
    r"(?:(?P<calls>\d+)\s+(?P<selfper>\d+(?:\.\d+)?)\s+(?P<totalper>\d+(?:\.\d+)?)\s+)?"
    r"(?P<name>\S.*?)\s*$"
)
_UNIT_SECONDS = {"Ts": 1.0, "ks": 1e3, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def parse_gprof(text: str, origin: str = "gprof output") -> Profile:
    """Parse GNU gprof's "Flat profile:" table.

    Columns: % time, cumulative seconds (a running sum, *not* inclusive time), self seconds, and,
    for functions compiled with ``-pg``, calls, self and total time per call (unit in the header:
    ms/call, us/call, ...; "Ts/call" is gprof's scale-free seconds). Inclusive time is rebuilt as
    calls x total per call where both are present. Trailing ``[index]`` marks are removed.
    """
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Flat profile:")
    except StopIteration:
        raise InputError(f"{origin}: no 'Flat profile:' section (is this gprof text output?)") from None
    unit = 1.0
    header = None
    for i in range(start + 1, min(start + 12, len(lines))):
        m = _PER_CALL_UNIT.search(lines[i])
        if m:
            unit = _UNIT_SECONDS[m.group(1)]
        if re.search(r"\bname\s*$", lines[i]) and "time" in lines[i]:
            header = i
            break
    if header is None:
        raise InputError(f"{origin}: the flat profile has no column header ending in 'name'")
    entries = []
    for line in lines[header + 1 :]:
        if not line.strip():
            break
        m = _ROW.match(line)
        if m is None:
            break  # the explanatory text after the table
        name = re.sub(r"\s*\[\d+\]$", "", m.group("name"))
        calls = int(m.group("calls")) if m.group("calls") else None
        cumulative = calls * float(m.group("totalper")) * unit if calls is not None else None
        entries.append(Hotspot(name, None, None, calls, float(m.group("self")), cumulative, 0.0))
    if not entries:
        raise InputError(f"{origin}: the flat profile lists no functions")
    return _ranked("gprof", entries)


def read_gprof(path: str | os.PathLike) -> Profile:
    """Read a gprof text output file (``gprof prog gmon.out > FILE``)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a gprof output file") from None
    return parse_gprof(text, path)
