"""Do model changes move the earlier exact validations? (CPU, no GPU)

The H100 validations of the source access model (access 168/168: benchmarks/model/access_gpu.py; labs
240/240: benchmarks/model/validate_labs.py) compare predictions with committed measurements. This script
recomputes every prediction they recorded with the code of this checkout and lists any that
changed: if none did, the committed comparisons hold for this code without a new GPU run.

Usage: PYTHONPATH=src python3 benchmarks/realworld/realworld_existing_check.py OUT.json
Reads benchmarks/results/h100/realworld/existing_validations/{access_validation,validation}.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VAL = ROOT / "benchmarks" / "results" / "h100" / "realworld" / "existing_validations"


def access_check() -> dict:
    sys.path.insert(0, str(ROOT / "benchmarks" / "model"))
    import access_gpu  # type: ignore  # noqa: PLC0415 - a benchmark script in benchmarks/model

    doc = json.loads((VAL / "access_validation.json").read_text())
    cache: dict = {}
    changed = []
    for r in doc["results"]:
        key = (r["file"], r["kernel"], json.dumps(r["params"], sort_keys=True), tuple(r["block"]))
        if key not in cache:
            cache[key] = access_gpu.predictions(r["file"], r["kernel"], r["params"], tuple(r["block"]))
        now = cache[key].get(r["quantity"])
        if now != r["predicted"]:
            changed.append({**{k: r[k] for k in ("file", "kernel", "params", "quantity", "predicted", "measured")},
                            "predicted_now": now})
    compared = sum(1 for r in doc["results"] if r.get("agree") is not None)
    return {"rows": len(doc["results"]), "compared": compared, "agree_recorded": sum(1 for r in doc["results"]
                                                                                    if r.get("agree")),
            "predictions_changed": changed}


def labs_check() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "model" / "validate_labs.py"), tmp, "--dry-run"], check=True,
                       capture_output=True, text=True, timeout=1800)
        new = json.loads((Path(tmp) / "validation.json").read_text())
    old = json.loads((VAL / "validation.json").read_text())

    def key(r: dict) -> tuple:
        return r["file"], r["kernel"], r["quantity"]

    now = {key(r): r["predicted"] for r in new["rows"]}
    ratio = [r for r in old["rows"] if ("sectors" in r["quantity"] or "wavefronts" in r["quantity"])]
    both = [r for r in ratio if key(r) in now]
    changed = [{**{k: r[k] for k in ("file", "kernel", "quantity", "predicted", "measured")},
                "predicted_now": now[key(r)]} for r in both if now[key(r)] != r["predicted"]]
    return {"memory_ratio_rows": len(ratio), "recomputed": len(both),
            "not_recomputed": [key(r) + (r.get("note", ""),) for r in ratio if key(r) not in now],
            "predictions_changed": changed, "top_rule_correct_now": new["summary"].get("top_rule_correct"),
            "pairs": new["summary"].get("pairs"), "recorded_summary": old["summary"]}


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__ or "")
        return 2
    t0 = time.perf_counter()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit.strip(),
           "access": access_check(), "labs": labs_check()}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    Path(argv[0]).parent.mkdir(parents=True, exist_ok=True)
    Path(argv[0]).write_text(json.dumps(out, indent=1))
    sys.stdout.write(json.dumps({"access_changed": len(out["access"]["predictions_changed"]),
                                 "labs_changed": len(out["labs"]["predictions_changed"]),
                                 "labs_top_rule": out["labs"]["top_rule_correct_now"]}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
