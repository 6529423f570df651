"""Child process: the adversarial suite through NVBench's Python package (cuda-bench), defaults.

Usage: python3 _adv_cuda_bench.py OUT.json
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import adversaries as A  # noqa: E402
import cuda.bench as cb  # noqa: E402

from cudalens.hardware import cuda_driver as cu  # noqa: E402


def main() -> int:
    with cu.device_context(0) as ctx:
        mod = A.Module(ctx.cc)
        objs = []
        for cls, n in A.suite():
            adv = cls(mod, n)
            objs.append(adv)

            def one(state, adv=adv):
                try:
                    state.add_global_memory_reads(adv.bytes_read)
                    state.add_global_memory_writes(adv.bytes_written)
                except Exception:  # noqa: BLE001 - older cuda-bench: no byte columns
                    pass
                state.exec(lambda launch: adv.run(launch.get_stream().__cuda_stream__()[1]))

            one.__name__ = adv.kind.replace("-", "_")
            cb.register(one)
        cb.run_all_benchmarks([sys.argv[0], "--json", sys.argv[1], "--timeout", "3"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
