"""A small program with one known hot spot, for `cudalens assess` (our own example).

It smooths a 1-D signal many times with a 3-point stencil written as a plain Python loop
(``smooth``: the hot function, an obvious data-parallel candidate for a GPU), after a cheap
set-up (``make_signal``) and before a cheap summary (``summarize``).

    cudalens assess -- python examples/assess/hot.py [SIZE] [STEPS]
"""

from __future__ import annotations

import math
import sys


def make_signal(size: int) -> list[float]:
    """A sine wave with a little deterministic noise: cheap, runs once."""
    return [math.sin(i * 0.01) + 0.1 * ((i * 7919) % 13 - 6) / 6 for i in range(size)]


def smooth(values: list[float], steps: int) -> list[float]:
    """The hot spot: `steps` passes of a 3-point average, every element independent per pass."""
    current = values
    for _ in range(steps):
        nxt = current[:]
        for i in range(1, len(current) - 1):
            nxt[i] = (current[i - 1] + current[i] + current[i + 1]) / 3.0
        current = nxt
    return current


def summarize(values: list[float]) -> tuple[float, float]:
    """Mean and maximum: cheap, runs once."""
    return sum(values) / len(values), max(values)


def main(argv: list[str]) -> int:
    size = int(argv[1]) if len(argv) > 1 else 20_000
    steps = int(argv[2]) if len(argv) > 2 else 20
    mean, peak = summarize(smooth(make_signal(size), steps))
    print(f"size {size} elements, {steps} steps: mean {mean:.6f}, max {peak:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
