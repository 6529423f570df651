"""Capture a real Nsight Compute CSV with cudalens' metric set, for the CPU tests' fixture.

Usage (on a machine with a GPU and ncu): python3 benchmarks/model/ncu_fixture.py OUTDIR
Writes OUTDIR/ncu_h100_raw.csv (the CSV as ncu printed it), OUTDIR/ncu_fixture.json (the derived
legacy metrics, device, driver, date, command), and OUTDIR/ncu_query.txt (metrics ncu knows).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile

from cudalens.profile.ncu import METRICS, by_kernel, find_ncu, parse_csv, run_ncu


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")
    os.makedirs(out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    exe = os.path.join(tempfile.mkdtemp(), "ncu_fixture")
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-lineinfo", "-o", exe, os.path.join(here, "ncu_fixture.cu")], check=True)
    ncu = find_ncu()
    known = subprocess.run([ncu, "--query-metrics", "--chip", "gh100"], capture_output=True, text=True).stdout
    with open(os.path.join(out, "ncu_query.txt"), "w") as fh:
        fh.write(known)
    text = run_ncu([exe], launch_count=None, timeout=300)
    header = text.splitlines()[0]
    missing = [m for m in METRICS if f'"{m}"' not in header]
    with open(os.path.join(out, "ncu_h100_raw.csv"), "w") as fh:
        fh.write(text + "\n")
    legacy = {name: m.to_dict() for name, m in by_kernel(parse_csv(text)).items()}
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    record = {
        "script": "benchmarks/model/ncu_fixture.py",
        "command": " ".join(sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "device_and_driver": smi,
        "ncu": subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1],
        "metrics_missing_from_csv": missing,
        "legacy_metrics": legacy,
    }
    with open(os.path.join(out, "ncu_fixture.json"), "w") as fh:
        json.dump(record, fh, indent=2)
    print(f"{'kernel':22} {'ld sec/req':>10} {'st sec/req':>10} {'smem ld wf/req':>14} {'branch eff %':>12}")
    for name, m in legacy.items():
        def f(v):
            return "-" if v is None else f"{v:.2f}"
        print(f"{name:22} {f(m['global_ld_sectors_per_request']):>10} {f(m['global_st_sectors_per_request']):>10} "
              f"{f(m['shared_ld_wavefronts_per_request']):>14} {f(m['branch_efficiency']):>12}")
    print("missing metrics:", missing or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
