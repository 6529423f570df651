"""The compiled model's work on the real-world units, in lane-steps (CPU, deterministic).

Usage (repository root of the checkout to count, its ``src`` first on PYTHONPATH)::

    PYTHONPATH=src python3 benchmarks/model/ptx_lane_steps.py OUT.json [--root /tmp/m27/speedroot]

ROOT: the real-world build (benchmarks/realworld/realworld_build.py: PTX of every TU, plan.json), as
for ``benchmarks/model/ptx_model_speed.py``. For each public unit, ``compiled_access`` is run once and
every lane machine run is counted: lanes (the threads of the evaluated blocks, padded to whole warps,
per variant) times the run's instruction steps, split by variant kind: ``trial`` (a parameter trial at a
size of ``PLAUSIBLE`` or 0), ``small trial`` (at a size of ``SMALL``), ``seed`` (a loaded-value seed), each
also as ``whole-loop ...`` for the rerun with every loop whole (counted from where it goes on). Works
with the code of 7e8b909 (``cudalens.pipeline.compiled_access``, ``ptx_run.run_variants``) and later
(``cudalens.evidence.compiled_access``, ``ptx_run.run_forked``). Time is not measured: the lane-steps are
the same on any machine, idle or loaded.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import cudalens.access.ptx_eval as pe

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed_root  # noqa: E402

FORKED = speed_root.compiled_access.__module__ == "cudalens.evidence.compiled_access"  # (7e8b909: pipeline's)

SMALL = set(getattr(pe, "SMALL", ()))


class _Count:
    def __init__(self) -> None:
        self.kinds: collections.Counter[str] = collections.Counter()
        self.units: collections.Counter[str] = collections.Counter()
        self.unit = ""

    def add(self, launch, steps: int, whole: bool) -> None:
        b = launch.block
        lanes = -(-b[0] * b[1] * b[2] // 32) * 32 * len(launch.blocks)
        variants = launch.variants or ((launch.seed, launch.params),)
        for seed, params in variants:
            kind = ("seed" if seed != variants[0][0] else
                    "small trial" if any(v in SMALL for v in params.values()) else "trial")
            self.kinds[("whole-loop " if whole else "") + kind] += lanes * steps
            self.units[self.unit] += lanes * steps


def _hook(count: _Count) -> None:
    import cudalens.access.ptx_run as pr
    if FORKED:
        run_forked = pe.run_forked

        def forked(module, fn, launch, fork=True):
            res, f = run_forked(module, fn, launch, fork)
            count.add(launch, res[0].steps, launch.whole_loops)
            return res, f
        pe.run_forked = forked
        whole = pr.Resume.whole

        def resumed(self, loop_cap, max_steps):
            res = whole(self, loop_cap, max_steps)
            if res is not None:
                count.add(self.run.launch, res[0].steps - self.run.steps, True)
            return res
        pr.Resume.whole = resumed  # type: ignore[method-assign]
    else:
        run_variants = pe.run_variants

        def plain(module, fn, launch):
            res = run_variants(module, fn, launch)
            count.add(launch, res[0].steps, bool(getattr(launch, "whole_loops", False)))
            return res
        pe.run_variants = plain


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("--"):
        sys.stderr.write(__doc__ or "")
        return 2
    out = Path(argv[0])
    root = Path(argv[argv.index("--root") + 1] if "--root" in argv else "/tmp/m27/speedroot")
    if not (root / "plan.json").is_file():
        sys.stderr.write(f"ptx_lane_steps: no plan.json under {root}\n")
        return 2
    count = _Count()
    _hook(count)
    units = 0
    for u, model, text in speed_root.units(root):
        count.unit = u["tu"]
        speed_root.run(u, model, text)
        units += 1
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    total = sum(count.kinds.values())
    result = {"code_commit": commit, "units": units, "lane_steps_total_M": round(total / 1e6, 2),
              "by_kind_M": {k: round(v / 1e6, 2) for k, v in count.kinds.most_common()},
              "per_unit_M": {k: round(v / 1e6, 3) for k, v in count.units.most_common()}}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    sys.stdout.write(json.dumps({k: result[k] for k in ("lane_steps_total_M", "by_kind_M")}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
