"""The compiled model's cost in instructions (callgrind), side by side: deterministic where timing is not.

Usage: python3 benchmarks/model/ptx_model_callgrind.py OUT.json --code LABEL=DIR [--code LABEL=DIR ...]
           [--root /tmp/m27/speedroot] --units SUBSTR [SUBSTR ...]
  DIR: a checkout (its ``src`` is imported); SUBSTR: parts of the speed root's unit names
  (``reduction__reduction``, ``matrixMul__matrixMul``): the units whose names hold one are run.

For each code, ``valgrind --tool=callgrind`` runs this script's child mode twice, with one and with
two passes of ``compiled_access`` over the units (each after a warm-up pass, as
``benchmarks/model/ptx_model_speed.py`` runs them; the source model is built first, outside the passes);
the difference of the two runs' instruction totals is one pass, start-up, imports and parsing of the
sources left out. Made deterministic: ``PYTHONHASHSEED=0``; one BLAS thread (numpy's OpenBLAS otherwise
starts a thread whose spinning callgrind counts, more on a loaded machine); the source parse without its
time and memory limits (``Budget``), which valgrind's slowness could otherwise exhaust and cut the model
short. Instructions leave out what callgrind cannot see (page faults, cache misses): confirm gains with
``ptx_model_speed_vs.py`` on an idle machine.

OUT.json: ``what``, ``units`` (the names run) and per code ``instructions_M`` (one pass, millions).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(root: Path, passes: int, subs: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import speed_root

    prep = list(speed_root.units(root, subs, {"seconds": 1e9, "memory_mb": 1e9}))
    for _ in range(passes + 1):  # the first: warm-up
        for u, model, text in prep:
            speed_root.run(u, model, text)
    sys.stdout.write(json.dumps([u["tu"] for u, _m, _t in prep]) + "\n")
    return 0


def _instructions(src: Path, root: Path, passes: int, subs: list[str], tmp: str) -> tuple[int, list[str]]:
    out = Path(tmp) / f"callgrind.{passes}"
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
                           "--child", str(root), str(passes), *subs], env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-1500:])
    total = next(int(line.split()[1]) for line in out.read_text().splitlines() if line.startswith("summary:"))
    return total, json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return _child(Path(argv[1]), int(argv[2]), argv[3:])
    codes = [argv[k + 1].split("=", 1) for k, a in enumerate(argv) if a == "--code" and k + 1 < len(argv)]
    subs = argv[argv.index("--units") + 1:] if "--units" in argv else []
    subs = subs[:next((k for k, s in enumerate(subs) if s.startswith("--")), len(subs))]
    if not argv or argv[0].startswith("--") or not codes or not subs or any(len(c) != 2 for c in codes):
        sys.stderr.write(__doc__ or "")
        return 2
    if shutil.which("valgrind") is None:
        sys.stderr.write("ptx_model_callgrind: valgrind is not installed\n")
        return 2
    root = Path(argv[argv.index("--root") + 1] if "--root" in argv else "/tmp/m27/speedroot").resolve()
    result: dict = {"what": f"callgrind, one pass of compiled_access over the units (2 passes - 1 pass), root {root}",
                    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "units": None, "codes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for label, d in codes:
            src = Path(d).resolve() / "src"
            try:
                one, units = _instructions(src, root, 1, subs, tmp)
                two, _ = _instructions(src, root, 2, subs, tmp)
            except (RuntimeError, StopIteration, ValueError) as exc:
                sys.stderr.write(f"ptx_model_callgrind: {label} failed: {exc}\n")
                return 1
            result["units"] = units
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=d, capture_output=True, text=True,
                                    check=False).stdout.strip()
            result["codes"][label] = {"dir": d, "commit": commit, "instructions_M": round((two - one) / 1e6, 1)}
            sys.stdout.write(f"{label}: {result['codes'][label]['instructions_M']} M instructions\n")
    Path(argv[0]).parent.mkdir(parents=True, exist_ok=True)
    Path(argv[0]).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
