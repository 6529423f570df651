"""Side-by-side timing of the compiled access model in two source trees (CPU), interleaved.

Usage: python3 benchmarks/model/ptx_model_ab.py ROOT OUT.json TREE_A TREE_B [--rounds N] [--units TU,TU,...]
  ROOT: the real-world build (benchmarks/realworld/realworld_build.py: PTX of every TU, plan.json).
  TREE_A, TREE_B: repository checkouts (e.g. a `git worktree` of an older commit and this one).

Per round and unit, each tree in turn runs what ``cudalens analyze`` runs after nvcc (the compiled
access layer on the kept PTX, the file's kernels, one process: no worker, so the figure is the
model's own cost) in a fresh interpreter, three times; the least process CPU seconds is kept. The
rounds alternate the trees, so both see the same machine; the result is the least over rounds per
tree and their ratio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

_CHILD = r"""
import json, sys, time
from pathlib import Path
tree, root, tu = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
sys.path.insert(0, tree + "/src")
import cudalens
assert cudalens.__file__.startswith(tree), cudalens.__file__
from cudalens.access.model import analyze_model
from cudalens.evidence.compiled_access import compiled_access
from cudalens.pipeline.defines import compiler_defines
from cudalens.source.limits import Budget
from cudalens.source.parse import parse_file
u = next(u for u in json.loads((root / "plan.json").read_text())["units"] if u["tu"] == tu)
budget = Budget()
model = analyze_model(parse_file(u["source"], (), budget), budget=budget)
text = (root / u["ptx"]).read_text(errors="replace")
best = 1e9
for _ in range(3):
    t0 = time.process_time()
    compiled_access(u["source"], model, "9.0", compiler_defines(model, {}), None, (), None, ptx=text, worker=None)
    best = min(best, time.process_time() - t0)
print(best)
"""


def _commit(tree: str) -> str:
    return subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def main(argv: list[str]) -> int:
    root, out, trees = Path(argv[0]), Path(argv[1]), [str(Path(t).resolve()) for t in argv[2:4]]
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    units = (argv[argv.index("--units") + 1].split(",") if "--units" in argv else
             ["cuda-samples/reduction__reduction_kernel", "code-samples/gups", "llm.c/layernorm_backward"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    seconds: dict[str, dict[str, list[float]]] = {tu: {t: [] for t in trees} for tu in units}
    for r in range(rounds):
        for tu in units:
            for tree in (trees if r % 2 == 0 else trees[::-1]):
                p = subprocess.run([sys.executable, "-c", _CHILD, tree, str(root), tu], capture_output=True, text=True,
                                   env=env, timeout=600, check=True)
                seconds[tu][tree].append(round(float(p.stdout.strip().splitlines()[-1]), 3))
    a, b = trees
    rows = [{"tu": tu, "a_s": min(s[a]), "b_s": min(s[b]), "a_over_b": round(min(s[a]) / min(s[b]), 2),
             "a_runs": s[a], "b_runs": s[b]} for tu, s in seconds.items()]
    result = {"a": {"tree": a, "commit": _commit(a)}, "b": {"tree": b, "commit": _commit(b)}, "rounds": rounds,
              "note": "process CPU seconds of the compiled access layer, one process, least of 3 per run; "
                      "least over the rounds; the rounds alternate the trees",
              "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "command": "python3 benchmarks/model/ptx_model_ab.py " + " ".join(argv), "units": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    sys.stdout.write(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
