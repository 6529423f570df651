"""Launches a kernel, then fails: cudalens profile reports the program's own exit status."""
import sys

import cupy as cp

cp.arange(1024, dtype=cp.float32).sum()
sys.exit(3)
