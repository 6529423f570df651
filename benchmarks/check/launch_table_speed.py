"""Seconds `check` spends on the project's launch table (issue #29), per check_speed.py set, and a digest
of the table (two codes give the same table when their digests match).

    PYTHONPATH=src python benchmarks/check/launch_table_speed.py [--sources DIR] [-o OUT.json]

For each set (llm.c dev/cuda, cuda-samples 0_Introduction and 2_Concepts_and_Techniques, Thrust examples)
the same files and -I folders as check_speed.py, the table built as `check` builds it
(pipeline.batch._launch_table, no result cache), timed in this process (wall seconds and this process's
CPU seconds, the least of --repeat runs)."""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_speed import SETS, units, write_result  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=Path, default=Path("/work/ext/check_speed"))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    from cudalens.api.analysis import load_project_of
    from cudalens.cli._build import make_build
    from cudalens.pipeline.batch import _launch_table

    out: dict = {"load_average_before": [round(x, 2) for x in os.getloadavg()], "sets": {}}
    for name in SETS:
        paths = [str(f) for f in units(args.sources, name, None)]
        includes = tuple(str(args.sources / name / i) for i in SETS[name]["include"])  # type: ignore[attr-defined]
        project = load_project_of(paths, paths)
        build = make_build(paths, includes, (), None, True, False)
        walls, cpus, digest = [], [], ""
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            table = _launch_table(paths, project, build)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            digest = hashlib.sha256(repr(sorted(table.sites.items())).encode()).hexdigest()[:16]
        out["sets"][name] = {"units": len(paths), "seconds": round(min(walls), 2), "cpu_seconds": round(min(cpus), 2),
                             "launch_sites": sum(len(v) for v in table.sites.values()), "table_digest": digest}
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return write_result(out, args.output, indent=1)


if __name__ == "__main__":
    raise SystemExit(main())
