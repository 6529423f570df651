"""`cudalens check` end to end for the fuzz harness (fuzz_analyzer.py --check-every): the mutated file
beside a good one and, chosen per input, one hostile neighbour (issue #25):

  fifo        a FIFO named x.cu                  self      a .cu symlink to itself
  devzero     a .cu symlink to /dev/zero         huge      a 9 MB .cu file
  deeptoml    pyproject.toml nested 100,000 deep deepjson  --compile-commands nested 100,000 deep
  utf16       a UTF-16 pyproject.toml (BOM)      bom8      a UTF-8 pyproject.toml with a BOM
  ccbin       [tool.cudalens] nvcc-flags naming a program (a marker proves whether it ran)
  optfile     compile_commands.json whose --options-file names a program
  none        nothing else

Run in a subprocess (``python -m cudalens check DIR --format sarif -o DIR/out.sarif --deadline D``,
compiled or ``--no-compile``). Outcomes: ``ok`` (exit 0/1, SARIF written), ``refused`` (exit 2, every
line of standard error one clean sentence), failures: ``crash`` (a traceback, a Python exception
name or a private temporary path on standard error, or another exit code), ``overrun`` (the run
took longer than its files' deadlines allow plus 30 s), ``ran`` (the marker program ran),
``nosarif`` (no SARIF log although
the run succeeded or only one file was bad). Peak memory: the largest resident set of the check and
everything it waited for (wait4).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOOD = b"__global__ void good(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2 * a[i]; }\n"
NEIGHBOURS = ("none", "none", "fifo", "self", "devzero", "huge", "deeptoml", "deepjson", "utf16", "bom8", "ccbin",
              "optfile")
#: neighbours that concern one file only: the others are still reported (SARIF written)
PER_FILE = ("fifo", "self", "devzero", "huge", "optfile")
PRIVATE = re.compile(r"cudalens-[a-z0-9_]{6,}/|/tmp/tmp\w+/|tu\.cu\b")


def _setup(tmp: Path, kind: str, marker: Path) -> list[str]:
    evil = tmp / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\nexec g++ \"$@\"\n")
    evil.chmod(0o755)
    src = tmp / "src"
    if kind == "fifo":
        os.mkfifo(src / "x.cu")
    elif kind == "self":
        (src / "self.cu").symlink_to(src / "self.cu")
    elif kind == "devzero":
        (src / "zero.cu").symlink_to("/dev/zero")
    elif kind == "huge":
        (src / "huge.cu").write_bytes(GOOD * (9_000_000 // len(GOOD) + 1))
    elif kind == "deeptoml":
        (src / "pyproject.toml").write_text("[tool.cudalens]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    elif kind == "deepjson":
        (tmp / "cc.json").write_text("[" * 100_000 + "]" * 100_000)
        return ["--compile-commands", str(tmp / "cc.json")]
    elif kind == "utf16":
        (src / "pyproject.toml").write_bytes('[tool.cudalens]\ncc = "9.0"\n'.encode("utf-16"))
    elif kind == "bom8":
        (src / "pyproject.toml").write_bytes(b"\xef\xbb\xbf" + b'[tool.cudalens]\ncc = "9.0"\n')
    elif kind == "ccbin":
        (src / "pyproject.toml").write_text(f'[tool.cudalens]\nnvcc-flags = ["-ccbin={evil}"]\n')
    elif kind == "optfile":
        (tmp / "opts").write_text(f"-ccbin {evil}\n")
        (tmp / "cc.json").write_text(json.dumps([{"directory": str(src), "file": "input.cu",
                                                  "arguments": ["nvcc", "--options-file", str(tmp / "opts"),
                                                                "-c", "input.cu"]}]))
        return ["--compile-commands", str(tmp / "cc.json")]
    return []


def check_e2e(data: bytes, kind: str, compile: bool, deadline: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cudalens_fuzz_check_") as t:
        tmp = Path(t)
        (tmp / "src").mkdir()
        (tmp / "src" / "input.cu").write_bytes(data)
        (tmp / "src" / "good.cu").write_bytes(GOOD)
        marker = tmp / "MARKER"
        extra = _setup(tmp, kind, marker)
        out = tmp / "out.sarif"
        cmd = [sys.executable, "-m", "cudalens", "check", str(tmp / "src"), "--format", "sarif", "-o", str(out),
               "--deadline", f"{deadline:g}", "-j", "2", *extra, *([] if compile else ["--no-compile"])]
        allowed = deadline * 2 + 30  # two files at most per worker slot, plus start-up on a loaded machine
        env = {**os.environ, "HOME": t, "XDG_CACHE_HOME": str(tmp / "cache")}
        t0 = time.monotonic()
        with open(tmp / "err", "wb") as err_fh:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_fh, cwd=t, env=env)
            rc, peak_kb, killed = None, 0, False
            while rc is None:
                pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    rc = os.waitstatus_to_exitcode(status)
                    peak_kb = usage.ru_maxrss
                    p.returncode = rc
                    break
                if time.monotonic() - t0 > allowed + 60 and not killed:
                    p.kill()
                    killed = True
                time.sleep(0.05)
        wall = time.monotonic() - t0
        err = (tmp / "err").read_text(errors="replace").strip()
        res: dict[str, Any] = {"kind": kind, "compiled": compile, "rc": rc, "wall_s": round(wall, 2),
                               "peak_mb": round(peak_kb / 1024, 1), "stderr": err[-400:]}
        lines = err.splitlines()
        from fuzz_analyzer import PY_EXC  # noqa: PLC0415

        if marker.exists():
            res["outcome"] = "ran"
        elif wall > allowed:
            res["outcome"] = "overrun"
        elif rc not in (0, 1, 2) or any(PY_EXC.search(ln) or PRIVATE.search(ln) for ln in lines):
            res["outcome"] = "crash"
        elif not out.exists() and (rc in (0, 1) or kind in PER_FILE):
            res["outcome"] = "nosarif"  # a bad file beside good ones must not stop the good files' report
        elif rc == 2:
            res["outcome"] = "refused"
        else:
            res["outcome"] = "ok"
        res["stopped"] = sum("at the deadline" in ln or "memory cap" in ln for ln in lines)
        return res
