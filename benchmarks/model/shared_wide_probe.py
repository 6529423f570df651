"""Measure shared-memory wavefronts per request of 4/8/16-byte loads under several patterns, and
put the access model's prediction beside each (data for modelling wide and vectorized shared loads).

Usage (GPU with ncu): python3 benchmarks/model/shared_wide_probe.py OUTDIR  -> OUTDIR/shared_wide_probe.json
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile

from cudalens.profile.ncu import by_kernel, parse_csv, run_ncu

#: kernel -> (bytes per lane, lane -> element index at k = 0)
PATTERNS = {
    "ld4_bcast": (4, lambda t: 0), "ld4_unit": (4, lambda t: t),
    "ld8_bcast": (8, lambda t: 0), "ld8_unit": (8, lambda t: t), "ld8_halves": (8, lambda t: t // 16),
    "ld16_bcast": (16, lambda t: 0), "ld16_unit": (16, lambda t: t), "ld16_halves": (16, lambda t: t // 16),
    "ld16_quarters": (16, lambda t: t // 8), "ld16_pairs": (16, lambda t: t // 2),
    "ld16_stride2": (16, lambda t: 2 * t),
}


def predicted(nbytes: int, index) -> float | None:
    import numpy as np  # noqa: PLC0415

    from cudalens.access.memory import shared_wavefronts  # noqa: PLC0415

    addr = np.array([[index(t) * nbytes for t in range(32)]], dtype=np.int64)
    _ways, waves, _ideal = shared_wavefronts(addr, np.ones_like(addr, dtype=bool), nbytes)
    return float(waves[0])


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")
    os.makedirs(out, exist_ok=True)
    exe = os.path.join(tempfile.mkdtemp(), "probe")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-lineinfo", "-o", exe, os.path.join(here, "shared_wide_probe.cu")],
                   check=True)
    sass = subprocess.run(["cuobjdump", "-sass", exe], capture_output=True, text=True).stdout
    text = run_ncu([exe], launch_count=None, timeout=200)
    legacy = by_kernel(parse_csv(text))
    rows = []
    for name, (nbytes, index) in PATTERNS.items():
        m = legacy.get(name)
        rows.append({"kernel": name, "bytes_per_lane": nbytes,
                     "measured_wavefronts_per_request": m.shared_ld_wavefronts_per_request if m else None,
                     "measured_bank_conflicts_per_request": m.shared_ld_bank_conflicts_per_request if m else None,
                     "model_wavefronts_per_request": predicted(nbytes, index)})
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    json.dump({"script": "benchmarks/model/shared_wide_probe.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "device_and_driver": smi, "rows": rows, "lds_opcodes": sorted({w for w in sass.split() if w.startswith("LDS")})},
              open(os.path.join(out, "shared_wide_probe.json"), "w"), indent=2)
    print(f"{'kernel':16} {'B/lane':>6} {'measured wf/req':>16} {'model':>8}")
    for r in rows:
        mw, pw = r["measured_wavefronts_per_request"], r["model_wavefronts_per_request"]
        print(f"{r['kernel']:16} {r['bytes_per_lane']:>6} {('-' if mw is None else f'{mw:.3f}'):>16} {('-' if pw is None else f'{pw:.2f}'):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
