"""A program whose GPU work is partly done by a child Python process (cudalens profile's child-process check).

python child_process.py  -- the parent runs a CuPy kernel, then starts `python -c ...` that runs one too.
The parent's work is traced; the report says in one line that the child was not.
"""

import subprocess
import sys

import cupy as cp


def main() -> int:
    x = cp.arange(1 << 20, dtype=cp.float32)
    parent = float((x * 2).sum())
    child = subprocess.run([sys.executable, "-c", "import cupy as cp; print(float(cp.ones(1 << 20).sum()))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    print(f"parent {parent:.0f}, child {child}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
