"""Several ``ptx_model_speed_vs.py`` runs read as one (issue #27's speed point on a machine whose rounds move by
tens of percent): per label, each unit's least CPU seconds over every round of every run, summed; per family
(labels naming one checkout: ``main`` and ``main2``, ``7e8b909`` and ``7e8b909b``), the least of its labels'.

Usage: python3 benchmarks/model/ptx_model_speed_pool.py OUT.json RUN.json [RUN.json ...] --family NAME=LABEL,LABEL ...
OUT.json: ``runs`` (the files read), ``labels`` (per label: its per-unit least summed), ``families`` (the same per
family, and its ratio to the first family's), ``a_a`` (each family's labels: the second's sum over the first's, the
noise of the method measured beside it) and ``units`` (per unit, each family's least).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def pool(runs: list[dict], families: dict[str, list[str]]) -> dict:
    """The pooled figures of the ``runs`` (each a ptx_model_speed_vs.py output) for ``families``."""
    least: dict[str, dict[str, float]] = {}
    for run in runs:
        for r in run["runs"]:
            per = least.setdefault(r["code"].split()[0], {})
            for unit, s in r["per_unit"].items():
                per[unit] = min(s, per.get(unit, float("inf")))
    labels = {k: round(sum(v.values()), 3) for k, v in least.items()}
    units = sorted(set.intersection(*(set(least[x]) for ls in families.values() for x in ls)))
    fam = {f: {u: min(least[x][u] for x in ls) for u in units} for f, ls in families.items()}
    first = next(iter(fam))
    sums = {f: sum(v.values()) for f, v in fam.items()}
    return {
        "labels": labels,
        "families": {f: {"least_cpu_sum": round(s, 3), "ratio": round(s / sums[first], 3)} for f, s in sums.items()},
        "a_a": {f: round(labels[ls[1]] / labels[ls[0]], 3) for f, ls in families.items() if len(ls) > 1},
        "units": {u: {f: round(fam[f][u], 4) for f in fam} for u in units},
    }


def main(argv: list[str]) -> int:
    files = [a for a in argv[1:] if not a.startswith("--") and "=" not in a]
    fams = [argv[k + 1] for k, a in enumerate(argv) if a == "--family" and k + 1 < len(argv)]
    if not argv or not files or not fams:
        sys.stderr.write(__doc__ or "")
        return 2
    families = {f.split("=", 1)[0]: f.split("=", 1)[1].split(",") for f in fams}
    out = {"runs": files, **pool([json.loads(Path(f).read_text()) for f in files], families)}
    Path(argv[0]).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("labels", "families", "a_a")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
