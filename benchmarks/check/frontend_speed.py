"""Speed of the source front end and warp access model on a generated 2,000-line `.cu` file.

The same file as `tests/analyze/test_analyze_cli.py::generated_file(125)` (imported from there, so the
test and the benchmark analyse one input). Times, on this machine, the median of N runs of
(1) parse + access model and (2) the whole `cudalens analyze --no-compile --format json`, and writes
them with the machine's load average to benchmarks/results/cpu/frontend_speed.json.

    python3 benchmarks/check/frontend_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "analyze"))

from test_analyze_cli import generated_file  # noqa: E402

from cudalens.access.model import analyze_model  # noqa: E402
from cudalens.cli import main as cli_main  # noqa: E402
from cudalens.source.parse import parse_file, parse_source  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("-o", default=str(ROOT / "benchmarks/results/cpu/frontend_speed.json"))
    a = ap.parse_args()
    text = generated_file(125)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "big.cu"
        f.write_text(text)
        analyze_model(parse_source(generated_file(1)), block=(32, 8, 1))  # imports warm
        load_before = os.getloadavg()
        model, full = [], []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            analyze_model(parse_file(f), block=(32, 8, 1))
            model.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                rc = cli_main(["analyze", "--no-compile", "--format", "json", "--block", "32,8", str(f)])
            full.append(time.perf_counter() - t0)
            assert rc == 0
        load_after = os.getloadavg()
    out = {
        "what": "generated 2,000-line .cu file (125 kernels): parse + access model, and the whole analyze without compiling",
        "lines": len(text.splitlines()), "runs": a.runs,
        "parse_and_model_s": {"median": round(statistics.median(model), 3), "min": round(min(model), 3),
                              "max": round(max(model), 3)},
        "whole_analyze_no_compile_s": {"median": round(statistics.median(full), 3), "min": round(min(full), 3),
                                       "max": round(max(full), 3)},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_1min_before_after": [round(load_before[0], 2), round(load_after[0], 2)]},
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": "python3 benchmarks/check/frontend_speed.py --runs %d" % a.runs,
    }
    Path(a.o).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
