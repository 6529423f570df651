"""The end-of-run counts' shortcuts give what the plain formulas give (issue #27's speed point):
per-key least and greatest lane strides by runs of sorted keys (no ``ufunc.at``), the block-to-block
shift as the least lowest set bit (the gcd with 32), and an address token parsed once."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cudalens.access import memory as M
from cudalens.access.ptx_counts import _lane_strides
from cudalens.access.ptx_exec import _address_parts


def _strides_plain(a: np.ndarray, act: np.ndarray, key: np.ndarray, n: int) -> tuple[list, list]:
    big = np.iinfo(np.int64).max
    lo, hi = [big] * n, [-big] * n
    for row, on, k in zip(a.tolist(), act.tolist(), key.tolist()):
        for j in range(31):
            if on[j] and on[j + 1]:
                lo[k], hi[k] = min(lo[k], row[j + 1] - row[j]), max(hi[k], row[j + 1] - row[j])
    return lo, hi


@pytest.mark.parametrize("seed", range(4))
def test_lane_strides_per_key_are_the_plain_least_and_greatest(seed):
    rng = np.random.default_rng(seed)
    rows, n = 60, 24
    key = np.sort(rng.integers(0, n, size=rows))  # some keys with no row, some with several
    a = np.cumsum(rng.integers(-8, 64, size=(rows, 32)) * rng.choice([1, 4, 16], size=(rows, 1)), axis=1)
    act = rng.random((rows, 32)) < rng.choice([0.0, 0.3, 0.9, 1.0], size=(rows, 1))  # rows with no pair too
    lo, hi = _lane_strides(a, act, key, n)
    plain_lo, plain_hi = _strides_plain(a, act, key, n)
    assert lo.tolist() == plain_lo and hi.tolist() == plain_hi
    assert len({k for k in key.tolist()}) > 5 and any(lo_k > hi_k for lo_k, hi_k in zip(plain_lo, plain_hi))


@pytest.mark.parametrize("seed", range(4))
def test_block_shifts_are_the_gcd_with_32(seed):
    rng = np.random.default_rng(seed)
    executions, variants, blocks, lanes = 5, 3, 2, 64
    base = rng.integers(0, 1 << 20, size=(executions, variants, 1, lanes))
    step = rng.choice([0, 4, 8, 12, 16, 32, 36, 100, -4], size=(executions, variants, 1, 1))
    addr = np.concatenate([base, base + step + 32 * rng.integers(-2, 3, size=base.shape)], axis=2)
    addr[0, 0, 1, 7] += 2  # one lane moves by 2 bytes: gcd 2 there
    act = rng.random(addr.shape) < 0.8
    act[1, 1] = False  # never both active: 32
    act[0, 0, :, 7] = True
    got = M.block_shifts(addr.ravel(), act.ravel(), executions, variants, blocks)
    plain = []
    for e in range(executions):
        for v in range(variants):
            g = 32
            for lane in range(lanes):
                if act[e, v, 0, lane] and act[e, v, 1, lane]:
                    g = math.gcd(g, int(addr[e, v, 1, lane] - addr[e, v, 0, lane]) % 32)
            plain.append(g)
    assert got.tolist() == plain and {2, 32} <= set(plain) and len(set(plain)) > 2


@pytest.mark.parametrize("tok", ["[%rd4]", "[%rd4+16]", "[%rd4+-8]", "[%r7-12]", "[ %rd1 + 4 ]", "[_ZN5sdata]",
                                 "[_ZN5sdata+2048]", "[sum_param_0]", "[%rd2+0x10]"])
def test_an_address_token_is_its_base_and_offset(tok):
    base, off = _address_parts(tok)
    assert (base, off) == {"[%rd4]": ("%rd4", 0), "[%rd4+16]": ("%rd4", 16), "[%rd4+-8]": ("%rd4", -8),
                           "[%r7-12]": ("%r7", -12), "[ %rd1 + 4 ]": ("%rd1", 4), "[_ZN5sdata]": ("_ZN5sdata", 0),
                           "[_ZN5sdata+2048]": ("_ZN5sdata", 2048), "[sum_param_0]": ("sum_param_0", 0),
                           "[%rd2+0x10]": ("%rd2", 16)}[tok]
    assert _address_parts(tok) == (base, off)  # (cached: the same answer again)


def test_distinct_rows_model_each_class_of_rows_once():
    """Rows whose active lanes move by one multiple of 128 bytes (inactive lanes anywhere) are one class:
    modelled once, each row given its class's figures; a move by less is another class."""
    rng = np.random.default_rng(27)
    base = rng.integers(0, 1 << 16, size=(80, 32)) * 4
    act = rng.random((80, 32)) < 0.7
    act[:, 0] = False  # the first lane never active: its address is not the row's
    act[3] = False
    moved = base + 128 * rng.integers(-4, 5, size=(80, 1))
    nudged = base + rng.choice([4, 8, 32, 64], size=(80, 1))
    addr = np.concatenate([base, moved, nudged, base])
    addr[:, 0] = rng.integers(0, 1 << 20, size=len(addr))  # inactive lanes at random addresses
    active = np.concatenate([act] * 4)
    seen = []

    def spy(a, on):  # a row's figure: its active lanes' pattern, the same under a move by 128 bytes
        seen.append(len(a))
        out = []
        for row, m in zip(a.tolist(), on.tolist()):
            lanes = [x for x, k in zip(row, m) if k]
            low = min(lanes) if lanes else 0
            out.append(hash((tuple(m), tuple(x - low for x in lanes), low % 128)))
        return (np.asarray(out, dtype=np.int64),)

    got = M.distinct_rows(spy, addr, active, 4)[0]
    assert got.tolist() == spy(addr, active)[0].tolist()
    classes = len(set(spy(addr, active)[0].tolist()))
    assert seen[0] == classes and classes <= 2 * 80 + 1  # base, moved and the copy of base share classes
