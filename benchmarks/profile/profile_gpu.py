"""`cudalens profile` on a GPU: three applications, checked against Nsight Compute, and the overhead.

Usage (repository root, GPU machine):
    python3 benchmarks/profile/profile_gpu.py OUTDIR [--samples DIR] [--apps torch,cupy,transpose,convsep] [--pairs N]

Applications: (a) examples/profile/torch_train.py (a small MLP of our own, PyTorch), (b)
examples/profile/cupy_rawkernel.py (CuPy RawKernel, an uncoalesced kernel, small pageable copies),
(c) NVIDIA cuda-samples' 6_Performance/transpose (eight kernels of 2.6-20 us) and
2_Concepts_and_Techniques/convolutionSeparable (two kernels of tens of us), built here with nvcc
-lineinfo (sources not committed). For each:

* ``<app>_trace.json``: `cudalens profile --format json` with ncu made unavailable (CUDALENS_NCU=none),
  and its raw trace ``<app>_trace.tsv`` (the CPU tests' fixtures come from these);
* ``<app>_counters.json``: the same with ``--counters`` (Nsight Compute on the top kernels);
* ``<app>_ncu.csv`` / ``<app>_ncu_nocache.csv``: ncu over the whole program, every kernel,
  gpu__time_duration.sum (--clock-control none; ncu's default cache control, which flushes the caches
  before each kernel, and --cache-control none), and ``compare_ncu`` / ``compare_ncu_nocache`` in
  profile_gpu.json: each top kernel's share of kernel time from the trace against its share of ncu's
  summed gpu__time_duration (different runs of the same command).

Overhead (a): the program alone and under `cudalens profile` (trace mode), interleaved, wall time of
the process and the program's own loop time, medians.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(cmd: list[str], timeout: float, env: dict | None = None) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT, check=False)
        return p.returncode, p.stdout + p.stderr, time.perf_counter() - t0
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return 124, out + "\n[timeout]", time.perf_counter() - t0


def ncu_shares(csv_text: str) -> dict[str, float]:
    """Summed gpu__time_duration (ns) per mangled kernel name from ncu's raw CSV."""
    lines = [ln for ln in csv_text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows:
        return {}
    head = rows[0]
    col_name, col_t = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    sums: dict[str, float] = {}
    for r in rows[1:]:
        if not r[0].strip().isdigit():
            continue
        sums[r[col_name]] = sums.get(r[col_name], 0.0) + float(r[col_t].replace(",", ""))
    return sums


def compare(report: dict, ncu: dict[str, float], top: int = 8) -> list[dict]:
    total_ncu = sum(ncu.values()) or 1.0
    out = []
    for k in report["kernels"][:top]:
        n = ncu.get(k["symbol"])
        share_ncu = None if n is None else n / total_ncu
        out.append({"kernel": k["name"], "symbol": k["symbol"][:120], "launches": k["launches"],
                    "trace_share": k["share"], "ncu_share": share_ncu,
                    "abs_diff_pct_points": None if share_ncu is None else 100 * abs(k["share"] - share_ncu),
                    "trace_total_s": k["total_s"], "ncu_total_s": None if n is None else n * 1e-9})
    return out


def compare_files(out: str, name: str, tag: str) -> list[dict] | str:
    """The trace report's top kernels against the saved ncu CSV of the same command."""
    try:
        with open(f"{out}/{name}_trace.json") as fh:
            rep = json.load(fh)
        with open(f"{out}/{name}_{tag}.csv") as fh:
            return compare(rep, ncu_shares(fh.read()))
    except Exception as exc:  # noqa: BLE001
        return f"failed: {type(exc).__name__}: {exc}"


def recompare(out: str) -> int:
    """``--recompare DIR``: redo the comparisons from the files a run saved (no GPU needed)."""
    with open(f"{out}/profile_gpu.json") as fh:
        result = json.load(fh)
    apps = sorted({f.split("_trace.json")[0] for f in os.listdir(out) if f.endswith("_trace.json")})
    for tag in ("ncu", "ncu_nocache"):
        result[f"compare_{tag}"] = {a: compare_files(out, a, tag) for a in apps if os.path.exists(f"{out}/{a}_{tag}.csv")}
    with open(f"{out}/profile_gpu.json", "w") as fh:
        json.dump(result, fh, indent=2)
    return 0


def main() -> int:
    if sys.argv[1] == "--recompare":
        return recompare(sys.argv[2])
    out = sys.argv[1]
    samples = sys.argv[sys.argv.index("--samples") + 1] if "--samples" in sys.argv else ".carry/cuda-samples"
    os.makedirs(out, exist_ok=True)
    py = sys.executable
    result: dict = {"script": "benchmarks/profile/profile_gpu.py", "date_utc": datetime.now(timezone.utc).isoformat(),
                    "python": py, "steps": {}}
    rc, txt, _ = sh(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem", "--format=csv"], 30)
    result["nvidia_smi"] = txt.strip()
    result["ncu"] = shutil.which("ncu")
    # (c) cuda-samples binaries, built here (sources not committed)
    builds = {
        "transpose": ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-I", f"{samples}/Common", "-o", "/tmp/transpose",
                      f"{samples}/Samples/6_Performance/transpose/transpose.cu"],
        "convsep": ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-I", f"{samples}/Common", "-o", "/tmp/convsep"]
        + [f"{samples}/Samples/2_Concepts_and_Techniques/convolutionSeparable/{f}"
           for f in ("main.cpp", "convolutionSeparable.cu", "convolutionSeparable_gold.cpp")],
    }
    for name, cmd in builds.items():
        rc, txt, dt = sh(cmd, 240)
        result["steps"][f"build_{name}"] = {"rc": rc, "s": dt, "tail": txt[-400:]}
    inc = ["-I", f"{samples}/Common"]
    apps = {  # name: (command, trace-mode options, counters-mode options)
        "torch": ([py, "examples/profile/torch_train.py", "20"], [], ["--counters-top", "2"]),
        # (b): the matrix size the program passes, for the static model in trace mode; the counters run goes
        # without it (the counters establish the access pattern)
        "cupy": ([py, "examples/profile/cupy_rawkernel.py", "30"], ["-D", "cols=1024", "-D", "rows=8192"], []),
        "transpose": (["/tmp/transpose"], ["--source", f"{samples}/Samples/6_Performance/transpose/transpose.cu",
                                           *inc, "-D", "width=1024", "-D", "height=1024"],
                      ["--source", f"{samples}/Samples/6_Performance/transpose/transpose.cu", *inc]),
        "convsep": (["/tmp/convsep"], ["--source",
                                       f"{samples}/Samples/2_Concepts_and_Techniques/convolutionSeparable/"
                                       "convolutionSeparable.cu", *inc], ["--counters-top", "2"]),
    }
    only = sys.argv[sys.argv.index("--apps") + 1].split(",") if "--apps" in sys.argv else list(apps)
    apps = {k: v for k, v in apps.items() if k in only}
    env_no_ncu = {**os.environ, "CUDALENS_NCU": "none"}
    cl = [py, "-m", "cudalens", "profile"]
    for name, (cmd, trace_opts, counter_opts) in apps.items():
        rc, txt, dt = sh(cl + trace_opts + ["--format", "json", "-o", f"{out}/{name}_trace.json", "--keep-trace",
                                            f"{out}/{name}_trace.tsv", "--", *cmd], 200, env_no_ncu)
        result["steps"][f"{name}_trace"] = {"rc": rc, "s": dt, "tail": txt[-1500:]}
        print(f"{name} trace rc={rc} {dt:.1f}s", txt[-300:], flush=True)
        rc, txt, dt = sh(cl + counter_opts + ["--counters", "--format", "json", "-o", f"{out}/{name}_counters.json",
                                              "--", *cmd], 240)
        result["steps"][f"{name}_counters"] = {"rc": rc, "s": dt, "tail": txt[-1500:]}
        print(f"{name} counters rc={rc} {dt:.1f}s", txt[-300:], flush=True)
        # ncu over every kernel of the same command: its default cache control (flush before each kernel)
        # and --cache-control none (caches as the program left them, as in the traced run)
        for tag, extra in (("ncu", []), ("ncu_nocache", ["--cache-control", "none"])):
            rc, txt, dt = sh(["ncu", "--clock-control", "none", *extra, "--csv", "--page", "raw", "--print-units",
                              "base", "--print-kernel-base", "mangled", "--metrics", "gpu__time_duration.sum", *cmd],
                             240)
            with open(f"{out}/{name}_{tag}.csv", "w") as fh:
                fh.write("\n".join(ln for ln in txt.splitlines() if ln.startswith('"')))
            result["steps"][f"{name}_{tag}"] = {"rc": rc, "s": dt, "tail": txt[-300:] if rc else ""}
            print(f"{name} {tag} rc={rc} {dt:.1f}s", flush=True)
            result.setdefault(f"compare_{tag}", {})[name] = compare_files(out, name, tag)
        with open(f"{out}/profile_gpu.json", "w") as fh:  # saved after each application
            json.dump(result, fh, indent=2)
    # HTML and SARIF of each counters-mode report (rendered from its JSON)
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from cudalens.report.profile_html import render_html, sarif_log

    for name in apps:
        try:
            with open(f"{out}/{name}_counters.json") as fh:
                rep = json.load(fh)
            with open(f"{out}/{name}_counters.html", "w") as fh:
                fh.write(render_html(rep))
            with open(f"{out}/{name}_counters.sarif", "w") as fh:
                json.dump(sarif_log(rep), fh, indent=1)
        except Exception as exc:  # noqa: BLE001
            result["steps"][f"{name}_html"] = f"failed: {type(exc).__name__}: {exc}"
    # error paths on the GPU machine
    for name in ("no_kernel", "crashes"):
        rc, txt, dt = sh(cl + ["--", py, f"examples/profile/{name}.py"], 120)
        result["steps"][f"error_{name}"] = {"rc": rc, "s": dt, "tail": txt[-400:]}
    # overhead on (a)
    loop = re.compile(r"steps, last loss [-0-9.]+, ([0-9.]+) s")
    alone, traced = [], []
    steps = "30"
    pairs = int(sys.argv[sys.argv.index("--pairs") + 1]) if "--pairs" in sys.argv else 4
    for _ in range(pairs):
        rc, txt, dt = sh([py, "examples/profile/torch_train.py", steps], 120)
        m = loop.search(txt)
        alone.append({"rc": rc, "wall_s": dt, "loop_s": float(m.group(1)) if m else None})
        rc, txt, dt = sh(cl + ["--format", "json", "-o", "/tmp/ovh.json", "--", py, "examples/profile/torch_train.py",
                               steps], 150, env_no_ncu)
        m = loop.search(txt)
        try:
            with open("/tmp/ovh.json") as fh:
                prog_wall = json.load(fh)["wall_s"]  # the traced program's own process, without the analysis
        except Exception:  # noqa: BLE001
            prog_wall = None
        traced.append({"rc": rc, "wall_s": dt, "loop_s": float(m.group(1)) if m else None,
                       "traced_program_wall_s": prog_wall})
    def med(rows, key):
        vals = [r[key] for r in rows if r[key] is not None]
        return statistics.median(vals) if vals else None
    result["overhead"] = {"steps": int(steps), "alone": alone, "traced": traced,
                          "wall_ratio": (med(traced, "wall_s") / med(alone, "wall_s")) if med(alone, "wall_s") else None,
                          "loop_ratio": (med(traced, "loop_s") / med(alone, "loop_s")) if med(alone, "loop_s") else None,
                          "traced_program_wall_ratio": (med(traced, "traced_program_wall_s") / med(alone, "wall_s"))
                          if med(alone, "wall_s") and med(traced, "traced_program_wall_s") else None}
    print(json.dumps(result["overhead"], indent=1), flush=True)
    with open(f"{out}/profile_gpu.json", "w") as fh:
        json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
