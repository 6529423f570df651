"""Compare step of benchmarks/realworld/realworld_validate.py (CPU): the compiled access model's per-line
predictions for each profiled kernel, with the plan's launch, against the H100's per-instruction
counters (cudalens.profile.ncu_source), one row per (kernel, source line, quantity).

Usage: python3 benchmarks/realworld/realworld_validate.py compare ROOT RUNDIR RESULTDIR
  ROOT: the build (PTX, plan.json); RUNDIR: what _realworld_driver.py wrote (driver.json, source/).
Writes RESULTDIR/table.json (every row), RESULTDIR/summary.json and RESULTDIR/table.md.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import time
from pathlib import Path

from cudalens.access.ptx_eval import evaluate
from cudalens.compiled.ptx import parse_ptx
from cudalens.profile.ncu_source import check_lines, line_counters, parse_source_csv

MAX_BLOCKS = 32
LOOP_CAP = 16  # iterations per loop entry the model runs (a user's --loop-cap)
MAX_STEPS = 60000


def _blocks(grid: list[int]) -> tuple[tuple[int, int, int], ...]:
    allb = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    if len(allb) <= MAX_BLOCKS:
        return tuple(allb)
    step = len(allb) / MAX_BLOCKS
    pick = sorted({allb[int(i * step)] for i in range(MAX_BLOCKS)} | {allb[-1]})
    return tuple(pick)


def _params(k: dict) -> dict:
    out = {}
    for i, p in enumerate(k["params"]):
        if p["kind"] == "ptr":
            continue
        out[i] = bytes(p["size"]) if p["kind"] == "bytes" else p["value"]
    return out


def sass_lds(root: Path, cubin: str) -> dict[str, dict[str, dict[int, dict[int, int]]]]:
    """Per kernel (mangled), for "ld" (LDS) and "st" (STS): source line -> {bytes per lane:
    instructions}, from nvdisasm."""
    from cudalens.compiled.sass import parse_nvdisasm
    from cudalens.compiled.toolchain import discover

    tc = discover()
    p = subprocess.run([tc.get("nvdisasm").path, "-gi", "-c", str(root / cubin)], capture_output=True, text=True,
                       env=tc.env(), timeout=300)
    out: dict[str, dict[str, dict[int, dict[int, int]]]] = {}
    for name, fs in parse_nvdisasm(p.stdout, None).items():
        per: dict[str, dict[int, dict[int, int]]] = {"ld": {}, "st": {}}
        for ins in fs.instructions:
            if ins.line is None or ins.klass is None:
                continue
            if ins.klass.startswith("lds."):
                kind, w = "ld", int(ins.klass.split(".")[1]) // 8
            elif ins.klass == "sts":
                mods = ins.opcode.split(".")[1:]
                kind, w = "st", next((int(x) // 8 for x in mods if x in ("64", "128")), 4)
            else:
                continue
            per[kind].setdefault(ins.line, {}).setdefault(w, 0)
            per[kind][ins.line][w] += 1
        out[name] = per
    return out


def compare_main(argv: list[str]) -> int:
    root, rundir, resdir = Path(argv[0]), Path(argv[1]), Path(argv[2])
    resdir.mkdir(parents=True, exist_ok=True)
    plan = json.loads((root / "plan.json").read_text())
    driver = json.loads((rundir / "driver.json").read_text())
    units = {u["tu"]: u for u in plan["units"]}
    rows = []
    for f in sorted((rundir / "source").glob("*.cuda_sass.csv")):
        rows += parse_source_csv(f.read_text(errors="replace"))
    counters = line_counters(rows)
    modules: dict[str, object] = {}
    lds: dict[str, dict] = {}
    table, kernels, seconds = [], [], []
    for tu, name in driver["ran"]:
        if not any(key[0] == name for key in counters):
            continue
        if (tu, name) in {(k["tu"], k["kernel"]) for k in kernels}:
            continue
        u = units.get(tu)
        if u is None or not (root / u["ptx"]).exists():
            continue
        if tu not in modules:
            modules[tu] = parse_ptx((root / u["ptx"]).read_text(errors="replace"))
            lds[tu] = sass_lds(root, u["cubin"])
        mod = modules[tu]
        fn = mod.function(name)
        k = next(x for x in u["kernels"] if x["name"] == name)
        t0 = time.perf_counter()
        try:
            sh = lds[tu].get(name, {})
            ev = evaluate(mod, fn, tuple(k["block"]), tuple(k["grid"]), _params(k), blocks=_blocks(k["grid"]),
                          loop_cap=LOOP_CAP, max_steps=MAX_STEPS, sass_lds=sh.get("ld"), sass_sts=sh.get("st"))
            preds, notes = ev.predictions, list(ev.notes)
        except Exception as exc:  # noqa: BLE001 - a model failure is a result to report, not a crash
            preds, notes = (), [f"model failed: {type(exc).__name__}: {exc}"]
        seconds.append(time.perf_counter() - t0)
        checks = check_lines(preds, counters, name, files=set(mod.files.values()))
        kernels.append({"tu": tu, "kernel": name, "project": u["project"], "seconds": round(seconds[-1], 3),
                        "notes": notes, "block": k["block"], "grid": k["grid"]})
        for c in checks:
            d = c.to_dict()
            d.update(tu=tu, project=u["project"])
            table.append(d)
    summary = summarize(table, kernels)
    summary["model_seconds_per_kernel_max"] = round(max(seconds, default=0.0), 3)
    summary["model_seconds_total"] = round(sum(seconds), 2)
    summary["device"] = (rundir / "machine.txt").read_text().strip() if (rundir / "machine.txt").exists() else ""
    summary["ncu"] = driver.get("ncu", "")
    summary["launch_failures"] = driver.get("failed", {})
    summary["code_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                            text=True).stdout.strip()
    summary["compare_command"] = ("PYTHONPATH=src python3 benchmarks/realworld/realworld_validate.py compare .carry/realworld "
                                  "RUNDIR RESULTDIR (RUNDIR: driver.json, machine.txt and source_pages.tgz unpacked "
                                  "to source/)")
    summary["compare_date"] = time.strftime("%Y-%m-%d", time.gmtime())
    (resdir / "table.json").write_text(json.dumps({"rows": table, "kernels": kernels}, indent=1))
    (resdir / "summary.json").write_text(json.dumps(summary, indent=1))
    (resdir / "table.md").write_text(markdown(table, summary))
    sys.stdout.write(json.dumps({k: v for k, v in summary.items() if k not in ("launch_failures", "null_reasons")},
                                indent=1) + "\n")
    return 0


def summarize(table: list[dict], kernels: list[dict]) -> dict:
    def stats(rows: list[dict]) -> dict:
        measured = [r for r in rows if r["measured"] is not None]
        pred = [r for r in measured if r["predicted"] is not None or r.get("low") is not None]
        agree = [r for r in pred if r["agree"]]
        ranges = [r for r in pred if r["predicted"] is None]
        return {"measured": len(measured), "predicted": len(pred), "agree": len(agree),
                "predicted_share": round(len(pred) / len(measured), 4) if measured else None,
                "agree_share": round(len(agree) / len(pred), 4) if pred else None,
                "predicted_as_range": len(ranges), "agree_as_range": sum(1 for r in ranges if r["agree"]),
                "agree_as_number": len(agree) - sum(1 for r in ranges if r["agree"])}

    public = [r for r in table if r["project"] != "own"]
    out = {"all_public": stats(public), "own": stats([r for r in table if r["project"] == "own"]),
           "by_project": {p: stats([r for r in public if r["project"] == p]) for p in sorted({r["project"] for r in public})},
           "by_quantity": {q: stats([r for r in public if r["quantity"] == q]) for q in sorted({r["quantity"] for r in public})},
           "kernels_public": len({(k["tu"], k["kernel"]) for k in kernels if k["project"] != "own"}),
           "kernels_by_project": dict(collections.Counter(k["project"] for k in kernels))}
    reasons = collections.Counter(r["reason"].split(" at line")[0][:90] for r in public
                                  if r["measured"] is not None and r["predicted"] is None and r.get("low") is None)
    out["null_reasons"] = dict(reasons.most_common())
    return out


def markdown(table: list[dict], summary: dict) -> str:
    s = summary["all_public"]
    lines = ["# Compiled access model vs Nsight Compute per-instruction counters (per source line)", "",
             f"Public code: {summary['kernels_public']} kernels; {s['measured']} measured quantities, "
             f"{s['predicted']} predicted ({s['predicted_share']}), {s['agree']} agree ({s['agree_share']}).", "",
             "| project | kernel | line | quantity | predicted | measured | agree | reason |", "|---|---|---|---|---|---|---|---|"]
    for r in table:
        pred = r["predicted"] if r.get("low") is None else f"{r['low']}..{r['high']}"
        lines.append(f"| {r['project']} | `{r['kernel'][:48]}` | {Path(r['file']).name}:{r['line']} | {r['quantity']} | "
                     f"{pred} | {r['measured']} | {r['agree']} | {r['reason'][:80]} |")
    return "\n".join(lines) + "\n"
