"""Issue #29 cold: the SASS of many cubins from ONE nvdisasm start (cudalens.compiled.sass_elf) against the
per-cubin ``nvdisasm -gi -c -ndf`` parse ``check`` runs (sass.disassemble_one: sass.sass_command + sass.parse_nvdisasm).

For every ``*.cubin`` under the folders: equal (FunctionSass ==, every instruction's offset, opcode, class,
lines and written location)?, its instruction count, whether it fell back to the per-cubin command (and why);
totals; and the cost of each side, in one run, alternated over ``--rounds``: CPU seconds of the nvdisasm
processes (resource.getrusage RUSAGE_CHILDREN: user + system) and of this Python process (the parse on the
per-cubin side; ELF and line-table reading, the raw output's reading and the parse on the batched side).

    python benchmarks/check/sass_batch_identity.py [CC=]DIR... -o OUT.json [--cc 9.0] [--rounds 3]

A folder's cubins are for ``CC`` where given (``8.0=/tmp/sm_80``), else for ``--cc``; one batched call per cc.

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
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--cc", default="9.0")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    from cudalens.compiled.sass import disassemble_one
    from cudalens.compiled.sass_elf import disassemble_batch
    from cudalens.compiled.toolchain import discover

    tc = discover()
    nvdisasm, env = tc.get("nvdisasm").path, tc.env()
    cc_of: dict[Path, str] = {}
    for arg in args.dirs:
        cc, _, folder = arg.rpartition("=") if "=" in arg else (args.cc, "", arg)
        cc_of.update({p: cc for p in Path(folder).rglob("*.cubin")})
    cubins = sorted(cc_of)
    if not cubins:
        print("no *.cubin under the folders", file=sys.stderr)
        return 2
    groups = {cc: [(str(p), None) for p in cubins if cc_of[p] == cc] for cc in sorted(set(cc_of.values()))}
    costs: dict[str, list[dict[str, float]]] = {"per_cubin": [], "batched": []}
    per: dict[str, dict] = {}
    batch: dict[str, tuple] = {}
    for _ in range(args.rounds):
        for side in ("per_cubin", "batched"):
            c0, s0, w0 = *_cpu(), time.perf_counter()
            if side == "per_cubin":
                per = {p: disassemble_one(nvdisasm, p, cc, None, env) for cc, items in groups.items() for p, _ in items}
            else:
                for cc, items in groups.items():
                    got = disassemble_batch(nvdisasm, cc, items, env)
                    batch.update({p: (r, got.fell_back.get(k)) for k, ((p, _), r) in enumerate(zip(items, got.results))})
            c1, s1, w1 = *_cpu(), time.perf_counter()
            costs[side].append({"nvdisasm_cpu_s": round(c1 - c0, 3), "python_cpu_s": round(s1 - s0, 3),
                                "wall_s": round(w1 - w0, 3)})
    rows = []
    for p in cubins:
        a, (b, why) = per[str(p)], batch[str(p)]
        rows.append({"cubin": str(p), "cc": cc_of[p], "equal": a == b, "functions": len(a),
                     "instructions": sum(len(f.instructions) for f in a.values()), "fell_back": why})
    least = {side: {key: min(r[key] for r in runs) for key in runs[0]} for side, runs in costs.items()}
    out = {
        "script": "benchmarks/check/sass_batch_identity.py",
        "dirs": args.dirs,
        "cubins_per_cc": {cc: len(items) for cc, items in groups.items()},
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
