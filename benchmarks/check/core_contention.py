"""Whether two cores slow each other down (issue #29's `-j 2` against `-j 1`): plain nvcc of a set's units in
turn (check_speed.nvcc_each), first alone on one core, then two copies at once, each on its own core, the
rest of the machine idle. Compiles are the same work in both cases, so CPU seconds that rise when the second
core is busy measure the machine (shared caches, memory bandwidth, turbo clocks), not cudalens: `check -j 2`
cannot be more than 2 / (that rise) times faster than `check -j 1` there.

    python benchmarks/check/core_contention.py --set llmc [--limit K] [--include DIR] [--cores 0,1] [--rounds 2] [-o OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _one(args: argparse.Namespace, core: int, out: Path) -> subprocess.Popen:
    code = ("import json, sys; sys.path.insert(0, %r); import check_speed as c; "
            "c.SETS[%r]['include'] = [*c.SETS[%r]['include'], *%r]; "
            "files = c.units(c.Path(%r), %r, %r); "
            "inc = [str(c.Path(%r) / %r / i) for i in c.SETS[%r]['include']]; "
            "s, failed = c.nvcc_each(files, inc, '9.0'); "
            "json.dump({'seconds': round(s, 2), 'cpu_seconds': round(c.CPU['last'], 2), 'failed': failed}, open(%r, 'w'))"
            % (str(HERE), args.set, args.set, args.include, str(args.sources), args.set, args.limit, str(args.sources), args.set,
               args.set, str(out)))
    return subprocess.Popen(["taskset", "-c", str(core), sys.executable, "-c", code])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=Path, default=Path("/work/ext/check_speed"))
    ap.add_argument("--set", default="llmc")
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--limit", type=int, default=None, help="the first K units of the set")
    ap.add_argument("--cores", default="0,1")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    a, b = (int(c) for c in args.cores.split(","))
    runs = []
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"core-contention-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    for _round in range(args.rounds):
        alone = _one(args, a, tmp / "alone.json")
        alone.wait()
        pair = [_one(args, a, tmp / "pair_a.json"), _one(args, b, tmp / "pair_b.json")]
        for p in pair:
            p.wait()
        got = {k: json.loads((tmp / f"{k}.json").read_text()) for k in ("alone", "pair_a", "pair_b")}
        got["cpu_rise"] = round((got["pair_a"]["cpu_seconds"] + got["pair_b"]["cpu_seconds"])
                                / (2 * got["alone"]["cpu_seconds"]), 3)
        runs.append(got)
    result = {"command": " ".join(["python", "benchmarks/check/core_contention.py", *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "set": args.set, "cores": [a, b],
              "cpus": os.cpu_count(), "runs": runs,
              "cpu_rise_least": min(r["cpu_rise"] for r in runs),
              "j2_over_j1_cap": round(2 / min(r["cpu_rise"] for r in runs), 3)}
    text = json.dumps(result, indent=1)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
