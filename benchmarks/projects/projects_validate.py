"""CPU side of the per-line validation through cudalens' own launch resolution (issue #26, point 2).

Takes what ``benchmarks/projects/projects_gpu.py`` measured on the H100 (one tarball: each program's build
and runs, the source page of every run) and, per translation unit the build compiles, runs what a
user runs::

    cudalens analyze UNIT --counters PAGE --format json   (the build's flags; no --block, no --define)

with PAGE the program's source pages joined (every kernel it launched, first launch each). Then per
project: measured lines (kernel, source line, quantity with a measured value), those with a
prediction, those agreeing, the nulls with their reasons, the measured lines the analysis did not
compare and why, and per measured kernel where its launch came from: the ``launch`` object of the
kernel's JSON (``cudalens.project.launches``: ``origin`` launch / user / assumed) where the code
has it, else today's rule (compiled_access: the kernel's launch site in the analyzed file when its
block is known, else 256 threads assumed), said as such in the output.

Usage (repository root)::

    PYTHONPATH=src python3 benchmarks/projects/projects_validate.py TARBALL [--src /work/ext/projects]
        [--out benchmarks/results/h100/projects] [--label NAME] [--cublas-include DIR] [--only P,...]

``--cublas-include``: a folder holding cuBLAS's headers (llm.c's common.h includes them; this
machine's CUDA has none). Writes OUT/summary[_LABEL].json and OUT/rows[_LABEL].json.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from cudalens.compiled.names import base_name_from_mangled
from cudalens.profile.ncu_source import check_lines, line_counters, parse_source_csv

SUBS = ("rodinia", "llmc", "cuda-samples")


def unpack(path: Path) -> Path:
    if path.is_dir():
        return path if (path / "programs.json").exists() else path / "projects_h100"
    d = Path(tempfile.mkdtemp(prefix="projects-in-"))
    with tarfile.open(path) as tar:
        tar.extractall(d, filter="data")
    return d / "projects_h100"


def rel_source(measured: str) -> str | None:
    """A measured file's path under the exported sources ("rodinia/cuda/nw/needle.cu"), or None
    for a file outside them (a CUDA header)."""
    parts = Path(measured).parts
    for i, p in enumerate(parts):
        if p in SUBS:
            return str(Path(*parts[i:]))
    return None


def analyze(unit: Path, flags: list[str], page: Path, extra_inc: list[str], out: Path,
            launch_page: Path | None = None) -> dict[str, Any]:
    """``cudalens analyze`` on one unit as a user runs it: -I folders as -I, every other build flag
    through --nvcc-flag; no --block, no --define. ``launch_page``: the reports' details pages (the
    launch each kernel's counters measured), given as a second --counters."""
    args = [sys.executable, "-m", "cudalens", "analyze", unit.name, "--counters", str(page), "--format", "json",
            "-o", str(out)]
    if launch_page is not None:
        args += ["--counters", str(launch_page)]
    for f in flags:
        if f.startswith("-I"):
            args += ["-I", f[2:]]
        else:
            args.append(f"--nvcc-flag={f}")
    for d in extra_inc:
        args += ["-I", d]
    t0 = time.time()
    p = subprocess.run(args, cwd=unit.parent, capture_output=True, text=True, timeout=1200)
    res: dict[str, Any] = {"command": "cudalens " + " ".join(a if " " not in a else repr(a) for a in args[3:]),
                           "cwd": str(unit.parent), "rc": p.returncode, "seconds": round(time.time() - t0, 1)}
    if p.returncode not in (0, 1) or not out.exists():
        res["error"] = (p.stderr or p.stdout).strip()[-600:]
        return res
    res["json"] = json.loads(out.read_text())
    return res


def launch_origin(kernel: dict[str, Any], sites: dict[str, Any]) -> tuple[str, str]:
    """(found / user / assumed, how that was read) for one analyzed kernel."""
    launch = kernel.get("launch")
    if isinstance(launch, list):
        launch = launch[0] if launch else None
    if isinstance(launch, dict) and launch.get("origin"):
        origin = launch["origin"]
        return ("found" if origin == "launch" else origin), "launch object"
    site = sites.get(kernel["name"])
    if site is not None and site.block_dims:
        return "found", f"today's rule: launch site at line {site.line} of the analyzed file"
    return "assumed", "today's rule: no launch site with a known block in the analyzed file (256 threads)"


def launch_sites(unit: Path, flags: list[str]) -> dict[str, Any]:
    """Today's launch rule (evidence.compiled_access._launch): the first launch site of each kernel
    in the analyzed file."""
    from cudalens.source.parse import parse_file

    defs = tuple((f[2:].partition("=")[0], f[2:].partition("=")[2] or "1") for f in flags if f.startswith("-D"))
    try:
        model = parse_file(unit, defs)
    except Exception:  # noqa: BLE001 - a front-end failure leaves every kernel without a site
        return {}
    out: dict[str, Any] = {}
    for s in model.launch_sites:
        out.setdefault(s.kernel, s)
    return out


def program_rows(prog: dict[str, Any], run_dir: Path, src: Path, work: Path, extra_inc: list[str]) -> dict[str, Any]:
    pages = [r["csv"] for r in prog.get("profiled", []) if r.get("csv")]
    text = "".join((run_dir / c).read_text(errors="replace") + "\n" for c in pages)
    counters = line_counters(parse_source_csv(text)) if text.strip() else {}
    page = work / f"{prog['project']}__{prog['name']}.csv"
    page.write_text(text)
    # the details pages of the same reports, in the same order (the first launch of a kernel wins in both)
    launch_csvs = [r["launch_csv"] for r in prog.get("profiled", []) if r.get("csv") and r.get("launch_csv")
                   and (run_dir / r["launch_csv"]).exists()]
    launch_page = work / f"{prog['project']}__{prog['name']}__launch.csv" if launch_csvs else None
    if launch_page is not None:
        launch_page.write_text("".join((run_dir / c).read_text(errors="replace") + "\n" for c in launch_csvs))
    measured_kernels = sorted({k for (k, *_rest) in counters})
    # every measured row, as check_lines lists them with no prediction at all
    base = [c for k in measured_kernels for c in check_lines((), counters, k) if c.measured is not None]
    checks: dict[tuple, dict] = {}
    units, kernels = [], {}
    for u in prog["units"]:
        unit = src / prog["dir"] / u["file"]
        res = analyze(unit, u["flags"], page, extra_inc if prog["project"] == "llm.c" else [],
                      work / f"{prog['name']}__{Path(u['file']).stem}.json", launch_page)
        d = res.pop("json", None)
        entry = dict(res, unit=f"{prog['dir']}/{u['file']}", flags=u["flags"])
        if d is not None:
            entry["files"] = d.get("files")
            entry["line_checks_summary"] = d.get("line_checks_summary")
            entry["evidence_notes"] = d.get("evidence_notes")
            sites = launch_sites(unit, u["flags"])
            failed = next((f["compile_error"] for f in d.get("files", []) if f.get("compile_error")), None)
            for k in d.get("kernels", []):
                origin, how = launch_origin(k, sites)
                kernels.setdefault(k["name"], {"unit": entry["unit"], "origin": origin, "how": how,
                                               "block": k.get("block"), "launch": k.get("launch"),
                                               "compile_error": failed})
            for c in d.get("line_checks", []):
                if c["measured"] is None:
                    continue
                checks[(c["kernel"], Path(c["file"]).name, c["line"], c["quantity"])] = dict(c, unit=entry["unit"])
        units.append(entry)
    analyzed = {Path(u["file"]).name for u in prog["units"]}
    rows = []
    for b in base:
        key = (b.kernel, Path(b.file).name, b.line, b.quantity)
        rel = rel_source(b.file)
        row = {"project": prog["project"], "program": prog["name"], "kernel": b.kernel, "file": rel or b.file,
               "line": b.line, "quantity": b.quantity, "measured": b.measured, "executed": b.executed,
               "own_source": rel is not None}
        c = checks.get(key)
        if c is not None:
            row.update(predicted=c["predicted"], low=c.get("low"), high=c.get("high"), agree=c["agree"],
                       reason=c["reason"], layer=c["layer"], compared=True)
        else:
            base_name = base_name_from_mangled(b.kernel)
            if base_name not in kernels:
                why = "kernel not among the analyzed units' kernels (defined in a file the unit includes, or not found)"
            elif Path(b.file).name not in analyzed:
                why = ("line of a file the analyzed unit includes, with no comparison from the analysis (no "
                       "prediction of the kernel names that file)")
            elif kernels[base_name].get("compile_error"):
                why = ("the unit did not compile for the analysis (source-only: no line figures): "
                       + kernels[base_name]["compile_error"][-90:])
            else:
                why = "no comparison from the analysis for this line"
            row.update(predicted=None, low=None, high=None, agree=None, reason=why, layer="", compared=False)
        rows.append(row)
    ks = []
    for k in measured_kernels:
        info = kernels.get(base_name_from_mangled(k))
        ks.append({"project": prog["project"], "program": prog["name"], "kernel": k,
                   "origin": info["origin"] if info else "not analyzed", "how": info["how"] if info else
                   "the kernel is not among the analyzed units' kernels", "block": info["block"] if info else None,
                   "launch": info["launch"] if info else None})
    return {"rows": rows, "kernels": ks, "units": units, "pages": pages}


def stats(rows: list[dict]) -> dict[str, Any]:
    pred = [r for r in rows if r["predicted"] is not None or r.get("low") is not None]
    agree = [r for r in pred if r["agree"]]
    nulls = [r for r in rows if r not in pred]
    return {"measured": len(rows), "predicted": len(pred), "agree": len(agree),
            "predicted_share": round(len(pred) / len(rows), 4) if rows else None,
            "agree_share": round(len(agree) / len(pred), 4) if pred else None,
            "as_range": sum(r["predicted"] is None for r in pred),
            # rows whose kernel's profiled launch (details page) is not among the launches the tool found
            "profiled_launch_not_found": sum("not among the launches cudalens found" in (r["reason"] or "")
                                             for r in rows),
            "under_profiled_launch": sum("evaluated under the profiled launch" in (r["reason"] or "") for r in rows),
            "null_reasons": dict(collections.Counter(r["reason"].split(" at line")[0][:110] for r in nulls).most_common())}


def summarize(results: list[dict], machine: dict, label: str) -> dict[str, Any]:
    rows = [r for res in results for r in res["rows"]]
    kernels = [k for res in results for k in res["kernels"]]
    own = [r for r in rows if r["own_source"]]
    out: dict[str, Any] = {"label": label, "all": stats(own), "by_project": {}, "kernels": {}}
    for proj in sorted({r["project"] for r in rows} | {k["project"] for k in kernels}):
        prow = [r for r in own if r["project"] == proj]
        pk = [k for k in kernels if k["project"] == proj]
        origins = collections.Counter(k["origin"] for k in pk)
        out["by_project"][proj] = dict(stats(prow), kernels=len(pk), launch=dict(origins),
                                       launch_found_share=round(origins.get("found", 0) / len(pk), 4) if pk else None,
                                       toolkit_header_rows=sum(1 for r in rows if r["project"] == proj
                                                               and not r["own_source"]),
                                       targets_met=bool(prow) and stats(prow)["predicted_share"] >= 0.9
                                       and (stats(prow)["agree_share"] or 0) >= 0.98)
    out["kernels"] = dict(collections.Counter(k["origin"] for k in kernels))
    out["launch_read_from"] = dict(collections.Counter(k["how"].split(":")[0] for k in kernels))
    out["device"] = machine.get("gpu")
    out["ncu"] = (machine.get("ncu") or "").splitlines()[-1:]
    out["measured_on"] = machine.get("date_utc")
    out["code_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                        text=True).stdout.strip()
    out["code_parents"] = subprocess.run(["git", "rev-parse", "--short", "HEAD^@"], capture_output=True,
                                         text=True).stdout.split()  # two for a scratch merge of branches
    out["computed_on"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return out


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        sys.stderr.write(__doc__.split("Usage")[1])
        return 2

    def opt(name: str, default: str | None) -> str | None:
        return argv[argv.index(name) + 1] if name in argv else default

    run_dir = unpack(Path(argv[0]))
    src = Path(opt("--src", "/work/ext/projects") or "").resolve()
    out = Path(opt("--out", "benchmarks/results/h100/projects") or "")
    label = opt("--label", "") or ""
    inc = opt("--cublas-include", "/work/ext/cublas/nvidia/cu13/include")
    only = set((opt("--only", "") or "").split(",")) - {""}
    extra_inc = [inc] if inc and Path(inc).exists() else []
    out.mkdir(parents=True, exist_ok=True)
    progs = json.loads((run_dir / "programs.json").read_text())
    machine = json.loads((run_dir / "machine.json").read_text())
    work = Path(tempfile.mkdtemp(prefix="projects-cpu-"))
    results = []
    for prog in progs:
        if only and prog["name"] not in only and prog["project"] not in only:
            continue
        if not any(r.get("csv") for r in prog.get("profiled", [])):
            results.append({"rows": [], "kernels": [], "units": [], "pages": [], "program": prog["name"],
                            "project": prog["project"], "not_measured": _why_not(prog)})
            continue
        t0 = time.time()
        res = program_rows(prog, run_dir, src, work, extra_inc)
        res.update(program=prog["name"], project=prog["project"])
        s = stats(res["rows"])
        sys.stdout.write(f"{prog['project']}/{prog['name']}: {s['measured']} measured, {s['predicted']} predicted, "
                         f"{s['agree']} agree; kernels {collections.Counter(k['origin'] for k in res['kernels'])} "
                         f"({time.time() - t0:.0f} s)\n")
        sys.stdout.flush()
        results.append(res)
    summary = summarize(results, machine, label)
    summary["programs"] = [{"project": r["project"], "program": r["program"], **({"not_measured": r["not_measured"]}
                            if "not_measured" in r else {"stats": {k: v for k, v in stats(
                                [x for x in r["rows"] if x["own_source"]]).items() if k != "null_reasons"},
                                "units": [{k: v for k, v in u.items() if k not in ("files",)} for u in r["units"]]})}
                           for r in results]
    summary["command"] = "PYTHONPATH=src python3 benchmarks/projects/projects_validate.py " + " ".join(argv)
    summary["gpu_command"] = machine.get("command")
    tag = f"_{label}" if label else ""
    (out / f"summary{tag}.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / f"rows{tag}.json").write_text(json.dumps({"rows": [r for res in results for r in res["rows"]],
                                                     "kernels": [k for res in results for k in res["kernels"]]},
                                                    indent=0) + "\n")
    write_readme(out)
    sys.stdout.write(json.dumps({k: summary[k] for k in ("all", "kernels", "launch_read_from")}, indent=1) + "\n")
    for proj, s in summary["by_project"].items():
        sys.stdout.write(f"{proj}: {s['measured']} measured, {s['predicted']} predicted ({s['predicted_share']}), "
                         f"{s['agree']} agree ({s['agree_share']}); launches {s['launch']}\n")
    return 0


def write_readme(out: Path) -> None:
    """README.md from every summary*.json in ``out`` (only computed figures)."""
    sums = [json.loads(f.read_text()) for f in sorted(out.glob("summary*.json"))]
    if not sums:
        return
    m = sums[0]
    lines = ["# Per-line validation through cudalens' own launch resolution (H100, public programs' own mains)", "",
             f"Measured on {m['device']} ({' '.join(m['ncu'])}), {m['measured_on']}, with",
             f"`{m['gpu_command']}` (benchmarks/projects/projects_gpu.py): each program built with its own build flags plus",
             "`-lineinfo -arch=sm_90`, run with its own `main` and inputs, the first launch of every kernel profiled",
             "with `ncu --section SourceCounters --clock-control none`; its source page exported as `--counters`",
             "imports it. Then, per unit the build compiles, `cudalens analyze UNIT --counters PAGE --format json`",
             "with the build's flags and no `--block` (benchmarks/projects/projects_validate.py; every command in the",
             "summary's `programs[].units[].command`). A measured line is a (kernel, source line, quantity) with a",
             "measured value in the program's own sources (lines in CUDA's headers are counted apart).", ""]
    for s in sums:
        name = s["label"] or "this branch"
        parents = s.get("code_parents") or []
        merged = f"; a merge of {' and '.join(parents)}" if len(parents) > 1 else ""
        lines += [f"## Code: {name} (commit {s['code_commit']}{merged}, computed {s['computed_on']})", "",
                  "| project | kernels measured | launch found | assumed | not analyzed | measured lines | "
                  "predicted | agree | targets (>= 90 % predicted, >= 98 % agree) |", "|---|---|---|---|---|---|---|---|---|"]
        for proj, p in s["by_project"].items():
            lc = p["launch"]
            lines.append(f"| {proj} | {p['kernels']} | {lc.get('found', 0)} ({_pct(p['launch_found_share'])}) | "
                         f"{lc.get('assumed', 0)} | {lc.get('not analyzed', 0)} | {p['measured']} | {p['predicted']} "
                         f"({_pct(p['predicted_share'])}) | {p['agree']} ({_pct(p['agree_share'])}) | "
                         f"{'met' if p['targets_met'] else 'not met'} |")
        a = s["all"]
        lines += ["", f"All: {a['measured']} measured lines, {a['predicted']} predicted ({_pct(a['predicted_share'])}), "
                  f"{a['agree']} agree ({_pct(a['agree_share'])}); launch origin read from: {s['launch_read_from']}.",
                  "", "Lines without a prediction, by reason:", ""]
        lines += [f"- {n}: {r}" for r, n in a["null_reasons"].items()]
        rows_file = out / f"rows{'_' + s['label'] if s['label'] else ''}.json"
        if rows_file.exists():
            rows = [r for r in json.loads(rows_file.read_text())["rows"] if r["own_source"] and r["agree"] is False]
            lines += ["", f"Disagreements ({len(rows)}):", "",
                      "| program | kernel | line | quantity | predicted | measured |", "|---|---|---|---|---|---|"]
            lines += [f"| {r['program']} | `{r['kernel'][:44]}` | {Path(r['file']).name}:{r['line']} | {r['quantity']} | "
                      f"{r['predicted'] if r['predicted'] is not None else str(r['low']) + '..' + str(r['high'])} | "
                      f"{r['measured']} |" for r in rows]
        lines += ["", "Programs not measured: " + ("; ".join(f"{p['project']}/{p['program']} ({p['not_measured'][:120]})"
                                                          for p in s["programs"] if "not_measured" in p) or "none"), ""]
    lines += ["## Commands", "",
              "Sources (exported as they are, outside the repository, to /work/ext/projects): yuhc/gpu-rodinia 9c10d3e",
              "(cuda/<program>, common/), karpathy/llm.c f1e2ace (dev/cuda), NVIDIA/cuda-samples c94ff36 (Common/",
              "headers and the ten Samples used). GPU (one call, `.carry/projects` = a copy of /work/ext/projects):", "",
              "    PYTHONUNBUFFERED=1 python3 benchmarks/projects/projects_gpu.py .carry/projects   # -> $OUT/projects_h100.tgz", "",
              "CPU, per code version (cuBLAS's headers for llm.c's common.h from the nvidia-cublas 13.0 wheel):", ""]
    lines += [f"    {s['command']}" for s in sums]
    lines += ["", "Per unit, the analyze command (run in the unit's folder) is in `summary*.json`: "
              "`programs[].units[].command`; every row in `rows*.json`.", ""]
    (out / "README.md").write_text("\n".join(lines) + "\n")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def _why_not(prog: dict[str, Any]) -> str:
    if not prog.get("built"):
        last = (prog.get("build") or [{}])[-1]
        return f"build failed: {last.get('cmd', '')[:160]} -> {last.get('rc')}: {last.get('tail', '')[-240:]}"
    runs = prog.get("profiled", [])
    if not runs:
        return "not run"
    return "; ".join(f"{' '.join(r.get('argv', []))}: rc {r.get('rc')} {r.get('not_run', '')} "
                     f"{(r.get('tail') or '')[-160:]}" for r in runs[:3])


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main(sys.argv[1:]))
