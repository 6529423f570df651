"""How many kernels' launches the project launch resolution finds on public code (issue #26).

For each program folder given (each is one project, as a user would run ``cudalens check .`` in
it), runs ``cudalens check DIR --format json`` with no other flag and counts, per kernel reported,
whether its launch was found (``launch.origin == "launch"``) or assumed. The public code stays
outside the repository; only this script and its result are committed.

    python benchmarks/realworld/launch_found.py --out benchmarks/results/cpu/launch_found.json \\
        /work/ext/projects/rodinia/cuda/* /work/ext/siboehm+SGEMM_CUDA ...

``--no-compile`` (optional) runs the source-only analysis (the launch resolution is the same).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def check(folder: str, no_compile: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [sys.executable, "-m", "cudalens", "check", folder, "--format", "json", "-o", out]
        if no_compile:
            cmd.append("--no-compile")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        seconds = time.perf_counter() - t0
        if not os.path.exists(out):
            return {"folder": folder, "error": (proc.stderr or proc.stdout).strip()[-400:], "seconds": seconds}
        data = json.load(open(out))
    kernels = []
    for k in data["kernels"]:
        launch = k.get("launch") or {}
        kernels.append({"file": os.path.relpath(k["file"], folder), "kernel": k["name"], "origin": launch.get("origin"),
                        "from": launch.get("from"), "via": launch.get("via"), "block": k.get("block")})
    found = sum(k["origin"] == "launch" for k in kernels)
    return {"folder": folder, "seconds": round(seconds, 1), "files": len(data["files"]),
            "not_compiled": sum(1 for f in data["files"] if f.get("compile_error")),
            "kernels": len(kernels), "found": found, "assumed": sum(k["origin"] == "assumed" for k in kernels),
            "detail": kernels}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    rows = [check(f, args.no_compile) for f in args.folders if os.path.isdir(f)]
    total = sum(r.get("kernels", 0) for r in rows)
    found = sum(r.get("found", 0) for r in rows)
    summary = {"programs": len(rows), "kernels": total, "found": found, "assumed": total - found,
               "share_found": round(found / total, 3) if total else None,
               "compile": not args.no_compile, "command": "cudalens check DIR --format json"}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"summary": summary, "programs": rows}, fh, indent=1)
    print(json.dumps(summary))
    for r in rows:
        print(f"{r['folder']}: {r.get('found')}/{r.get('kernels')} found {r.get('error', '')[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
