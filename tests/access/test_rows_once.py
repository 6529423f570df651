"""memory.rows_once: the warp models run once for the rows parameter trials share, with the figures
of running them on every row (issue #27's speed point: 8 trials where there were 3)."""

from __future__ import annotations

import numpy as np
import pytest

from cudalens.access import memory as M

V, ROWS, EXEC = 4, 6, 12  # (over memory._DEDUP_ROWS rows: below it the model runs on every row)


def _layout(rng: np.random.Generator, share: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(addresses, active, present) of EXEC executions x V variants x ROWS warps; where ``share[e, v]``,
    variant v's rows of execution e repeat variant 0's (a trial that does not change the access)."""
    a = rng.integers(0, 4096, size=(EXEC, V, ROWS, 32)) * 4
    act = rng.random((EXEC, V, ROWS, 32)) < 0.8
    pres = rng.random((EXEC, V, ROWS)) < 0.9
    for e, v in zip(*np.nonzero(share)):
        a[e, v], act[e, v], pres[e, v] = a[e, 0], act[e, 0], pres[e, 0]
    a[0, 1, 0, 3] += 0 if act[0, 1, 0, 3] else 128  # an inactive lane's address does not make rows differ
    return a.reshape(-1, 32), act.reshape(-1, 32), pres.reshape(-1)


@pytest.mark.parametrize("space,width", [("global", 4), ("global", 8), ("global", 16), ("shared", 4), ("shared", 8),
                                         ("shared", 16)])
def test_rows_once_gives_every_row_its_own_figures(space, width):
    rng = np.random.default_rng(7)
    share = rng.random((EXEC, V)) < 0.6
    share[:, 0] = False
    a, act, pres = _layout(rng, share)
    model = M.warp_model(space, width)
    calls: list[int] = []

    def counted(x, y):
        calls.append(len(x))
        return model(x, y)

    got = M.rows_once(counted, a, act, pres, V, ROWS)
    want = model(a[pres], act[pres])
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    shared_rows = int(pres.reshape(EXEC, V, ROWS)[share].sum())
    assert shared_rows and calls == [int(pres.sum()) - shared_rows]  # the shared trials' rows were not modelled


def test_a_trial_that_moves_one_active_lane_is_modelled_again():
    rng = np.random.default_rng(3)
    share = np.zeros((EXEC, V), dtype=bool)
    share[:, 1:] = True
    a, act, pres = _layout(rng, share)
    a3, act3 = a.reshape(EXEC, V, ROWS, 32), act.reshape(EXEC, V, ROWS, 32)
    act3[2, 3, 1, 5] = True
    a3[2, 3, 1, 5] += 4  # one lane of variant 3 in execution 2 reads the next word
    got = M.rows_once(M.warp_model("shared", 4), a, act, pres, V, ROWS)
    want = M.warp_model("shared", 4)(a[pres], act[pres])
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
