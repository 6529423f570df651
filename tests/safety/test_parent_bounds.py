"""Issue #25: the work done once for the whole run, outside the per-file workers, is bounded too.

The project's launch resolution runs in a worker under the files' deadline and memory cap; past
either, each file is analysed with the launches in its own file only and the report says so in one
line (stderr, JSON ``notes``, SARIF ``toolExecutionNotifications``, every launch's notes). The
report is rendered in a worker under the same limits: past them, one line, exit 2, nothing written.
The scans the parent still does over every file are linear."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

GOOD = ("__global__ void good(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
        "if (i < n) a[i * 2] = 1.0f; }\nint main() { float *d = 0; good<<<4, 128>>>(d, 512); return 0; }\n")


def _pathological(folder, files: int = 4, sites: int = 100) -> None:
    """Files of one folder (separate compilation: every launch may reach every definition) each
    defining the same kernel and launching it ``sites`` times: the resolution joins every site to
    every definition and re-reads the file for each pair (4 x 100: 28 s on a loaded machine, and
    it grows with the square of the sites), while each file alone is quick."""
    folder.mkdir()
    (folder / "Makefile").write_text("all:\n")
    for f in range(files):
        body = "\n".join(f"  k<<<{s + 1}, {32 * (1 + s % 32)}>>>(d, {s});" for s in range(sites))
        (folder / f"f{f:02d}.cu").write_text(
            "__global__ void k(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
            f"if (i < n) a[i] = 1.0f; }}\nint main() {{ float *d = 0;\n{body}\n  return 0; }}\n")
    (folder / "good.cu").write_text(GOOD)


def _run(args, cwd, timeout, patch: str = ""):
    """``cudalens ARGS`` in a fresh interpreter, after ``patch`` (Python run first: a stand-in for a
    pathological input that the forked workers inherit)."""
    script = "import sys\n" + textwrap.dedent(patch) + "\nfrom cudalens.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    env = {**os.environ, "CUDALENS_NO_CACHE": "1"}
    return subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False, env=env)


def _stand_in(target: str, behaviour: str) -> str:
    """Patch text for :func:`_run`: the function ``target`` (``module.name``) replaced by one that does
    ``behaviour`` (:data:`NEVER_RETURNS`, :data:`FILLS_MEMORY`) whatever it is given."""
    module, name = target.rsplit(".", 1)
    return (f"import time\nimport {module} as patched\ndef stand_in(*args, **kwargs):\n"
            f"{textwrap.indent(behaviour, '    ')}\npatched.{name} = stand_in\n")


NEVER_RETURNS = "while True:\n    time.sleep(0.1)"
FILLS_MEMORY = "blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 2**20))"


def _check_past_a_limit(tmp_path, repo, fmt: str, limit: list[str], patch: str, timeout: float) -> tuple[str, dict]:
    """``check`` of ``repo`` (no compile) with its launch resolution replaced by ``patch`` and the
    ``limit`` option given: it finishes and says one line naming the launch resolution, and its
    report is written. That line (without the ``cudalens: `` prefix) and the report."""
    out = tmp_path / f"out.{fmt}"
    p = _run(["check", str(repo), "--no-compile", "--format", fmt, "-o", str(out), *limit], tmp_path,
             timeout=timeout, patch=patch)
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudalens: ") and "launch resolution" in lines[0], p.stderr
    return lines[0].removeprefix("cudalens: "), json.loads(out.read_text())


def _uris(sarif: dict) -> set[str]:
    return {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1]
            for r in sarif["runs"][0]["results"]}


SLOW = _stand_in("cudalens.project.resolve.resolve_project", NEVER_RETURNS)


def test_a_pathological_launch_resolution_is_bounded(tmp_path):
    """A resolution that never ends (the stand-in: every real slow case, such as the folder of
    ``_pathological``, gets faster as the resolution does; this one stays past any deadline)."""
    repo = tmp_path / "repo"
    _pathological(repo, files=2, sites=10)
    deadline = 5
    t0 = time.monotonic()
    line, sarif = _check_past_a_limit(tmp_path, repo, "sarif", ["--deadline", str(deadline)], SLOW, deadline + 60)
    took = time.monotonic() - t0
    assert took < deadline + 10, f"check took {took:.0f} s"
    assert f"deadline of {deadline} s" in line
    assert {"good.cu", "f00.cu", "f01.cu"} <= _uris(sarif)
    told = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in told] == [line]


HOG = _stand_in("cudalens.project.resolve.resolve_project", FILLS_MEMORY)


def test_launch_resolution_past_the_memory_cap_falls_back_to_each_files_launches(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "good.cu").write_text(GOOD)
    (repo / "other.cu").write_text(GOOD.replace("good", "other"))
    line, doc = _check_past_a_limit(tmp_path, repo, "json", ["--memory-cap", "256"], HOG, 120)
    assert "memory cap of 256 MB" in line
    assert doc["notes"] == [line]
    launches = {k["name"]: k["launch"] for k in doc["kernels"]}
    assert set(launches) == {"good", "other"}
    for name, launch in launches.items():  # still found, in the kernel's own file, and saying why
        assert launch["origin"] == "launch" and launch["site"].endswith(f"{name}.cu:2"), launch
        assert launch["block"] == [128, 1, 1] and doc["notes"][0] in launch["notes"]


def test_no_note_when_the_resolution_finishes(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "good.cu").write_text(GOOD)
    out = tmp_path / "out.json"
    p = _run(["check", str(repo), "--no-compile", "--format", "json", "-o", str(out)], tmp_path, timeout=120)
    assert p.returncode in (0, 1) and p.stderr == "", p.stderr
    doc = json.loads(out.read_text())
    assert doc["notes"] == [] and not any("launch resolution" in n for k in doc["kernels"] for n in k["launch"]["notes"])


HANG_RENDER = _stand_in("cudalens.report.emit.emit", NEVER_RETURNS)  # the one emitter every command renders with

HOG_RENDER = _stand_in("cudalens.report.emit.emit", FILLS_MEMORY) + """
from cudalens.pipeline import isolated
real = isolated.FileLimits
isolated.FileLimits = lambda: real(seconds=real().seconds, memory_mb=256)
"""


def test_rendering_past_the_deadline_is_one_line_and_writes_nothing(tmp_path):
    (tmp_path / "good.cu").write_text(GOOD)
    out = tmp_path / "out.html"
    out.write_text("the previous report")
    t0 = time.monotonic()
    p = _run(["check", "good.cu", "--no-compile", "--format", "html", "-o", str(out), "--deadline", "5"],
             tmp_path, timeout=60, patch=HANG_RENDER)
    assert time.monotonic() - t0 < 5 + 10
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines() == [
        "cudalens: error: the report: stopped in the render stage at the deadline of 5 s; no report written"]
    assert out.read_text() == "the previous report"


def test_rendering_past_the_memory_cap_is_one_line(tmp_path):
    (tmp_path / "good.cu").write_text(GOOD)
    p = _run(["analyze", "good.cu", "--no-compile"], tmp_path, timeout=120, patch=HOG_RENDER)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert p.stderr.strip().splitlines() == [
        "cudalens: error: the report: stopped in the render stage at the memory cap of 256 MB; no report written"]


def test_the_rendered_report_is_the_same(tmp_path):
    """Rendered in the worker, the report reads as before: every format, to a file and to a pipe."""
    (tmp_path / "good.cu").write_text(GOOD)
    for fmt in ("text", "json"):
        p = _run(["analyze", "good.cu", "--no-compile", "--format", fmt, "-o", f"r.{fmt}"], tmp_path, timeout=120)
        q = _run(["analyze", "good.cu", "--no-compile", "--format", fmt], tmp_path, timeout=120)
        assert p.returncode == q.returncode == 0, p.stderr + q.stderr
        written = (tmp_path / f"r.{fmt}").read_text()
        assert "good" in written and q.stdout.strip() in written  # (a file holds the notes stdout leaves to stderr)
        if fmt == "json":
            assert json.loads(q.stdout)["findings"] == json.loads(written)["findings"]


def test_kernel_names_scan_is_linear(tmp_path):
    """``__global__ x `` repeated over 260 kB: the parent's scan for kernel names (a backtracking
    regex, cubic: 8,000 repeats took 105 s, before any worker or deadline) now takes a moment."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "good.cu").write_text(GOOD)
    (repo / "words.cu").write_text("__global__ x " * 20_000)
    out = tmp_path / "out.sarif"
    t0 = time.monotonic()
    p = _run(["check", str(repo), "--no-compile", "--format", "sarif", "-o", str(out), "--deadline", "10"],
             tmp_path, timeout=300)
    assert time.monotonic() - t0 < 10 + 10
    assert "Traceback" not in p.stderr and "good.cu" in _uris(json.loads(out.read_text())), p.stderr
