"""Where the source model has no figure and the compiled one has (#14 item 3), on cuda-samples.

For every .cu file under the given cuda-samples folders: `cudalens check --format json`, then per
file the global/shared accesses whose figures came from the compiled code (``figures_from``) and
the coalescing/bank-conflict findings (G*, SH1) whose evidence names the compiled layer. Public
code nobody here wrote, read at /work/ext/cuda-samples (never copied into the repository).

Usage: python3 benchmarks/model/compiled_figures_samples.py [-o benchmarks/results/cpu/compiled_figures_samples.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path("/work/ext/cuda-samples")
FOLDERS = ["Samples/0_Introduction", "Samples/2_Concepts_and_Techniques", "Samples/6_Performance"]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks/results/cpu/compiled_figures_samples.json"))
    ap.add_argument("-j", "--jobs", default="2")
    a = ap.parse_args(argv)
    t0 = time.time()
    cmd = [sys.executable, "-m", "cudalens", "check", *(str(SAMPLES / f) for f in FOLDERS), "-I",
           str(SAMPLES / "Common"), "--format", "json", "-j", a.jobs]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    report = json.loads(p.stdout)
    filled = [(k["file"], k["name"], a_["line"], a_["space"], a_["op"], a_.get("sectors_per_request"),
               a_.get("bank_conflict_ways"), a_["pattern"])
              for k in report["kernels"] for a_ in k["accesses"] if a_.get("figures_from") == "compiled-ptx"]
    compiled_rules = [f for f in report["findings"]
                      if any(e.get("fact") == "figures_from" and e.get("layer") == "compiled" for e in f["evidence"])]
    layers: dict[str, int] = {}
    for k in report["kernels"]:
        layers[k.get("access_layer", "?")] = layers.get(k.get("access_layer", "?"), 0) + 1
    out = {
        "what": "cudalens check on cuda-samples folders: accesses whose figures came from the compiled code where "
                "the source model had none, and the G/SH findings those figures made",
        "command": " ".join(cmd), "exit_code": p.returncode, "seconds": round(time.time() - t0, 1),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
        "files": len(report["files"]), "kernels": len(report["kernels"]), "access_layer": layers,
        "accesses": sum(len(k["accesses"]) for k in report["kernels"]),
        "accesses_filled_from_compiled": len(filled),
        "findings_from_compiled_figures": len(compiled_rules),
        "findings_from_compiled_by_rule": {r: sum(f["rule"] == r for f in compiled_rules)
                                           for r in sorted({f["rule"] for f in compiled_rules})},
        "filled": [dict(zip(("file", "kernel", "line", "space", "op", "sectors_per_request", "bank_conflict_ways",
                              "pattern"), (os.path.relpath(x[0], SAMPLES), *x[1:]))) for x in filled],
        "compiled_findings": [{"rule": f["rule"], "file": os.path.relpath(f["file"], SAMPLES), "line": f["line"],
                               "kernel": f["kernel"], "message": f["message"]} for f in compiled_rules],
    }
    Path(a.output).write_text(json.dumps(out, indent=1) + "\n")
    sys.stdout.write(json.dumps({k: out[k] for k in ("files", "kernels", "access_layer", "accesses",
                                                     "accesses_filled_from_compiled", "findings_from_compiled_figures",
                                                     "findings_from_compiled_by_rule", "seconds")}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
