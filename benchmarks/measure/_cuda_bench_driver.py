"""Child process of measure_gpu.py: time one launch configuration with NVBench's Python package.

Usage: python3 _cuda_bench_driver.py CONFIG.json OUT.json  (CONFIG as measure_gpu's configs)
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cuda.bench as cb  # noqa: E402
import measure_gpu as mg  # noqa: E402

from cudalens.hardware import cuda_driver as cu  # noqa: E402


def main() -> int:
    cfg = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    with cu.device_context(0) as ctx:
        prepared = mg.Prepared(ctx, cfg, {})

        def one_config(state):
            state.exec(lambda launch: prepared.launch_on(launch.get_stream().__cuda_stream__()[1]))

        cb.register(one_config)
        cb.run_all_benchmarks([sys.argv[0], "--json", out])
        prepared.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
