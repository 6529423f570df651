"""The per-row reductions of cudalens.access.memory that replace numpy's per-row reduction loops
(row_count, row_any) give numpy's answers, for every row width and layout they take."""

import numpy as np
import pytest

from cudalens.access.memory import row_any, row_count


@pytest.mark.parametrize("width", [1, 3, 8, 16, 31, 32, 64, 96])
def test_row_count_and_any_are_numpys(width):
    rng = np.random.default_rng(width)
    x = rng.random((300, width)) < rng.random((300, 1))  # rows from none to all set (over memory._WORD_ROWS)
    x[0], x[1] = False, True
    for arr in (x, x[:, : width // 2 * 2], x[::2], x[:9]):  # contiguous, column and row slices, few rows
        assert row_count(arr).tolist() == arr.sum(axis=1).tolist()
        assert row_count(arr).dtype == arr.sum(axis=1).dtype
        assert row_any(arr).tolist() == arr.any(axis=1).tolist()
