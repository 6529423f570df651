"""Test program: does a little work in `busy`, prints, then fails with exit status 3."""
import sys


def busy(k):
    return sum(i * i for i in range(k))


print("partial result", busy(50_000))
print("about to fail", file=sys.stderr)
sys.exit(3)
