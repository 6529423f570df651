"""Seconds from `cudalens profile`'s start to the launch of the traced program (its first Popen).

Usage: PYTHONPATH=SRC python3 benchmarks/profile/profile_startup.py   -- prints one number. Runs
`cudalens profile -- python3 -c pass` in-process; without a GPU the traced child stops at once, which
does not change the time before its launch. Compare trees by pointing PYTHONPATH at each one's src.
"""

import subprocess
import sys
import time

T = {"t0": time.perf_counter()}
from cudalens.cli import main  # noqa: E402

_Popen = subprocess.Popen


class _First(_Popen):  # type: ignore[misc, valid-type]
    def __init__(self, *args, **kwargs):
        T.setdefault("launch", time.perf_counter() - T["t0"])
        super().__init__(*args, **kwargs)


subprocess.Popen = _First  # type: ignore[misc]
main(["profile", "--format", "json", "-o", "/dev/null", "--", sys.executable, "-c", "pass"])
print(round(T["launch"], 3))
