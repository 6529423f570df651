"""Issue #29 cold: the SASS of many cubins from ONE nvdisasm start (cudalens.compiled.sass_elf) against the
per-cubin ``nvdisasm -gi -c -ndf`` parse ``check`` runs (compile.sass_command + sass.parse_nvdisasm).

For every ``*.cubin`` under the folders: equal (FunctionSass ==, every instruction's offset, opcode, class,
lines and written location)?, its instruction count, whether it fell back to the per-cubin command (and why);
totals; and the cost of each side, in one run, alternated over ``--rounds``: CPU seconds of the nvdisasm
processes (resource.getrusage RUSAGE_CHILDREN: user + system) and of this Python process (the parse on the
per-cubin side; ELF and line-table reading, text synthesis and the parse on the batched side).

    python benchmarks/check/sass_batch_identity.py DIR... -o OUT.json [--cc 9.0] [--rounds 3]

The source path given to both sides is None (every file's lines kept), the strictest comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path


def _cpu() -> tuple[float, float]:
    """(children's user+sys, this process's user+sys), in seconds."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = resource.getrusage(resource.RUSAGE_SELF)
    return c.ru_utime + c.ru_stime, s.ru_utime + s.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--cc", default="9.0")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    from cudalens.compiled.sass_elf import _per_cubin, disassemble_batch
    from cudalens.compiled.toolchain import discover

    tc = discover()
    nvdisasm, env = tc.get("nvdisasm").path, tc.env()
    cubins = sorted({p for d in args.dirs for p in d.rglob("*.cubin")})
    if not cubins:
        print("no *.cubin under the folders", file=sys.stderr)
        return 2
    items = [(str(p), None) for p in cubins]
    costs: dict[str, list[dict[str, float]]] = {"per_cubin": [], "batched": []}
    per: list = []
    batch = None
    for _ in range(args.rounds):
        for side in ("per_cubin", "batched"):
            c0, s0, w0 = *_cpu(), time.perf_counter()
            if side == "per_cubin":
                per = [_per_cubin(nvdisasm, args.cc, p, None, env) for p, _ in items]
            else:
                batch = disassemble_batch(nvdisasm, args.cc, items, env)
            c1, s1, w1 = *_cpu(), time.perf_counter()
            costs[side].append({"nvdisasm_cpu_s": round(c1 - c0, 3), "python_cpu_s": round(s1 - s0, 3),
                                "wall_s": round(w1 - w0, 3)})
    assert batch is not None
    rows = []
    for k, p in enumerate(cubins):
        a, b = per[k], batch.results[k]
        rows.append({"cubin": str(p), "equal": a == b, "functions": len(a),
                     "instructions": sum(len(f.instructions) for f in a.values()),
                     "fell_back": batch.fell_back.get(k)})
    least = {side: {key: min(r[key] for r in runs) for key in runs[0]} for side, runs in costs.items()}
    out = {
        "script": "benchmarks/check/sass_batch_identity.py",
        "dirs": [str(d) for d in args.dirs],
        "cc": args.cc,
        "nvdisasm": nvdisasm,
        "host": platform.node(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "totals": {"cubins": len(rows), "equal": sum(r["equal"] for r in rows),
                   "mismatches": [r["cubin"] for r in rows if not r["equal"]],
                   "instructions": sum(r["instructions"] for r in rows),
                   "fell_back": sum(r["fell_back"] is not None for r in rows)},
        "cost_least_of_rounds": least,
        "cost_rounds": costs,
        "rows": rows,
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    t = out["totals"]
    print(f"{t['cubins']} cubins, {t['equal']} equal, {t['instructions']} instructions, {t['fell_back']} fell back")
    for side, v in least.items():
        print(f"{side}: nvdisasm {v['nvdisasm_cpu_s']} s CPU, Python {v['python_cpu_s']} s CPU, wall {v['wall_s']} s")
    return 0 if not t["mismatches"] else 1


if __name__ == "__main__":
    sys.exit(main())
