"""Baseline for launch_found.py: how many of the same kernels the launch code before #26 found.

Before #26 a kernel's block came from a launch site in its own file whose block the front end
could derive (access.model.block_for, now removed), else 256 threads ("default"). Run it against a
source tree from before #26 (e.g. main at d6eb947):

    PYTHONPATH=<old tree>/src python benchmarks/realworld/launch_found_baseline.py benchmarks/results/cpu/launch_found.json
"""
import json
import os
import sys

from cudalens.access.model import block_for  # type: ignore[attr-defined]  # the pre-#26 API
from cudalens.source.parse import parse_file


def main() -> None:
    data = json.load(open(sys.argv[1]))
    total = found = 0
    for r in data["programs"]:
        for k in r.get("detail", []):
            total += 1
            try:
                model = parse_file(os.path.join(r["folder"], k["file"]))
            except Exception:  # noqa: BLE001 - a file the old front end rejects: not found
                continue
            mine = [x for x in model.kernels if x.name == k["kernel"]]
            if mine and block_for(mine[0], model, None)[1] != "default":
                found += 1
    print(json.dumps({"old_found": found, "kernels": total}))


if __name__ == "__main__":
    main()
