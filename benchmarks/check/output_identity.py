"""Do the moves change any output? Run ``analyze``, ``check`` and ``profile`` over the examples and
the fixtures, in JSON and SARIF, with the cudalens found on PYTHONPATH, and write every output under
one folder; then compare two such folders byte for byte.

    # before: PYTHONPATH=<old checkout>/src python benchmarks/check/output_identity.py run /tmp/before
    # after:  PYTHONPATH=src python benchmarks/check/output_identity.py run /tmp/after
    python benchmarks/check/output_identity.py compare /tmp/before /tmp/after \
        -o benchmarks/results/cpu/output_identity/<date>.json

``compare`` lists every output that differs, with the first differing line of each; it exits 1 when
any differs. The random name of profile's temporary folder is the one thing normalized. Runs on the CPU (nvcc for the compiled layer where installed); no GPU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*.cu"))
NCU_CSV = "tests/fixtures/ncu_h100_raw.csv"
#: the command each saved trace was taken of (what `profile --trace` reports on; not run again)
PROGRAMS = {"h100_convolution_separable": ["./convolutionSeparable"], "h100_transpose": ["./transpose"],
            "h100_cupy_rawkernel": ["python3", "examples/profile/cupy_rawkernel.py"],
            "h100_torch_train": ["python3", "examples/profile/torch_train.py"],
            "h100_torch_train_s4": ["python3", "examples/profile/torch_train.py"]}
TRACES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/fixtures/profile").glob("*.tsv"))


def cases() -> list[tuple[str, list[str]]]:
    """(name, cudalens arguments) of every output compared."""
    # Every example source-only (analyze's per-file deadline is 60 s: on a loaded 2-core machine the
    # compiled layer of 80 files can hit it, and the output would depend on the load); the compiled
    # layer and the counters on two examples.
    out: list[tuple[str, list[str]]] = []
    for fmt in ("json", "sarif"):
        out.append((f"analyze_examples_source.{fmt}", ["analyze", *EXAMPLES, "--no-compile", "--format", fmt]))
        out.append((f"check_examples_source.{fmt}",
                    ["check", "examples", "--no-compile", "--deadline", "600", "--format", fmt]))
        # the fixture's kernels (benchmarks/model/ncu_fixture.cu) with their counters: cross-checks and V1
        out.append((f"analyze_counters.{fmt}",
                    ["analyze", "benchmarks/model/ncu_fixture.cu", "--counters", NCU_CSV, "--format", fmt]))
        for trace in TRACES:
            name = Path(trace).stem
            out.append((f"profile_{name}.{fmt}",
                        ["profile", "--trace", trace, "--cc", "9.0", "--format", fmt, "--", *PROGRAMS[name]]))
    return out


def run(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    for name, args in cases():
        if (folder / (name + ".rc")).exists():  # resume an interrupted run
            continue
        done = subprocess.run([sys.executable, "-m", "cudalens", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=1800)
        (folder / name).write_text(done.stdout)
        (folder / (name + ".rc")).write_text(f"{done.returncode}\n{done.stderr[-2000:]}")
    return 0


#: a temporary folder's random name (profile writes a Python file's kernel strings there)
_TMP = re.compile(r"/tmp/cudalens-profile-[A-Za-z0-9_]+/")


def _normal(text: str) -> str:
    return _TMP.sub("/tmp/cudalens-profile-*/", text)


def _first_difference(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return f"line {i}: {x.strip()[:160]!r} -> {y.strip()[:160]!r}"
    return "one output is a prefix of the other"


def compare(before: Path, after: Path, output: Path | None) -> int:
    rows = []
    for name, args in cases():
        a, b = _normal((before / name).read_text()), _normal((after / name).read_text())
        rc_a = (before / (name + ".rc")).read_text().split("\n", 1)[0]
        rc_b = (after / (name + ".rc")).read_text().split("\n", 1)[0]
        same = a == b and rc_a == rc_b
        rows.append({"output": name, "command": "cudalens " + " ".join(args), "identical": same,
                     "bytes": len(b), "sha256": hashlib.sha256(b.encode()).hexdigest()[:16],
                     "exit": rc_b, **({} if same else {"difference": _first_difference(a, b)})})
    result = {"outputs": len(rows), "identical": sum(r["identical"] for r in rows), "rows": rows}
    text = json.dumps(result, indent=1) + "\n"
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
    sys.stdout.write(f"{result['identical']}/{result['outputs']} outputs identical\n")
    return 0 if result["identical"] == result["outputs"] else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("folder", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("-o", "--output", type=Path)
    a = p.parse_args()
    return run(a.folder) if a.cmd == "run" else compare(a.before, a.after, a.output)


if __name__ == "__main__":
    raise SystemExit(main())
