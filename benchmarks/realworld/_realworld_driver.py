"""GPU side of benchmarks/realworld/realworld_validate.py: launch the planned kernels under Nsight Compute with
per-instruction counters and export the source pages.

Usage: python3 benchmarks/realworld/_realworld_driver.py ROOT OUTDIR [--budget SECONDS] [--per-tu N]

1. Selection: per translation unit at most N kernels (default 3; distinct names first), every kernel
   of SGEMM_CUDA and of our own fixture file.
2. Pre-check (no profiler): the selected kernels run in one child process; one that faults or hangs
   (20 s without progress) is recorded with the reason and left out, and the rest go on in a new one.
3. ``ncu --section SourceCounters --clock-control none`` over the kernels that ran, in batches of 40
   (one report each), until the time budget is spent; then per report ``ncu --import --csv --page
   source --print-source cuda,sass`` (each source line's row, then its SASS rows), names mangled.
Writes OUTDIR/source/*.csv and OUTDIR/driver.json.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
LAUNCH = HERE / "_realworld_launch.py"
BATCH = 40


def select(plan: dict, per_tu: int) -> list[list[str]]:
    out = []
    first = ("own", "SGEMM_CUDA", "code-samples")
    for u in sorted(plan["units"], key=lambda u: (first.index(u["project"]) if u["project"] in first else 9)):
        ks = [k for k in u["kernels"] if "skip" not in k]
        if u["project"] not in ("SGEMM_CUDA", "own"):
            seen, pick = set(), []
            for k in ks:
                if k["base"] not in seen:
                    seen.add(k["base"])
                    pick.append(k)
            ks = (pick + [k for k in ks if k not in pick])[:per_tu]
        out += [[u["tu"], k["name"]] for k in ks]
    return out


def _run_list(root: Path, todo: list[list[str]], quiet: float) -> tuple[list[list[str]], str | None, str]:
    """Launch ``todo`` in one process, killed after ``quiet`` seconds without a line of progress:
    (ran, the one that failed, why)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(todo, f)
    proc = subprocess.Popen([sys.executable, str(LAUNCH), str(root), f.name], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] and None, daemon=True).start()
    ran, started, hung = [], None, False
    last = time.time()
    while True:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            if proc.poll() is not None and lines.empty():
                break
            if time.time() - last > quiet:
                proc.kill()
                hung = True
                break
            continue
        last = time.time()
        parts = line.split()
        if len(parts) == 3 and parts[0] == "START":
            started = parts[1:]
        elif len(parts) == 3 and parts[0] == "OK":
            ran.append(parts[1:])
            started = None
    proc.wait()
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode == 0 and not hung:
        return ran, None, ""
    why = f"no progress within {quiet:.0f} s (hang or very long run)" if hung else (
        (err.strip().splitlines() or [""])[-1][:200] or f"exit {proc.returncode}")
    return ran, (started[1] if started else None), why


def precheck(root: Path, todo: list[list[str]], t_end: float) -> tuple[list[list[str]], dict[str, str]]:
    ok: list[list[str]] = []
    failed: dict[str, str] = {}
    rest = list(todo)
    while rest and time.time() < t_end:
        ran, bad, why = _run_list(root, rest, 8.0)
        ok += ran
        done = {tuple(x) for x in ran}
        rest = [x for x in rest if tuple(x) not in done]
        if bad is None:
            if rest and why:
                failed.update({x[1]: f"launcher: {why}" for x in rest})
                rest = []
            continue
        failed[bad] = why
        rest = [x for x in rest if x[1] != bad]
    for x in rest:
        failed.setdefault(x[1], "not checked (time budget)")
    return ok, failed


def main(argv: list[str]) -> int:
    root, out = Path(argv[0]), Path(argv[1])
    budget = float(argv[argv.index("--budget") + 1]) if "--budget" in argv else 420.0
    per_tu = int(argv[argv.index("--per-tu") + 1]) if "--per-tu" in argv else 3
    (out / "source").mkdir(parents=True, exist_ok=True)
    reports = Path(tempfile.mkdtemp(prefix="rw-reports-"))
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    plan = json.loads((root / "plan.json").read_text())
    t0 = time.time()
    log: dict = {"ncu": subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip()}
    todo = select(plan, per_tu)
    log["selected"] = len(todo)
    ok, failed = precheck(root, todo, t0 + budget * 0.35)
    log["precheck_seconds"] = round(time.time() - t0, 1)
    log["ran"], log["failed"] = ok, failed
    sys.stdout.write(f"precheck: {len(ok)} ran, {len(failed)} failed ({log['precheck_seconds']} s)\n")
    sys.stdout.flush()
    pool = ThreadPoolExecutor(12)
    futures = []

    def export(rep: Path, tag: str, names: list[str]) -> None:
        base = [ncu, "--import", str(rep), "--csv", "--page", "source", "--print-kernel-base", "mangled"]
        p = subprocess.run([*base, "--print-source", "cuda,sass"], capture_output=True, text=True, timeout=300)
        (out / "source" / f"{tag}.cuda_sass.csv").write_text(p.stdout + (f"\n# stderr: {p.stderr}" if p.stderr else ""))

    batches = [ok[i:i + BATCH] for i in range(0, len(ok), BATCH)]
    log["batches"] = []
    for b, batch in enumerate(batches):
        if time.time() - t0 > budget:
            log["batches"].append({"batch": b, "not_run": "time budget", "kernels": batch})
            continue
        rep = reports / f"b{b:02d}.ncu-rep"
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(batch, f)
        cmd = [ncu, "--section", "SourceCounters", "--clock-control", "none", "--import-source", "no",
               "--force-overwrite", "-o", str(rep), sys.executable, str(LAUNCH), str(root), f.name]
        t1 = time.time()
        entry: dict = {"batch": b, "kernels": batch}
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=max(30.0, budget - (t1 - t0) + 30))
            entry["rc"] = p.returncode
            entry["tail"] = (p.stdout + p.stderr)[-800:]
        except subprocess.TimeoutExpired:
            entry["rc"] = "timeout"
        entry["seconds"] = round(time.time() - t1, 1)
        log["batches"].append(entry)
        if rep.exists():
            futures.append(pool.submit(export, rep, f"b{b:02d}", [k[1] for k in batch]))
        sys.stdout.write(f"batch {b}: {len(batch)} kernels, rc {entry['rc']}, {entry['seconds']} s "
                         f"(t={time.time() - t0:.0f} s)\n")
        sys.stdout.flush()
        (out / "driver.json").write_text(json.dumps(log, indent=1))
    for fut in futures:
        try:
            fut.result()
        except Exception as exc:  # noqa: BLE001 - one export failing must not lose the others
            log.setdefault("export_errors", []).append(str(exc)[:200])
    log["seconds"] = round(time.time() - t0, 1)
    (out / "driver.json").write_text(json.dumps(log, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
