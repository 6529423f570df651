"""Where a configuration's time goes besides sampling: cProfile of one local exhaustive sweep.

    python3 benchmarks/tune/profile_local.py OUTDIR

The space of gemm_space.py cut to BK=8, TM, TN in {4, 8}, BM, BN in {64, 128} (the configurations
that survive), same policy as the benchmark runs. Writes OUTDIR/profile_local.txt: the sweep's
wall time, the configurations measured, the per-configuration wall time less sampling, the call
counts of the functions that could repeat per configuration (the harness's own kernel compiles,
the output check, the history write, the models' verdicts), and the top of the profile.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_space as G

from cudalens.tune import make_space, tune

WATCH = ("compile_cubin", "_internal_cubin", "_internal_kernel", "compare_outputs", "record", "verdict_for",
         "device_info", "open", "measure_event_floor", "collect", "bench", "_upload", "_download", "summarize",
         "_finish", "insert_run", "__init__")


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    values = {"BM": [64, 128], "BN": [64, 128], "BK": [8], "TM": [4, 8], "TN": [4, 8]}
    space = make_space(values, G.RESTRICTIONS, G.CONSTANTS)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    rep = tune(G.SOURCE, G.KERNEL, space, grid=G.GRID, block=G.BLOCK, args=G.ARGS, strategy="exhaustive",
               db=os.path.join(out, "profile.db"), policy=dict(G.POLICY), flops=G.FLOPS,
               cache_dir="/tmp/cudalens-profile-cache")
    prof.disable()
    wall = time.perf_counter() - t0
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    buf.write(f"wall {wall:.2f} s, measured {rep['measured']}, compile {rep['compile_seconds']} s\n")
    buf.write("watched (file, function): calls, cumulative s\n")
    for (path, _line, func), v in sorted(st.stats.items()):  # type: ignore[attr-defined]
        if func in WATCH and "cudalens" in path:
            buf.write(f"  {path.split('cudalens/', 1)[-1]}:{func}: {v[1]} calls, {v[3]:.3f} s\n")
    st.sort_stats("cumulative").print_stats(60)
    st.sort_stats("tottime").print_stats(30)
    with open(os.path.join(out, "profile_local.txt"), "w") as fh:
        fh.write(buf.getvalue())
    print(buf.getvalue()[:3000], flush=True)


if __name__ == "__main__":
    main()
