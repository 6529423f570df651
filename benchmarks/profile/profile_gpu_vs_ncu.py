"""`cudalens profile` on a GPU, session 4: shares against ncu with the same cache state, the transpose gap,
the whole command's overhead before and after lazy CLI loading, the read-back fixture, child processes.

Usage (repository root, GPU machine):
    python3 benchmarks/profile/profile_gpu_vs_ncu.py OUTDIR [--samples DIR] [--before SRC] [--pairs N] [--budget S]
    python3 benchmarks/profile/profile_gpu_vs_ncu.py --analyze OUTDIR   (no GPU: per-launch ncu - trace offsets)

* For each application of benchmarks/profile/profile_gpu.py (torch, cupy, transpose, convsep): a trace-mode
  profile (``<app>_trace.json``, raw trace ``<app>_trace.tsv``) and ncu over the same command with every
  kernel's gpu__time_duration, ``--cache-control none --clock-control none`` (``<app>_ncu_nocache.csv``):
  caches as the program leaves them, the clocks as the GPU runs them, as in the traced run.
* transpose, to find why its shares differ: the trace with ``CUDA_LAUNCH_BLOCKING=1`` (each launch waits
  for the previous kernel, so every kernel starts on an idle GPU, as under ncu, which serializes the
  launches), and ncu with the SM and DRAM clock rates measured during each kernel.
* Child processes: examples/profile/child_process.py (a Python child using CuPy) and a shell running
  convolutionSeparable twice (native children, injection library).
* Overhead on (a), examples/profile/torch_train.py 30: the program alone, the whole `cudalens profile`
  command with this tree's src (lazy CLI) and with ``--before SRC`` (the tree before this session's
  change), rotating the order each round; wall time of each process and the program's own loop time.
  Also ``python -X importtime`` of the command's start with each src.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_gpu import ROOT, compare, ncu_shares, sh  # noqa: E402

NCU = ["ncu", "--clock-control", "none", "--cache-control", "none", "--csv", "--page", "raw", "--print-units",
       "base", "--print-kernel-base", "mangled"]


def arg(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def ncu_metric_means(csv_text: str, metric: str) -> dict[str, float]:
    """Mean of one metric per kernel name from ncu's raw CSV."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO("\n".join(ln for ln in csv_text.splitlines() if ln.startswith('"')))))
    if not rows or metric not in rows[0]:
        return {}
    head = rows[0]
    cn, cm = head.index("Kernel Name"), head.index(metric)
    acc: dict[str, list[float]] = {}
    for r in rows[1:]:
        if r[0].strip().isdigit():
            acc.setdefault(r[cn], []).append(float(r[cm].replace(",", "")))
    return {k: statistics.mean(v) for k, v in acc.items()}


def per_launch_offsets(out: str) -> dict:
    """``--analyze DIR`` (no GPU): per kernel, ncu's mean gpu__time_duration per launch minus the trace's,
    for every application; and transpose's shares with one constant per-launch offset (the median over its
    kernels) taken off ncu's sums -- a check that a fixed per-launch difference explains its gap."""
    res: dict = {}
    for app in ("torch", "cupy", "transpose", "convsep", "transpose_blocking"):
        try:
            with open(f"{out}/{app}_trace.json") as fh:
                rep = json.load(fh)
            with open(f"{out}/{app.split('_')[0]}_ncu_nocache.csv") as fh:
                ncu_ns = ncu_shares(fh.read())
        except OSError:
            continue
        res[app] = [{"kernel": k["name"], "launches": k["launches"], "trace_us": k["total_s"] / k["launches"] * 1e6,
                     "ncu_us": ncu_ns[k["symbol"]] / k["launches"] * 1e-3,
                     "offset_us": ncu_ns[k["symbol"]] / k["launches"] * 1e-3 - k["total_s"] / k["launches"] * 1e6}
                    for k in rep["kernels"][:10] if k["symbol"] in ncu_ns]
    if res.get("transpose"):
        with open(f"{out}/transpose_trace.json") as fh:
            rep = json.load(fh)
        with open(f"{out}/transpose_ncu_nocache.csv") as fh:
            ncu_ns = ncu_shares(fh.read())
        c = statistics.median(r["offset_us"] for r in res["transpose"]) * 1e3
        adj = {k: v - c * next(r["launches"] for r in rep["kernels"] if r["symbol"] == k) for k, v in ncu_ns.items()}
        res["transpose_offset_removed"] = {"offset_ns": c, "compare": compare(rep, adj)}
    return res


def main() -> int:
    if sys.argv[1] == "--analyze":
        path = f"{sys.argv[2]}/profile_gpu_vs_ncu.json"
        with open(path) as fh:
            result = json.load(fh)
        result["per_launch_offsets"] = per_launch_offsets(sys.argv[2])
        with open(path, "w") as fh:
            json.dump(result, fh, indent=2)
        return 0
    out = sys.argv[1]
    samples = arg("--samples", ".carry/cuda-samples")
    before = os.path.abspath(arg("--before", ".carry/s4_before/src"))
    pairs = int(arg("--pairs", "4"))
    budget = float(arg("--budget", "330"))
    t_start = time.perf_counter()
    os.makedirs(out, exist_ok=True)
    py = sys.executable
    result: dict = {"script": "benchmarks/profile/profile_gpu_vs_ncu.py", "date_utc": datetime.now(timezone.utc).isoformat(),
                    "python": py, "steps": {}}
    _, txt, _ = sh(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem",
                    "--format=csv"], 30)
    result["nvidia_smi"] = txt.strip()
    result["ncu_version"] = sh(["ncu", "--version"], 30)[1].strip()[-80:]

    def save() -> None:
        with open(f"{out}/profile_gpu_vs_ncu.json", "w") as fh:
            json.dump(result, fh, indent=2)

    common = f"{samples}/Common"
    tr_src = f"{samples}/Samples/6_Performance/transpose/transpose.cu"
    cs_dir = f"{samples}/Samples/2_Concepts_and_Techniques/convolutionSeparable"
    for name, cmd in {"transpose": ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-I", common, "-o", "/tmp/transpose",
                                    tr_src],
                      "convsep": ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-I", common, "-o", "/tmp/convsep",
                                  *(f"{cs_dir}/{f}" for f in ("main.cpp", "convolutionSeparable.cu",
                                                              "convolutionSeparable_gold.cpp"))]}.items():
        rc, txt, dt = sh(cmd, 240)
        result["steps"][f"build_{name}"] = {"rc": rc, "s": round(dt, 1), "tail": txt[-300:] if rc else ""}
    env_new = {**os.environ, "CUDALENS_NCU": "none", "PYTHONUNBUFFERED": "1"}
    cl = [py, "-m", "cudalens", "profile"]
    apps = {
        "torch": ([py, "examples/profile/torch_train.py", "20"], []),
        "cupy": ([py, "examples/profile/cupy_rawkernel.py", "30"], ["-D", "cols=1024", "-D", "rows=8192"]),
        "transpose": (["/tmp/transpose"], ["--source", tr_src, "-I", common, "-D", "width=1024", "-D", "height=1024"]),
        "convsep": (["/tmp/convsep"], ["--source", f"{cs_dir}/convolutionSeparable.cu", "-I", common]),
    }

    def trace(name: str, cmd: list[str], opts: list[str], env: dict) -> None:
        rc, txt, dt = sh(cl + opts + ["--format", "json", "-o", f"{out}/{name}_trace.json", "--keep-trace",
                                      f"{out}/{name}_trace.tsv", "--", *cmd], 200, env)
        result["steps"][f"{name}_trace"] = {"rc": rc, "s": round(dt, 1), "tail": txt[-600:]}
        print(f"{name} trace rc={rc} {dt:.1f}s", flush=True)

    def ncu(name: str, cmd: list[str], metrics: str) -> dict[str, float]:
        rc, txt, dt = sh([*NCU, "--metrics", metrics, *cmd], 240)
        keep = "\n".join(ln for ln in txt.splitlines() if ln.startswith('"'))
        with open(f"{out}/{name}.csv", "w") as fh:
            fh.write(keep)
        result["steps"][name] = {"rc": rc, "s": round(dt, 1), "tail": txt[-300:] if rc else ""}
        print(f"{name} rc={rc} {dt:.1f}s", flush=True)
        return ncu_shares(keep)

    def compared(name: str, shares: dict[str, float]) -> object:
        try:
            with open(f"{out}/{name}_trace.json") as fh:
                return compare(json.load(fh), shares)
        except Exception as exc:  # noqa: BLE001
            return f"failed: {type(exc).__name__}: {exc}"

    for name, (cmd, opts) in apps.items():
        trace(name, cmd, opts, env_new)
        shares = ncu(f"{name}_ncu_nocache", cmd, "gpu__time_duration.sum")
        result.setdefault("compare_ncu_nocache", {})[name] = compared(name, shares)
        save()
    # transpose: serialized launches in the traced run, and the clocks ncu's kernels ran at
    cmd, opts = apps["transpose"]
    trace("transpose_blocking", cmd, opts, {**env_new, "CUDA_LAUNCH_BLOCKING": "1"})
    with open(f"{out}/transpose_ncu_nocache.csv") as fh:
        result["compare_blocking_vs_ncu_nocache"] = compared("transpose_blocking", ncu_shares(fh.read()))
    ncu("transpose_ncu_clocks", cmd, "gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,"
        "dram__cycles_elapsed.avg.per_second,gpc__cycles_elapsed.max")
    with open(f"{out}/transpose_ncu_clocks.csv") as fh:
        text = fh.read()
    result["transpose_ncu_clocks"] = {m: ncu_metric_means(text, m) for m in (
        "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.avg.per_second",
        "gpc__cycles_elapsed.max")}
    save()
    # child processes
    for name, cmd in (("child_python", [py, "examples/profile/child_process.py"]),
                      ("child_native", ["sh", "-c", "/tmp/convsep > /dev/null && /tmp/convsep > /dev/null"])):
        rc, txt, dt = sh(cl + ["--format", "json", "-o", f"{out}/{name}.json", "--keep-trace", f"{out}/{name}.tsv",
                               "--", *cmd], 120, env_new)
        notes = None
        try:
            with open(f"{out}/{name}.json") as fh:
                notes = json.load(fh)["notes"]
        except Exception as exc:  # noqa: BLE001
            notes = f"failed: {type(exc).__name__}: {exc}"
        result["steps"][name] = {"rc": rc, "s": round(dt, 1), "tail": txt[-600:], "notes": notes,
                                 "files": sorted(f for f in os.listdir(out) if f.startswith(f"{name}.tsv"))}
        print(name, rc, notes, flush=True)
    save()
    # start-up imports of the command, this tree's src and the one before
    for tag, src in (("new", os.path.join(ROOT, "src")), ("before", before)):
        env = {**env_new, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
        rc, txt, dt = sh([py, "-X", "importtime", "-m", "cudalens", "profile", "--help"], 60, env)
        with open(f"{out}/importtime_{tag}.txt", "w") as fh:
            fh.write(txt)
        times = [dt]
        for _ in range(2):
            times.append(sh([py, "-m", "cudalens", "profile", "--help"], 60, env)[2])
        result[f"help_wall_s_{tag}"] = times
    save()
    # overhead on (a): alone, the whole command (new src), the whole command (before), rotating the order
    loop = re.compile(r"steps, last loss [-0-9.]+, ([0-9.]+) s")
    prog = [py, "examples/profile/torch_train.py", "30"]
    rows: dict[str, list[dict]] = {"alone": [], "new": [], "before": []}
    order = ["alone", "new", "before"]
    for i in range(pairs):
        if time.perf_counter() - t_start > budget:
            result["overhead_note"] = f"stopped after {i} rounds (time budget {budget} s)"
            break
        for tag in order[i % 3:] + order[: i % 3]:
            if tag == "alone":
                cmd, env = prog, env_new
            else:
                src = os.path.join(ROOT, "src") if tag == "new" else before
                cmd = cl + ["--format", "json", "-o", f"/tmp/ovh_{tag}.json", "--", *prog]
                env = {**env_new, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
            rc, txt, dt = sh(cmd, 150, env)
            m = loop.search(txt)
            row = {"rc": rc, "wall_s": dt, "loop_s": float(m.group(1)) if m else None}
            if tag != "alone":
                try:
                    with open(f"/tmp/ovh_{tag}.json") as fh:
                        row["traced_program_wall_s"] = json.load(fh)["wall_s"]
                except Exception:  # noqa: BLE001
                    row["traced_program_wall_s"] = None
            rows[tag].append(row)
            print(tag, rc, round(dt, 2), flush=True)
        save()

    def stat(tag: str, key: str, fn) -> float | None:
        vals = [r[key] for r in rows[tag] if r.get(key) is not None and r["rc"] == 0]
        return fn(vals) if vals else None

    ov: dict = {"steps": 30, **rows}
    for tag in ("new", "before"):
        for fn_name, fn in (("median", statistics.median), ("fastest", min)):
            a, b = stat("alone", "wall_s", fn), stat(tag, "wall_s", fn)
            ov[f"wall_ratio_{tag}_{fn_name}"] = b / a if a and b else None
            p = stat(tag, "traced_program_wall_s", fn)
            ov[f"traced_program_ratio_{tag}_{fn_name}"] = p / a if a and p else None
    result["overhead"] = ov
    save()
    print(json.dumps({k: v for k, v in ov.items() if "ratio" in k}, indent=1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
