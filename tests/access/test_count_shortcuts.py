"""The end-of-run counts' shortcuts give what the plain formulas give (issue #27's speed point):
per-key least and greatest lane strides by runs of sorted keys (no ``ufunc.at``), the block-to-block
shift as the least lowest set bit (the gcd with 32), an address token parsed once, and the rows of
an execution alike counted once (lanes, lane strides, figures)."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from cudalens.access import memory as M
from cudalens.access.ptx_counts import _key_strides, _per_execution, _row_strides
from cudalens.access.ptx_exec import Launch, _address_parts
from cudalens.access.ptx_run import run_variants
from cudalens.compiled.ptx import parse_ptx


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
    lo, hi = _key_strides(*_row_strides(a, act), key, n)
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


def _per_execution_plain(V: int, row_variant: np.ndarray, space: str, width: int, calls: list) -> list[list]:
    """Per (execution, variant): warps present, active lanes, least and greatest lane stride, figure and
    ideal, every present row modelled on its own."""
    big = np.iinfo(np.int64).max
    out: list[list] = [[0, 0, big, -big, 0, 0] for _ in range(len(calls) * V)]
    for e, (addr, act, present, _vs, _ids) in enumerate(calls):
        a, on = addr.reshape(-1, 32), act.reshape(-1, 32)
        for r in np.flatnonzero(present).tolist():
            k = out[e * V + int(row_variant[r])]
            k[0] += 1
            k[1] += int(on[r].sum())
            for j in range(31):
                if on[r, j] and on[r, j + 1]:
                    k[2], k[3] = min(k[2], int(a[r, j + 1] - a[r, j])), max(k[3], int(a[r, j + 1] - a[r, j]))
            fig = (M.global_sectors(a[r:r + 1], on[r:r + 1], width, distinct_ideal=True) if space == "global"
                   else M.shared_wavefronts(a[r:r + 1], on[r:r + 1], width)[1:])
            k[4] += int(fig[0][0])
            k[5] += int(fig[1][0])
    return out


@pytest.mark.parametrize(("space", "width"), [("global", 4), ("global", 8), ("shared", 4), ("shared", 16)])
def test_per_execution_counts_rows_alike_once_with_every_rows_figures(space, width):
    """Rows alike (the same lanes active, moved by a multiple of 128 bytes) share their lanes, lane strides
    and figures, worked out once; rows moved by less, or with other lanes active, keep their own."""
    rng = np.random.default_rng(width)
    V, rows, executions = 4, 24, 12  # (over memory._DEDUP_ROWS present rows: the classes are used)
    base = rng.integers(0, 1 << 12, size=(rows, 32)) * width
    base[::3] = np.arange(32) * width * rng.integers(1, 9, size=(len(base[::3]), 1))  # strided rows
    calls = []
    for e in range(executions):
        moves = rng.choice([0, 128, -256, 4 * width, 1 << 12], size=(V, 1, 1))  # some by less than 128 bytes
        addr = (base[None] + moves + 128 * rng.integers(0, 3, size=(V, rows, 1))).reshape(-1)
        act = rng.random((V, rows, 32)) < 0.85
        act[:, ::5] = act[:1, ::5]  # every variant the same lanes on some rows
        act[e % V, 2] = False
        present = rng.random(V * rows) < 0.9
        calls.append((addr, act.reshape(-1), present, [], []))
    row_variant = np.repeat(np.arange(V), rows)
    m = types.SimpleNamespace(V=V, row_variant=row_variant, launch=types.SimpleNamespace(blocks=((0, 0, 0),)))
    count, lanes, lo, hi, _shifts, num, ideal = _per_execution(m, space, width, calls)
    plain = _per_execution_plain(V, row_variant, space, width, calls)
    assert count.tolist() == [p[0] for p in plain] and lanes.tolist() == [p[1] for p in plain]
    assert num.tolist() == [p[4] for p in plain] and ideal.tolist() == [p[5] for p in plain]
    if space == "global":
        assert lo.tolist() == [p[2] for p in plain] and hi.tolist() == [p[3] for p in plain]
    seen: list[int] = []
    model = M.row_model(space, width)
    M.distinct_rows(lambda a, on: (seen.append(len(a)), model(a, on))[1], *(np.concatenate(x) for x in zip(
        *((c[0].reshape(-1, 32)[c[2]], c[1].reshape(-1, 32)[c[2]]) for c in calls))), width)
    assert seen[0] < sum(int(c[2].sum()) for c in calls)  # rows alike were there, and modelled once


LATER_LOADED = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r3, 0;
$L__BB0_1:
	mul.wide.u32 	%rd2, %r1, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.u32 	[%rd3], %r3;
	ld.global.u32 	%r1, [%rd3];
	add.s32 	%r3, %r3, 1;
	setp.lt.s32 	%p1, %r3, 3;
	@%p1 bra 	$L__BB0_1;
	ret;
}
"""


def test_a_record_takes_the_taint_of_a_later_execution():
    """A store first executed at an address of thread indices, then (next iteration) at one loaded per lane:
    its record says per-lane data (the records' taint kept with their execution sets only skips what cannot rise)."""
    fn = parse_ptx(LATER_LOADED).entries[0]
    variants = ((1, {}), (2, {}), (0, {}))
    res = run_variants(parse_ptx(LATER_LOADED), fn, Launch((2, 1, 1), (64, 1, 1), ((0, 0, 0), (1, 0, 0)), {}, 1, 8,
                                                           6000, variants=variants))
    store = next(i.index for i in fn.instructions if i.base == "st")
    for r in res:
        rec = r.mem[store]
        assert rec.requests == 3 * 4 and rec.taint == 2 and "per-lane value loaded" in rec.why


@pytest.mark.parametrize(("space", "width"), [("global", 4), ("global", 12), ("shared", 8)])
def test_executions_alike_are_worked_out_once_with_each_ones_figures(space, width, monkeypatch):
    """Executions holding the same lanes (one register's, with offsets added; the same active and present
    lanes) at offsets a multiple of 128 bytes apart (the width dividing it; else the same offset) are
    worked out once; each gets the figures, block shifts included, of its own worked out alone."""
    import cudalens.access.ptx_counts as C

    rng = np.random.default_rng(width)
    V, rows = 3, 24
    base = (rng.integers(0, 1 << 10, size=(V * rows, 32)) * 4).reshape(-1)
    base[: 32 * 8] = np.arange(32 * 8) * 4  # rows of consecutive words too
    act = rng.random(V * rows * 32) < 0.8
    other_act = rng.random(V * rows * 32) < 0.5
    present = rng.random(V * rows) < 0.9
    offsets = [0, 128, 4, 256 + 4, 0, -384, 12, 12 + 1152]
    calls = [((base, off), act, present, [], []) for off in offsets]
    calls += [((base, 0), other_act, present, [], []), (base, act, present, [], []), (base + 128, act, present, [], [])]
    row_variant = np.repeat(np.arange(V), rows)
    m = types.SimpleNamespace(V=V, row_variant=row_variant,
                              launch=types.SimpleNamespace(blocks=((0, 0, 0), (1, 0, 0))))  # block shifts
    worked: list[int] = []
    real = C._chunk
    monkeypatch.setattr(C, "_chunk", lambda m, space, width, part: (worked.append(len(part)), real(m, space, width, part))[1])
    got = _per_execution(m, space, width, calls)
    alone = [real(m, space, width, [(c[0][0] + c[0][1] if isinstance(c[0], tuple) else c[0], *c[1:])])
             for c in calls]
    for j, x in enumerate(got):
        if x is None:
            assert all(a[j] is None for a in alone)
        else:
            assert x.tolist() == [v for a in alone for v in a[j].tolist()]
    # offsets 0 ~ 128 ~ -384, 4 ~ 260, 12 ~ 1164 (width 12: each its own but the two 0s); the other active
    # lanes their own; the bare array is offset 0's; the moved copy another array
    assert sum(worked) == {4: 3, 12: 7, 8: 3}[width] + 2


def test_a_synthetic_loaded_value_is_the_plain_remainder():
    """A load's synthetic value (the remainder worked out by a division by a constant) is the plain
    ``% 61`` of its hash, for any address, wrapping products and negative hashes too; 0 in seed 0's lanes."""
    from cudalens.access.ptx_memory import _SYNTHETIC_MOD, _synthetic

    rng = np.random.default_rng(61)
    lanes = 4096
    addr = np.concatenate([rng.integers(0, 1 << 62, size=lanes - 6), [0, 4, (1 << 48) + 12, (1 << 63) - 1, -4, -(1 << 63)]])
    seed = np.repeat(np.array([1, 2, 0, 5], dtype=np.int64), lanes // 4)
    m = types.SimpleNamespace(seed_term=seed * 7919, zero_seed=[(2 * lanes // 4, 3 * lanes // 4)])
    with np.errstate(all="ignore"):
        plain = ((addr >> 2) * 2654435761 + seed * 7919) % _SYNTHETIC_MOD
        plain[2 * lanes // 4:3 * lanes // 4] = 0
        got = _synthetic(m, addr.astype(np.int64), "u32")
    assert got.dtype == np.int64 and got.tolist() == plain.tolist() and len(set(plain.tolist())) == _SYNTHETIC_MOD
    assert _synthetic(m, addr.astype(np.int64), "f32").tolist() == plain.astype(np.float64).tolist()


@pytest.mark.parametrize("seed", range(3))
def test_lanes_and_rows_on_are_the_plain_counts(seed):
    """memory.lanes_on and rows_on (a row's 32 lanes as four words) give count_nonzero and any per row,
    full and empty rows too, and the plain answer for another shape or a strided view."""
    rng = np.random.default_rng(seed)
    act = rng.random((600, 32)) < rng.choice([0.0, 0.03, 0.5, 0.97, 1.0], size=(600, 1))
    assert M.lanes_on(act).tolist() == np.count_nonzero(act, axis=1).tolist()
    assert M.lanes_on(act).dtype == np.int64 and {0, 32} <= set(M.lanes_on(act).tolist())
    assert M.rows_on(act).tolist() == act.any(axis=1).tolist()
    for other in (act[:, :16], act[::2], rng.random((5, 64)) < 0.5):
        assert M.lanes_on(other).tolist() == np.count_nonzero(other, axis=1).tolist()
        assert M.rows_on(other).tolist() == other.any(axis=1).tolist()
